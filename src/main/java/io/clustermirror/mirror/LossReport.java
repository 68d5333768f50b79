package io.clustermirror.mirror;

import java.time.Instant;

/**
 * What a stop may have left behind on the source, per partition (issue 21): taken when the partition left the data
 * plane, kept with its STOPPED status in {@code __mirror_state}. When the source could be read at the stop, the records
 * not mirrored are counted exactly; when it could not (an unplanned failover), they are counted from the last time the
 * service saw the source's end, and the source may have taken more since: the RPO is then an upper bound.
 *
 * @param stoppedAt when the report was taken
 * @param sourceReachable whether the source's end could be read at the stop
 * @param lastSourceEnd the source's end last seen (at the stop when reachable); -1 when never seen
 * @param lastSourceEndSeenAt when it was seen; null when never
 * @param destinationEnd the destination's end at the stop; -1 when it could not be read
 * @param records records between the destination end and the last source end seen (at least that many are not on the
 *     destination); -1 when either end is unknown
 * @param rpoMs the recovery point at the stop (see {@link RecoveryPoint}); -1 when it could not be told
 * @param rpoBound whether {@code rpoMs} is an upper bound rather than a measurement
 */
public record LossReport(
        Instant stoppedAt,
        boolean sourceReachable,
        long lastSourceEnd,
        Instant lastSourceEndSeenAt,
        long destinationEnd,
        long records,
        long rpoMs,
        boolean rpoBound) {

    /**
     * The report of a partition stopped at {@code nowMs}, from its ends read at the stop ({@code sourceEnd} -1 when the
     * source could not be read), the last sighting of the source's end (null: never) and the RPO then (null: unknown).
     */
    public static LossReport of(
            long nowMs, long sourceEnd, long destinationEnd, RecoveryPoint.Sighting last, RecoveryPoint rpo) {
        RecoveryPoint.Sighting seen = sourceEnd >= 0 ? new RecoveryPoint.Sighting(sourceEnd, nowMs) : last;
        long records = seen != null && destinationEnd >= 0 ? Math.max(0, seen.sourceEnd() - destinationEnd) : -1;
        return new LossReport(
                Instant.ofEpochMilli(nowMs),
                sourceEnd >= 0,
                seen == null ? -1 : seen.sourceEnd(),
                seen == null ? null : Instant.ofEpochMilli(seen.atMs()),
                destinationEnd,
                records,
                rpo == null ? -1 : rpo.millis(),
                rpo != null && rpo.bound());
    }
}
