package io.clustermirror.coordinator;

import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionStatus;
import io.clustermirror.mirror.PreservedTail;
import io.clustermirror.mirror.TopicDivergence;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import org.jboss.logging.Logger;

/**
 * {@code mirror.truncation.policy=recreate}: a destination topic that diverged from its source is deleted and created
 * again like the source's. Every partition of the topic the mirror holds goes FAILED with the reason and leaves the
 * data plane (its open destination transactions aborted). Then the records only the destination holds (a failback's
 * divergent tail) are preserved, partition by partition, into {@code __diverged.<topic>} and reported; only once that
 * succeeded is the topic recreated (its topic id changes) and every partition starts over in LOG_TRUNCATION; what was
 * preserved is persisted with the partitions (describe shows it, also after a restart). A failed
 * preservation or recreate leaves the partitions FAILED naming why, the topic untouched.
 */
final class TopicRecreation {

    private static final Logger LOGGER = Logger.getLogger(TopicRecreation.class);

    private final PartitionLifecycle.Host host;
    private final CoordinatorThread thread;
    private final MirrorMetrics metrics;
    private final Clock clock;
    /** Runs LOG_TRUNCATION for a partition. */
    private final BiConsumer<String, MirrorPartition> truncate;

    TopicRecreation(
            PartitionLifecycle.Host host,
            CoordinatorThread thread,
            MirrorMetrics metrics,
            Clock clock,
            BiConsumer<String, MirrorPartition> truncate) {
        this.host = host;
        this.thread = thread;
        this.metrics = metrics;
        this.clock = clock;
        this.truncate = truncate;
    }

    /** The topic's partitions leave the data plane, its divergent tails are preserved, it is recreated, all restart. */
    void recreate(String name, String topic, String reason) {
        MirrorParts runtime = host.runtime(name);
        Instant now = clock.instant();
        Map<MirrorPartition, PartitionStatus> failed = new TreeMap<>();
        List<MirrorPartition> all = new ArrayList<>();
        new TreeMap<>(host.partitions(name)).forEach((p, s) -> {
            if (p.topic().equals(topic)) {
                all.add(p);
                if (s.state().isHeld()) {
                    failed.put(
                            p,
                            s.moveTo(
                                    MirrorPartitionState.FAILED,
                                    "destination diverged, recreating the topic: " + reason,
                                    now));
                }
            }
        });
        host.persistPartitions(name, failed);
        LOGGER.warnf(
                "Mirror %s: destination topic %s diverged (%s); preserving what only it holds, then recreating it "
                        + "(mirror.truncation.policy=recreate)",
                name, topic, reason);
        List<String> excluded = host.require(name)
                .config()
                .list(MirrorConfig.TOPIC_PROPERTIES_EXCLUDE, MirrorConfig.DEFAULT_TOPIC_PROPERTIES_EXCLUDE);
        CompletableFuture.allOf(failed.keySet().stream()
                        .map(p -> runtime.dataPlane().remove(p, true))
                        .toArray(CompletableFuture[]::new))
                .thenRunAsync(
                        () -> {
                            List<PreservedTail> preserved = new ArrayList<>();
                            String error = preserveAndRecreate(name, topic, all, excluded, runtime, preserved);
                            thread.run(
                                    "restart after recreating " + topic,
                                    () -> restart(name, topic, failed, preserved, error));
                        },
                        runtime.workers());
    }

    /** On a worker: null when the topic was recreated, else why not. */
    private String preserveAndRecreate(
            String name,
            String topic,
            List<MirrorPartition> partitions,
            List<String> excluded,
            MirrorParts runtime,
            List<PreservedTail> preserved) {
        try {
            preserved.addAll(runtime.preserveDivergentTails(partitions));
        } catch (Exception e) {
            return "the records only the destination holds could not be preserved, so topic " + topic
                    + " was not recreated: " + e;
        }
        if (!preserved.isEmpty()) {
            long records = preserved.stream().mapToLong(PreservedTail::records).sum();
            metrics.divergedRecords(name, records);
            LOGGER.warnf(
                    "Mirror %s: %d record(s) only the destination held were preserved into %s before recreating %s: %s",
                    name,
                    records,
                    preserved.get(0).preservedTo(),
                    topic,
                    String.join(
                            ", ",
                            preserved.stream()
                                    .map(x -> "partition " + x.partition() + " offsets [" + x.from() + ", " + x.to()
                                            + ") " + x.records() + " record(s)")
                                    .toList()));
        }
        try {
            runtime.recreateTopic(topic, excluded);
            return null;
        } catch (Exception e) {
            return "recreating destination topic " + topic + " failed: " + e;
        }
    }

    /** Back on the coordinator thread: the partitions start over (or stay FAILED), persisted with what was preserved. */
    private void restart(
            String name,
            String topic,
            Map<MirrorPartition, PartitionStatus> failed,
            List<PreservedTail> preserved,
            String error) {
        Map<MirrorPartition, PartitionStatus> restarted = new TreeMap<>();
        failed.keySet().forEach(p -> {
            PartitionStatus s = host.partitions(name).get(p);
            if (s != null && s.state() == MirrorPartitionState.FAILED) {
                restarted.put(
                        p,
                        error == null
                                ? s.moveTo(MirrorPartitionState.LOG_TRUNCATION, null, clock.instant())
                                : s.moveTo(MirrorPartitionState.FAILED, error, clock.instant()));
            }
        });
        if (preserved.isEmpty()) {
            host.persistPartitions(name, restarted);
        } else {
            host.persistDivergence(name, new TopicDivergence(topic, clock.instant(), preserved), restarted);
        }
        if (error == null) {
            restarted.keySet().forEach(p -> truncate.accept(name, p));
        }
    }
}
