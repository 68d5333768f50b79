package io.clustermirror.coordinator;

import io.clustermirror.fetch.DataPlane;
import io.clustermirror.mirror.LossReport;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionStatus;
import io.smallrye.mutiny.TimeoutException;
import io.smallrye.mutiny.Uni;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * StopMirrorTopics once the partitions are STOPPING: each leaves the data plane (open destination transactions are
 * aborted: a stopped topic never shows uncommitted data as committed); once a topic has no active partition left, its
 * read-only guard is lifted and its mirror-owned configs go back to the source's values, and the partitions settle
 * STOPPED, each with what the stop may have left on the source ({@link LossReport}: the ends at the stop, the last
 * sighting of the source's end, the RPO). The mirror's clients are built off the coordinator thread; while they cannot be built, the stop waits,
 * saying why, and is tried again.
 */
final class TopicStops {

    private static final Logger LOGGER = Logger.getLogger(TopicStops.class);
    /** How often a stop that waits for the mirror's clients is tried again. */
    private static final long RETRY_SECONDS = 3;

    /** Moves a partition still in {@code from} to {@code to}, with the data plane's last progress. */
    @FunctionalInterface
    interface Settler {
        void settle(
                String mirror,
                MirrorPartition partition,
                MirrorPartitionState from,
                MirrorPartitionState to,
                String error,
                DataPlane.Progress last,
                LossReport loss);
    }

    private final PartitionLifecycle.Host host;
    private final CoordinatorThread thread;
    private final Settler settler;
    private final Clock clock;
    private final FlowDeadlines flows;

    TopicStops(
            PartitionLifecycle.Host host, CoordinatorThread thread, Settler settler, Clock clock, FlowDeadlines flows) {
        this.host = host;
        this.thread = thread;
        this.settler = settler;
        this.clock = clock;
        this.flows = flows;
    }

    /** Takes the partitions out of the data plane; once all of a topic's are out, restores its configs and settles them STOPPED. */
    void stop(String name, Collection<MirrorPartition> stopping) {
        host.withRuntime(name, runtime -> stop(name, stopping, runtime), e -> awaitClientsToStop(name, stopping, e));
    }

    private void stop(String name, Collection<MirrorPartition> stopping, MirrorParts runtime) {
        Map<String, List<MirrorPartition>> byTopic = new TreeMap<>();
        stopping.stream()
                .filter(p -> host.partitions(name).containsKey(p)) // gone while the mirror's clients were built
                .forEach(p -> byTopic.computeIfAbsent(p.topic(), t -> new ArrayList<>())
                        .add(p));
        byTopic.forEach((topic, ps) -> {
            Map<MirrorPartition, CompletableFuture<DataPlane.Progress>> removals = new HashMap<>();
            Map<MirrorPartition, Integer> epochs = new HashMap<>();
            ps.forEach(p -> {
                removals.put(
                        p,
                        runtime.dataPlane()
                                .remove(p, true)); // a stopped topic never shows uncommitted data as committed
                epochs.put(p, host.partitions(name).get(p).stateEpoch());
            });
            Set<MirrorPartition> releasing = new TreeSet<>(removals.keySet());
            // a removal that never completes (a loop that died, a task dropped by a closed runtime) must not leave
            // the partitions STOPPING without a word: at the deadline they say why, and the stop is tried again
            Uni.createFrom()
                    .completionStage(CompletableFuture.allOf(removals.values().toArray(CompletableFuture[]::new)))
                    .ifNoItem()
                    .after(flows.timeout())
                    .fail()
                    .subscribe()
                    .with(
                            done -> restoreAndSettle(name, topic, runtime, removals, epochs),
                            failure -> thread.run(
                                    "stop of " + topic,
                                    () -> waitAndRetry(
                                            name,
                                            releasing,
                                            failure instanceof TimeoutException
                                                    ? flows.exceeded("stop", name, flows.timeout())
                                                            + " (the data plane has not released " + releasing
                                                            + "); tried again every " + RETRY_SECONDS + " s"
                                                    : "the data plane could not release " + releasing + ": "
                                                            + failure)));
        });
    }

    /**
     * Hands a topic back once none of its partitions is active: writable first (its guard lifted), then its mirror-owned
     * configs restored from the source's. The guard goes whatever the configs do: in an unplanned failover the source
     * is gone, and the topic must take writes all the same (the owned configs let any batch in). What could not be
     * done, for the partitions' STOPPED status, or null.
     */
    private static String handBack(String topic, MirrorParts runtime) {
        List<String> errors = new ArrayList<>();
        try {
            runtime.liftGuard(topic);
        } catch (Exception e) {
            errors.add("the destination topic is still read-only: its guard ACL (DENY WRITE for User:*) could not be "
                    + "deleted: " + e);
        }
        try {
            runtime.restoreConfigs(topic);
        } catch (Exception e) {
            errors.add("mirror-owned configs of the destination topic could not be restored: " + e);
        }
        return errors.isEmpty() ? null : String.join("; ", errors);
    }

    /** Once the topic's partitions are out: its configs restored if no other partition is active, then STOPPED. */
    private void restoreAndSettle(
            String name,
            String topic,
            MirrorParts runtime,
            Map<MirrorPartition, CompletableFuture<DataPlane.Progress>> removals,
            Map<MirrorPartition, Integer> epochs) {
        try {
            runtime.workers().execute(() -> {
                // before the topic is handed back: its destination end is read before anyone else may write to it
                // (with the source gone, this waits out the source's request timeout)
                Map<MirrorPartition, LossReport> losses = host.lossAtStop(name, removals.keySet());
                boolean othersActive = host.partitions(name).entrySet().stream()
                        .anyMatch(e -> e.getKey().topic().equals(topic)
                                && !removals.containsKey(e.getKey())
                                && e.getValue().state() != MirrorPartitionState.STOPPED);
                String restoreError = othersActive ? null : handBack(topic, runtime);
                thread.run(
                        "stop of " + topic,
                        () -> removals.forEach((p, removal) -> {
                            PartitionStatus now = host.partitions(name).get(p);
                            if (now != null && now.stateEpoch() >= epochs.get(p)) {
                                settler.settle(
                                        name,
                                        p,
                                        MirrorPartitionState.STOPPING,
                                        MirrorPartitionState.STOPPED,
                                        restoreError,
                                        removal.getNow(null),
                                        losses.get(p));
                            }
                        }));
            });
        } catch (RejectedExecutionException e) {
            thread.run(
                    "stop of " + topic,
                    () -> waitAndRetry(
                            name,
                            removals.keySet(),
                            "the mirror's clients were closed during the stop; tried again every " + RETRY_SECONDS
                                    + " s"));
        }
    }

    /**
     * A stop needs the mirror's clients (to restore the destination topic's configs from the source's and to abort
     * the destination transactions it holds open); while they cannot be built, the partitions stay STOPPING with the
     * reason in describe and the stop is tried again every few seconds.
     */
    private void awaitClientsToStop(String name, Collection<MirrorPartition> stopping, RuntimeException cause) {
        waitAndRetry(name, stopping, "stopping waits for the mirror's clients: " + cause.getMessage());
    }

    /**
     * The partitions stay STOPPING with the reason in describe (persisted and logged once, when it changes), and the
     * stop is tried again every few seconds (coordinator thread).
     */
    private void waitAndRetry(String name, Collection<MirrorPartition> stopping, String reason) {
        Map<MirrorPartition, PartitionStatus> waiting = new TreeMap<>();
        stopping.forEach(p -> {
            PartitionStatus current = host.partitions(name).get(p);
            if (current != null
                    && current.state() == MirrorPartitionState.STOPPING
                    && !reason.equals(current.error())) {
                waiting.put(p, current.moveTo(MirrorPartitionState.STOPPING, reason, clock.instant()));
            }
        });
        if (!waiting.isEmpty()) {
            host.persistPartitions(name, waiting);
            LOGGER.warnf("Mirror %s: %s", name, reason);
        }
        thread.schedule("stop of " + name, TimeUnit.SECONDS.toMillis(RETRY_SECONDS), () -> {
            List<MirrorPartition> still = stopping.stream()
                    .filter(p -> host.partitions(name).containsKey(p)
                            && host.partitions(name).get(p).state() == MirrorPartitionState.STOPPING)
                    .toList();
            if (!still.isEmpty() && host.exists(name)) {
                stop(name, still);
            }
        });
    }
}
