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

    private final Map<String, Map<MirrorPartition, Tracked>> windows = new HashMap<>();
    private final Map<String, Map<MirrorPartition, CatchUpWindow.Rates>> published = new ConcurrentHashMap<>();

    /**
     * One sample of each partition in the mirror's data plane at {@code atMs} (a monotonic clock); a partition that left
     * it loses its window, one that came back (another instance) starts a new one.
     */
    synchronized void sample(String mirror, Map<MirrorPartition, DataPlane.Counts> counts, long atMs) {
        Map<MirrorPartition, Tracked> previous = windows.getOrDefault(mirror, Map.of());
        Map<MirrorPartition, Tracked> next = new HashMap<>();
        Map<MirrorPartition, CatchUpWindow.Rates> rates = new HashMap<>();
        counts.forEach((partition, c) -> {
            Tracked tracked = previous.get(partition);
            if (tracked == null || tracked.instance() != c.instance()) {
                tracked = new Tracked(c.instance(), new CatchUpWindow());
            }
            tracked.window()
                    .add(new CatchUpWindow.Sample(
                            atMs, c.sourceHighWatermark(), c.destinationEnd(), c.appendedRecords(), c.appendedBytes()));
            next.put(partition, tracked);
            CatchUpWindow.Rates r = tracked.window().rates();
            if (r != null) {
                rates.put(partition, r);
            }
        });
        windows.put(mirror, next);
        published.put(mirror, Map.copyOf(rates));
    }

    /** Drops the windows of mirrors without a data plane now. */
    synchronized void retain(Set<String> mirrors) {
        windows.keySet().retainAll(mirrors);
        published.keySet().retainAll(mirrors);
    }

    /** The rates of the mirror's partitions as last sampled (those whose window spans enough); any thread. */
    Map<MirrorPartition, CatchUpWindow.Rates> rates(String mirror) {
        return published.getOrDefault(mirror, Map.of());
    }
}
