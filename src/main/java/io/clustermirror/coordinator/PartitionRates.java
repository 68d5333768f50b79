package io.clustermirror.coordinator;

import io.clustermirror.fetch.DataPlane;
import io.clustermirror.mirror.CatchUpWindow;
import io.clustermirror.mirror.MirrorPartition;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The rates of every partition in a data plane (decisions §NEW): every {@link #SAMPLE_EVERY} the sampler reads each
 * partition's {@link DataPlane.Counts} (volatile fields: nothing on the fetcher threads waits for it) into the
 * partition's {@link CatchUpWindow}, and publishes the rates of all of a mirror's partitions as one immutable map that
 * describe reads without waiting. The windows belong to the sampler (one at a time: the schedule never overlaps itself).
 */
final class PartitionRates {

    /** How often the data planes are sampled (the schedule of {@link MirrorCoordinator#sampleRates}). */
    static final String SAMPLE_EVERY = "2s";

    /** A partition's window, for the data-plane instance it measures. */
    private record Tracked(long instance, CatchUpWindow window) {}

    /** A partition as last sampled: its counters, and the window's rates (null while it spans too little). */
    record Measured(DataPlane.Counts counts, CatchUpWindow.Rates rates) {

        /** Records behind as the data plane saw it at the sample; -1 before it knew the source's end. */
        long lag() {
            return counts.sourceHighWatermark() < 0
                    ? -1
                    : Math.max(0, counts.sourceHighWatermark() - counts.destinationEnd());
        }
    }

    private final Map<String, Map<MirrorPartition, Tracked>> windows = new HashMap<>();
    private final Map<String, Map<MirrorPartition, Measured>> published = new ConcurrentHashMap<>();

    /**
     * One sample of each partition in the mirror's data plane at {@code atMs} (a monotonic clock); a partition that left
     * it loses its window, one that came back (another instance) starts a new one.
     */
    synchronized void sample(String mirror, Map<MirrorPartition, DataPlane.Counts> counts, long atMs) {
        Map<MirrorPartition, Tracked> previous = windows.getOrDefault(mirror, Map.of());
        Map<MirrorPartition, Tracked> next = new HashMap<>();
        Map<MirrorPartition, Measured> measured = new HashMap<>();
        counts.forEach((partition, c) -> {
            Tracked tracked = previous.get(partition);
            if (tracked == null || tracked.instance() != c.instance()) {
                tracked = new Tracked(c.instance(), new CatchUpWindow());
            }
            tracked.window()
                    .add(new CatchUpWindow.Sample(
                            atMs, c.sourceHighWatermark(), c.destinationEnd(), c.appendedRecords(), c.appendedBytes()));
            next.put(partition, tracked);
            measured.put(partition, new Measured(c, tracked.window().rates()));
        });
        windows.put(mirror, next);
        published.put(mirror, Map.copyOf(measured));
    }

    /** Drops the windows of mirrors without a data plane now. */
    synchronized void retain(Set<String> mirrors) {
        windows.keySet().retainAll(mirrors);
        published.keySet().retainAll(mirrors);
    }

    /**
     * The mirror's partitions in its data plane as last sampled, with their rates; any thread, without waiting (describe
     * of a mirror reads it on the event loop).
     */
    Map<MirrorPartition, Measured> measured(String mirror) {
        return published.getOrDefault(mirror, Map.of());
    }

    /** The partition's rates as last sampled; null when not in a data plane or not measured yet. */
    CatchUpWindow.Rates rates(String mirror, MirrorPartition partition) {
        Measured m = measured(mirror).get(partition);
        return m == null ? null : m.rates();
    }
}
