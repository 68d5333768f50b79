package io.clustermirror.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.mirror.MirrorPartition;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class MirrorMetricsTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final MirrorMetrics metrics = new MirrorMetrics(registry);

    private static MirrorMetrics.MirrorGaugeSources sources(long maxLag, Map<MirrorPartition, Long> lags) {
        return new MirrorMetrics.MirrorGaugeSources(
                state -> 0, () -> maxLag, () -> lags, () -> 0, () -> 0, () -> 0, Map::of, () -> 0);
    }

    @Test
    void aRebuiltDataPlaneIsWhatTheGaugesReadAfterwards() {
        metrics.registerMirror("m", sources(7, Map.of()));
        assertThat(registry.get("cluster.mirror.lag.max")
                        .tag("mirror", "m")
                        .gauge()
                        .value())
                .isEqualTo(7);

        metrics.registerMirror("m", sources(3, Map.of())); // e.g. after the state was replayed again

        assertThat(registry.get("cluster.mirror.lag.max")
                        .tag("mirror", "m")
                        .gauge()
                        .value())
                .isEqualTo(3);
        assertThat(registry.find("cluster.mirror.lag.max").gauges()).hasSize(1);
    }

    @Test
    void recoveryPointsHaveARowPerPartitionAndAMaximumPerMirror() {
        AtomicReference<Map<MirrorPartition, Double>> rpos = new AtomicReference<>(
                Map.of(new MirrorPartition("orders", 0), 4.5, new MirrorPartition("orders", 1), 0.0));
        metrics.registerMirror(
                "m",
                new MirrorMetrics.MirrorGaugeSources(
                        state -> 0, () -> 0, Map::of, () -> 0, () -> 0, () -> 0, rpos::get, () -> 4.5));

        metrics.refreshPartitionLags();
        assertThat(registry.get("cluster.mirror.partition.rpo")
                        .tags("mirror", "m", "topic", "orders", "partition", "0")
                        .gauge()
                        .value())
                .isEqualTo(4.5);
        assertThat(registry.get("cluster.mirror.rpo.max")
                        .tag("mirror", "m")
                        .gauge()
                        .value())
                .isEqualTo(4.5);

        rpos.set(Map.of(new MirrorPartition("orders", 1), 0.0)); // partition 0 stopped
        metrics.refreshPartitionLags();
        assertThat(registry.find("cluster.mirror.partition.rpo").gauges()).hasSize(1);
    }

    @Test
    void partitionLagHasARowPerPartitionInTheDataPlaneAndDropsTheOnesThatLeft() {
        AtomicReference<Map<MirrorPartition, Long>> lags = new AtomicReference<>(
                Map.of(new MirrorPartition("orders", 0), 12L, new MirrorPartition("orders", 1), 0L));
        metrics.registerMirror(
                "m",
                new MirrorMetrics.MirrorGaugeSources(
                        state -> 0, () -> 12, lags::get, () -> 0, () -> 0, () -> 0, Map::of, () -> 0));

        metrics.refreshPartitionLags();
        assertThat(registry.get("cluster.mirror.partition.lag")
                        .tags("mirror", "m", "topic", "orders", "partition", "0")
                        .gauge()
                        .value())
                .isEqualTo(12);
        assertThat(registry.find("cluster.mirror.partition.lag").gauges()).hasSize(2);

        lags.set(Map.of(new MirrorPartition("orders", 1), 5L));
        metrics.refreshPartitionLags();
        assertThat(registry.find("cluster.mirror.partition.lag").gauges()).hasSize(1);
        assertThat(registry.get("cluster.mirror.partition.lag")
                        .tags("mirror", "m", "partition", "1")
                        .gauge()
                        .value())
                .isEqualTo(5);

        metrics.removeMirror("m");
        metrics.refreshPartitionLags();
        assertThat(registry.find("cluster.mirror.partition.lag").gauges()).isEmpty();
        assertThat(registry.find("cluster.mirror.lag.max").gauges()).isEmpty();
    }

    @Test
    void aLanesThrottleTimeIsCountedInSecondsPerMirrorSourceBrokerAndFetcher() {
        metrics.throttled("m", 1, 0, 1500);
        metrics.throttled("m", 1, 0, 250);
        metrics.throttled("m", 2, 1, 100);

        assertThat(registry.get("cluster.mirror.fetcher.throttle.time")
                        .tags("mirror", "m", "source_broker", "1", "fetcher", "0")
                        .counter()
                        .count())
                .isEqualTo(1.75);
        assertThat(registry.get("cluster.mirror.fetcher.throttle.time")
                        .tags("mirror", "m", "source_broker", "2", "fetcher", "1")
                        .counter()
                        .count())
                .isEqualTo(0.1);
    }

    @Test
    void deadLanesAreWhatTheMirrorsDataPlaneSays() {
        AtomicReference<Integer> dead = new AtomicReference<>(0);
        metrics.registerMirror(
                "m",
                new MirrorMetrics.MirrorGaugeSources(
                        state -> 0, () -> 0, Map::of, () -> 0, () -> 0, dead::get, Map::of, () -> 0));
        dead.set(2);

        assertThat(registry.get("cluster.mirror.fetcher.dead.lanes")
                        .tag("mirror", "m")
                        .gauge()
                        .value())
                .isEqualTo(2);
    }
}
