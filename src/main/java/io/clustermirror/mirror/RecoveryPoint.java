package io.clustermirror.mirror;

/**
 * A partition's recovery point objective as a time (issue 21): how old the oldest source record is that the destination
 * does not hold yet, so what a failover now would lose, in milliseconds. Pure; the rules:
 *
 * <ul>
 *   <li>the destination end is at the source's end: 0, exact, also while the topic is idle;
 *   <li>the source's end is above it: now minus the timestamp of the source record at the destination end (the oldest
 *       not mirrored), exact; unknown until that record's timestamp has been read;
 *   <li>the source cannot be read: nobody knows what it holds since it was last seen, so an upper bound, the time since
 *       the last sighting of its end, or the age of the oldest record not mirrored if the destination was behind that
 *       sighting and that is larger ({@code bound} true); unknown when the source was never seen.
 * </ul>
 *
 * Timestamps are the log's: a CreateTime topic's are the producers' clocks (a producer whose clock runs ahead makes
 * the RPO look smaller, one behind larger), a LogAppendTime topic's the source broker's.
 *
 * @param millis the RPO in milliseconds, never negative
 * @param bound whether it is an upper bound (the source could not be read), not a measurement
 */
public record RecoveryPoint(long millis, boolean bound) {

    public static final RecoveryPoint ZERO = new RecoveryPoint(0, false);

    /** The source's end last read, and when (wall clock, ms). */
    public record Sighting(long sourceEnd, long atMs) {

        /** The later of two sightings (either may be null). */
        public static Sighting later(Sighting a, Sighting b) {
            if (a == null) {
                return b;
            }
            return b == null || a.atMs() >= b.atMs() ? a : b;
        }
    }

    public RecoveryPoint {
        millis = Math.max(0, millis);
    }

    /**
     * The RPO now, or null when it cannot be told (the destination end unknown, the timestamp of the oldest record not
     * mirrored not read yet, or a source never seen).
     *
     * @param sourceEnd the source's end as just read; -1 when it could not be read
     * @param destinationEnd the destination's end; -1 when unknown
     * @param unmirroredTimestamp the timestamp of the source record at {@code destinationEnd}; -1 when not read yet (or
     *     the record has none)
     * @param last the last sighting of the source's end; null when never seen
     */
    public static RecoveryPoint of(
            long nowMs, long sourceEnd, long destinationEnd, long unmirroredTimestamp, Sighting last) {
        if (destinationEnd < 0) {
            return null;
        }
        if (sourceEnd >= 0) {
            if (destinationEnd >= sourceEnd) {
                return ZERO;
            }
            return unmirroredTimestamp < 0 ? null : new RecoveryPoint(nowMs - unmirroredTimestamp, false);
        }
        if (last == null) {
            return null;
        }
        long sinceSeen = nowMs - last.atMs();
        long oldest = last.sourceEnd() > destinationEnd && unmirroredTimestamp >= 0 ? nowMs - unmirroredTimestamp : 0;
        return new RecoveryPoint(Math.max(sinceSeen, oldest), true);
    }

    public double seconds() {
        return millis / 1000.0;
    }
}
