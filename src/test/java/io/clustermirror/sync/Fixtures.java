package io.clustermirror.sync;

import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionStatus;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/** What the sync steps' tests share: a mirror, partition states, a cycle log with its metrics. */
final class Fixtures {

    static final Instant NOW = Instant.parse("2026-12-01T00:00:00Z");

    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final MirrorMetrics metrics = new MirrorMetrics(registry);
    final CycleLog log = new CycleLog("m", metrics, null);

    static Mirror mirror(String... settings) {
        Map<String, String> values = new HashMap<>();
        values.put(MirrorConfig.BOOTSTRAP_SERVERS, "a:9092");
        for (int i = 0; i < settings.length; i += 2) {
            values.put(settings[i], settings[i + 1]);
        }
        return new Mirror("m", new MirrorConfig(values), "cluster-a", NOW, NOW);
    }

    static PartitionStatus in(MirrorPartitionState state) {
        PartitionStatus status = PartitionStatus.initial(NOW).moveTo(MirrorPartitionState.LOG_TRUNCATION, null, NOW);
        return switch (state) {
            case LOG_TRUNCATION -> status;
            case MIRRORING -> status.moveTo(MirrorPartitionState.MIRRORING, null, NOW);
            case FAILED -> status.moveTo(MirrorPartitionState.FAILED, "offset 3 differs", NOW);
            case EPOCH_FENCING ->
                in(MirrorPartitionState.MIRRORING).moveTo(MirrorPartitionState.EPOCH_FENCING, null, NOW);
            case PAUSING -> in(MirrorPartitionState.MIRRORING).moveTo(MirrorPartitionState.PAUSING, null, NOW);
            case PAUSED -> in(MirrorPartitionState.PAUSING).moveTo(MirrorPartitionState.PAUSED, null, NOW);
            case STOPPING -> status.moveTo(MirrorPartitionState.STOPPING, null, NOW);
            case STOPPED ->
                status.moveTo(MirrorPartitionState.STOPPING, null, NOW).moveTo(MirrorPartitionState.STOPPED, null, NOW);
            default -> throw new IllegalArgumentException(state.name());
        };
    }

    /** The fakes answer at once: a step's Uni completes on the calling thread. */
    static <T> T await(Uni<T> uni) {
        return uni.await().atMost(Duration.ofSeconds(5));
    }

    double errors(String kind) {
        return registry.find("cluster.mirror.sync.errors").tag("kind", kind).counters().stream()
                .mapToDouble(c -> c.count())
                .sum();
    }

    SyncReport report() {
        return log.report(NOW, Duration.ZERO, 1);
    }
}
