package io.clustermirror.mirror;

import java.util.ArrayDeque;

/**
 * A sliding window over one partition's data-plane samples (decisions §NEW): the rates of the last {@code windowMs}
 * (bytes and records the destination acknowledged, offsets it grew by, and how fast the lag shrank), and the time to
 * catch up from them. Pure; not thread-safe (one sampler feeds it, readers get the immutable {@link Rates}).
 */
public final class CatchUpWindow {

    /** The span rates are measured over: recent enough to follow a throttle change, long enough to smooth fetches. */
    public static final long WINDOW_MS = 30_000;

    /** Rates need at least two samples this far apart; before that they are unknown. */
    public static final long MIN_SPAN_MS = 1_000;

    /**
     * One sample of a partition in the data plane.
     *
     * @param sourceEnd the source high watermark the data plane last saw (-1: not known yet)
     * @param destinationEnd the destination end the data plane has acknowledged
     * @param records records acknowledged since the partition entered the data plane
     * @param bytes log bytes acknowledged since then
     */
    public record Sample(long atMs, long sourceEnd, long destinationEnd, long records, long bytes) {}

    /**
     * Rates over the window, per second.
     *
     * @param destinationOffsetsPerSecond how fast the destination's end grew (offsets, with compaction holes and markers)
     * @param catchUpPerSecond how fast the lag shrank (the destination's growth minus the source's; negative while the lag
     *     grows); null when the source end was not known at either end of the window
     */
    public record Rates(
            double bytesPerSecond,
            double recordsPerSecond,
            double destinationOffsetsPerSecond,
            Double catchUpPerSecond,
            long spanMs) {}

    private final long windowMs;
    private final ArrayDeque<Sample> samples = new ArrayDeque<>();

    public CatchUpWindow() {
        this(WINDOW_MS);
    }

    public CatchUpWindow(long windowMs) {
        if (windowMs < MIN_SPAN_MS) {
            throw new IllegalArgumentException("a window shorter than " + MIN_SPAN_MS + " ms measures nothing");
        }
        this.windowMs = windowMs;
    }

    /**
     * Adds the newest sample and drops those older than the window before it. A sample going back in time or in its
     * counters (the partition left the data plane and came back with new counters) starts the window afresh.
     */
    public void add(Sample sample) {
        Sample last = samples.peekLast();
        if (last != null
                && (sample.atMs() < last.atMs()
                        || sample.records() < last.records()
                        || sample.bytes() < last.bytes()
                        || sample.destinationEnd() < last.destinationEnd())) {
            samples.clear();
        }
        samples.addLast(sample);
        while (samples.size() > 2 && samples.peekFirst().atMs() < sample.atMs() - windowMs) {
            samples.pollFirst();
        }
    }

    public void clear() {
        samples.clear();
    }

    /**
     * The rates from the oldest sample in the window to the newest; null while they span less than {@value
     * #MIN_SPAN_MS} ms. The catch-up rate is measured from the oldest sample that knew the source's end (the first
     * samples of a partition new in the data plane may come before its first Fetch answer).
     */
    public Rates rates() {
        Sample first = samples.peekFirst();
        Sample last = samples.peekLast();
        if (first == null || last.atMs() - first.atMs() < MIN_SPAN_MS) {
            return null;
        }
        long spanMs = last.atMs() - first.atMs();
        double seconds = spanMs / 1000.0;
        return new Rates(
                (last.bytes() - first.bytes()) / seconds,
                (last.records() - first.records()) / seconds,
                (last.destinationEnd() - first.destinationEnd()) / seconds,
                catchUpPerSecond(last),
                spanMs);
    }

    /** How fast the lag shrank from the oldest sample knowing the source's end to {@code last}; null when unknown. */
    private Double catchUpPerSecond(Sample last) {
        if (last.sourceEnd() < 0) {
            return null;
        }
        for (Sample from : samples) {
            if (from.sourceEnd() >= 0) {
                if (last.atMs() - from.atMs() < MIN_SPAN_MS) {
                    return null;
                }
                double seconds = (last.atMs() - from.atMs()) / 1000.0;
                return ((last.destinationEnd() - from.destinationEnd()) - (last.sourceEnd() - from.sourceEnd()))
                        / seconds;
            }
        }
        return null;
    }

    /**
     * Seconds until a MIRRORING partition {@code lag} records behind catches up at the window's rates: 0 when caught
     * up (no lag, or no more than the destination appends in one second: the lag of a mirror keeping pace with a live
     * source); null when unknown (lag or rates unknown) or while the lag is not shrinking; else the lag over the rate it
     * shrinks at, rounded up. The rates are net of the source's growth, so a source still being written (or a throttle)
     * shows in the ETA as the slower catch-up it causes.
     */
    public static Integer etaSeconds(long lag, Rates rates) {
        if (lag == 0) {
            return 0;
        }
        if (lag < 0 || rates == null) {
            return null;
        }
        if (lag <= rates.destinationOffsetsPerSecond()) {
            return 0;
        }
        Double catchUp = rates.catchUpPerSecond();
        if (catchUp == null || catchUp <= 0) {
            return null;
        }
        double seconds = Math.ceil(lag / catchUp);
        return seconds >= Integer.MAX_VALUE ? null : (int) seconds;
    }
}
