package io.clustermirror.coordinator;

import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.Failures;
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
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.jboss.logging.Logger;

/**
 * The recreate policy ({@code mirror.truncation.policy=recreate}) of a destination topic that LOG_TRUNCATION found
 * diverged: its partitions FAILED and out of the data plane, the records only the destination holds preserved, the
 * topic recreated, and its partitions back in LOG_TRUNCATION. It answers with the partitions that start over; the
 * {@link PartitionLifecycle} checks them (coordinator thread, like every move here; the blocking steps run on the
 * mirror's workers).
 */
final class TopicRecreation {

    private static final Logger LOGGER = Logger.getLogger(TopicRecreation.class);

    private final PartitionLifecycle.Host host;
    private final CoordinatorThread thread;
    private final MirrorMetrics metrics;
    private final Clock clock;

    TopicRecreation(PartitionLifecycle.Host host, CoordinatorThread thread, MirrorMetrics metrics, Clock clock) {
        this.host = host;
        this.thread = thread;
        this.metrics = metrics;
        this.clock = clock;
    }

    /**
     * {@code mirror.truncation.policy=recreate}: a destination topic that diverged from its source is deleted and
     * created again like the source's. Every partition of the topic the mirror holds goes FAILED with the reason and
     * leaves the data plane (its open destination transactions aborted). Then the records only the destination holds
     * (a failback's divergent tail) are preserved, partition by partition, into {@code __diverged.<topic>} and
     * reported; only once that succeeded is the topic recreated (its topic id changes) and every partition starts over
     * in LOG_TRUNCATION; what was preserved is persisted with the partitions (describe shows it, also after a
     * restart). A failed preservation or recreate leaves the partitions FAILED naming why, the topic untouched.
     *
     * @return completes on the coordinator thread, once their statuses are written, with the partitions that start over
     *     in LOG_TRUNCATION (empty when the topic was not recreated); never when that write fails
     */
    CompletableFuture<Set<MirrorPartition>> recreate(String name, String topic, String reason) {
        CompletableFuture<Set<MirrorPartition>> restarted = new CompletableFuture<>();
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
        List<String> excluded = host.require(name)
                .config()
                .list(MirrorConfig.TOPIC_PROPERTIES_EXCLUDE, MirrorConfig.DEFAULT_TOPIC_PROPERTIES_EXCLUDE);
        host.persistPartitions(name, failed, () -> {
            LOGGER.warnf(
                    "Mirror %s: destination topic %s diverged (%s); preserving what only it holds, then recreating it "
                            + "(mirror.truncation.policy=recreate)",
                    name, topic, reason);
            host.withRuntime(
                    name,
                    runtime -> CompletableFuture.allOf(failed.keySet().stream()
                                    .map(p -> runtime.dataPlane().remove(p, true))
                                    .toArray(CompletableFuture[]::new))
                            .handleAsync(
                                    (removed, notRemoved) -> {
                                        List<PreservedTail> preserved = new ArrayList<>();
                                        // a partition still in the data plane could append to the topic recreated
                                        String error = notRemoved != null
                                                ? "topic " + topic + " was not recreated: its partitions did not leave"
                                                        + " the data plane: " + Failures.unwrap(notRemoved)
                                                : preserveAndRecreate(name, topic, all, excluded, runtime, preserved);
                                        thread.run(
                                                "restart after recreating " + topic,
                                                () -> restart(name, topic, failed, preserved, error, restarted));
                                        return null;
                                    },
                                    runtime.workers()),
                    e -> restart(
                            name,
                            topic,
                            failed,
                            List.of(),
                            "topic " + topic + " was not recreated: the mirror's clients could not be built: "
                                    + e.getMessage(),
                            restarted));
        });
        return restarted;
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

    /**
     * Back on the coordinator thread: the partitions start over (or stay FAILED), persisted with what was preserved;
     * once that is written, {@code restarted} completes with those in LOG_TRUNCATION (none when it was not recreated).
     */
    private void restart(
            String name,
            String topic,
            Map<MirrorPartition, PartitionStatus> failed,
            List<PreservedTail> preserved,
            String error,
            CompletableFuture<Set<MirrorPartition>> restarted) {
        Map<MirrorPartition, PartitionStatus> moved = new TreeMap<>();
        failed.keySet().forEach(p -> {
            PartitionStatus s = host.partitions(name).get(p);
            if (s != null && s.state() == MirrorPartitionState.FAILED) {
                moved.put(
                        p,
                        error == null
                                ? s.moveTo(MirrorPartitionState.LOG_TRUNCATION, null, clock.instant())
                                : s.moveTo(MirrorPartitionState.FAILED, error, clock.instant()));
            }
        });
        Runnable then = () -> restarted.complete(error == null ? moved.keySet() : Set.of());
        // whatever the recreate got to (a delete whose creation failed too), what was verified of the old log goes
        TopicDivergence held = preserved.isEmpty() ? null : new TopicDivergence(topic, clock.instant(), preserved);
        host.persistRecreated(name, topic, held, moved, then);
    }
}
