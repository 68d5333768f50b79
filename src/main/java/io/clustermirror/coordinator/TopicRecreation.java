package io.clustermirror.coordinator;

import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionStatus;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import org.jboss.logging.Logger;

/**
 * {@code mirror.truncation.policy=recreate}: a destination topic that diverged from its source is deleted and created
 * again like the source's. Every partition of the topic the mirror holds goes FAILED with the reason and leaves the
 * data plane (its open destination transactions aborted); once the topic is recreated, all start over in
 * LOG_TRUNCATION, or stay FAILED naming why the recreate failed.
 */
final class TopicRecreation {

    private static final Logger LOGGER = Logger.getLogger(TopicRecreation.class);

    private final PartitionLifecycle.Host host;
    private final CoordinatorThread thread;
    private final Clock clock;
    /** Runs LOG_TRUNCATION for a partition. */
    private final BiConsumer<String, MirrorPartition> truncate;

    TopicRecreation(
            PartitionLifecycle.Host host,
            CoordinatorThread thread,
            Clock clock,
            BiConsumer<String, MirrorPartition> truncate) {
        this.host = host;
        this.thread = thread;
        this.clock = clock;
        this.truncate = truncate;
    }

    /** Policy {@code recreate}: every partition of the topic leaves the data plane, the destination topic is recreated, all restart. */
    void recreate(String name, String topic, String reason) {
        MirrorParts runtime = host.runtime(name);
        Instant now = clock.instant();
        Map<MirrorPartition, PartitionStatus> failed = new TreeMap<>();
        host.partitions(name).forEach((p, s) -> {
            if (p.topic().equals(topic) && s.state().isHeld()) {
                failed.put(
                        p,
                        s.moveTo(
                                MirrorPartitionState.FAILED,
                                "destination diverged, recreating the topic: " + reason,
                                now));
            }
        });
        host.persistPartitions(name, failed);
        LOGGER.warnf(
                "Mirror %s: destination topic %s diverged (%s); recreating it (mirror.truncation.policy=recreate)",
                name, topic, reason);
        CompletableFuture.allOf(failed.keySet().stream()
                        .map(p -> runtime.dataPlane().remove(p, true))
                        .toArray(CompletableFuture[]::new))
                .thenRunAsync(
                        () -> {
                            String error = null;
                            try {
                                runtime.recreateTopic(
                                        topic,
                                        host.require(name)
                                                .config()
                                                .list(
                                                        MirrorConfig.TOPIC_PROPERTIES_EXCLUDE,
                                                        MirrorConfig.DEFAULT_TOPIC_PROPERTIES_EXCLUDE));
                            } catch (Exception e) {
                                error = "recreating destination topic " + topic + " failed: " + e;
                            }
                            String recreateError = error;
                            thread.run("restart after recreating " + topic, () -> {
                                Map<MirrorPartition, PartitionStatus> restarted = new TreeMap<>();
                                failed.keySet().forEach(p -> {
                                    PartitionStatus s = host.partitions(name).get(p);
                                    if (s != null && s.state() == MirrorPartitionState.FAILED) {
                                        restarted.put(
                                                p,
                                                recreateError == null
                                                        ? s.moveTo(
                                                                MirrorPartitionState.LOG_TRUNCATION,
                                                                null,
                                                                clock.instant())
                                                        : s.moveTo(
                                                                MirrorPartitionState.FAILED,
                                                                recreateError,
                                                                clock.instant()));
                                    }
                                });
                                host.persistPartitions(name, restarted);
                                if (recreateError == null) {
                                    restarted.keySet().forEach(p -> truncate.accept(name, p));
                                }
                            });
                        },
                        runtime.workers());
    }
}
