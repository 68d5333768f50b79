package io.clustermirror.fetch;

/**
 * How long a partition's trouble has lasted, seen again and again (no leader of it in the destination's view, no
 * producer id for it): a partition that stays in it past a bound fails with the reason. Sightings further apart than a
 * gap (the partition idle meanwhile) start the count again, so that a stale start never fails a partition on its first
 * sighting. Fetcher thread; times on the pipeline's clock.
 */
final class TroubleSpan {
    private boolean counting;
    private long since;
    private long last;

    /**
     * A sighting at {@code now}: how long the trouble has lasted, or 0 when this sighting starts the count (the first,
     * one more than {@code maxGapNanos} after the last, or one that does not count: then no count runs).
     *
     * @param counts whether this sighting counts (a partition with nothing waiting on it starts no count)
     */
    long seen(long now, long maxGapNanos, boolean counts) {
        if (!counts || !counting || now - last > maxGapNanos) {
            counting = counts;
            since = now;
            last = now;
            return 0;
        }
        last = now;
        return now - since;
    }

    /** The trouble is over. */
    void clear() {
        counting = false;
    }
}
