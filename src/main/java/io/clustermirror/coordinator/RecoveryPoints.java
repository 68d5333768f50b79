package io.clustermirror.coordinator;

import io.clustermirror.fetch.DataPlane;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.RecoveryPoint;
import io.clustermirror.mirror.RecoveryPoint.Sighting;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.jboss.logging.Logger;

/**
 * The recovery point of every partition a mirror has not stopped (issue 21, decisions §44): what each end was when last
 * read, the last sighting of the source's end (a read of it, or a Fetch answer that brought its high watermark), and
 * the timestamp of the source record at the destination end, the oldest not mirrored. That timestamp comes for free
 * from the data plane when it has fetched that record; else it is read once per offset (one Fetch per source leader
 * for all of a mirror's partitions) and kept until the destination end moves, so a PAUSED partition under a live
 * producer costs one read. Evaluated by the 5 s sampler (the metrics) and by describe (with the ends it has just read);
 * the RPO itself is computed when asked, against the clock then ({@link RecoveryPoint#of}). Safe from any thread.
 */
final class RecoveryPoints {

    private static final Logger LOGGER = Logger.getLogger(RecoveryPoints.class);

    /** Reads the timestamps of the source records at the given offsets (a partition that cannot be read is left out). */
    @FunctionalInterface
    interface TimestampReader {
        Map<MirrorPartition, Long> read(Map<MirrorPartition, Long> offsets) throws Exception;
    }

    /**
     * A partition's ends as just read: the source's end (-1: could not be read) and the destination's (-1: unknown), and
     * what its data plane says of it when it is in one (else null).
     */
    record Ends(long sourceEnd, long destinationEnd, DataPlane.Counts counts) {}

    /** What the RPO of a partition is computed from, when asked. */
    record Inputs(long sourceEnd, long destinationEnd, long unmirroredTimestamp, Sighting sighting) {

        RecoveryPoint at(long nowMs) {
            return RecoveryPoint.of(nowMs, sourceEnd, destinationEnd, unmirroredTimestamp, sighting);
        }
    }

    /** The timestamp of the source record at {@code offset}. */
    private record Known(long offset, long timestamp) {}

    private final Map<String, Map<MirrorPartition, Sighting>> sightings = new ConcurrentHashMap<>();
    private final Map<String, Map<MirrorPartition, Known>> timestamps = new ConcurrentHashMap<>();
    private final Map<String, Map<MirrorPartition, Inputs>> published = new ConcurrentHashMap<>();

    /**
     * The inputs of each partition's RPO from the ends just read at {@code nowMs}: notes the sightings, and reads the
     * timestamps still missing through {@code reader} (blocking; a failed read leaves those partitions' RPO unknown).
     */
    Map<MirrorPartition, Inputs> evaluate(
            String mirror, Map<MirrorPartition, Ends> ends, long nowMs, TimestampReader reader) {
        Map<MirrorPartition, Sighting> seen = sightings.computeIfAbsent(mirror, m -> new ConcurrentHashMap<>());
        Map<MirrorPartition, Known> known = timestamps.computeIfAbsent(mirror, m -> new ConcurrentHashMap<>());
        Map<MirrorPartition, Long> missing = new HashMap<>();
        ends.forEach((p, e) -> {
            Sighting sighting = e.sourceEnd() >= 0 ? new Sighting(e.sourceEnd(), nowMs) : null;
            if (e.counts() != null && e.counts().sourceSeenAtMs() >= 0) {
                sighting = Sighting.later(
                        sighting,
                        new Sighting(
                                e.counts().sourceHighWatermark(), e.counts().sourceSeenAtMs()));
            }
            if (sighting != null) {
                seen.merge(p, sighting, Sighting::later);
            }
            long fromDataPlane = e.counts() == null ? -1 : e.counts().unmirroredTimestampAt(e.destinationEnd());
            if (fromDataPlane >= 0) {
                known.put(p, new Known(e.destinationEnd(), fromDataPlane));
            } else if (e.destinationEnd() >= 0
                    && e.sourceEnd() > e.destinationEnd()
                    && timestampAt(known, p, e.destinationEnd()) < 0) {
                missing.put(p, e.destinationEnd());
            }
        });
        if (!missing.isEmpty()) {
            try {
                reader.read(missing).forEach((p, timestamp) -> known.put(p, new Known(missing.get(p), timestamp)));
            } catch (Exception e) {
                // the source answered its end a moment ago but not this read: those RPOs stay unknown (absent from
                // describe and the metrics) until a later read succeeds
                LOGGER.debugf("Mirror %s: timestamps of %d source record(s) not read: %s", mirror, missing.size(), e);
            }
        }
        Map<MirrorPartition, Inputs> inputs = new HashMap<>();
        ends.forEach((p, e) -> inputs.put(
                p,
                new Inputs(e.sourceEnd(), e.destinationEnd(), timestampAt(known, p, e.destinationEnd()), seen.get(p))));
        return inputs;
    }

    private static long timestampAt(Map<MirrorPartition, Known> known, MirrorPartition p, long offset) {
        Known k = known.get(p);
        return k != null && k.offset() == offset ? k.timestamp() : -1;
    }

    /** Publishes a sampler's evaluation of all of a mirror's active partitions (what the metrics read). */
    void publish(String mirror, Map<MirrorPartition, Inputs> inputs) {
        published.put(mirror, Map.copyOf(inputs));
        Set<MirrorPartition> active = inputs.keySet();
        forget(mirror, p -> !active.contains(p));
    }

    /** Each active partition's RPO at {@code nowMs} as last sampled (unknown ones left out); any thread, no waiting. */
    Map<MirrorPartition, RecoveryPoint> current(String mirror, long nowMs) {
        Map<MirrorPartition, RecoveryPoint> rpos = new HashMap<>();
        published.getOrDefault(mirror, Map.of()).forEach((p, in) -> {
            RecoveryPoint rpo = in.at(nowMs);
            if (rpo != null) {
                rpos.put(p, rpo);
            }
        });
        return rpos;
    }

    /** The last sighting of the partition's source end, or null. */
    Sighting lastSighting(String mirror, MirrorPartition partition) {
        return sightings.getOrDefault(mirror, Map.of()).get(partition);
    }

    /** Drops what is known of mirrors other than {@code mirrors}. */
    void retain(Collection<String> mirrors) {
        sightings.keySet().retainAll(mirrors);
        timestamps.keySet().retainAll(mirrors);
        published.keySet().retainAll(mirrors);
    }

    private void forget(String mirror, Predicate<MirrorPartition> gone) {
        sightings.getOrDefault(mirror, Map.of()).keySet().removeIf(gone);
        timestamps.getOrDefault(mirror, Map.of()).keySet().removeIf(gone);
    }
}
