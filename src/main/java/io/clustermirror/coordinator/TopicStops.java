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
import java.util.function.Function;
import org.jboss.logging.Logger;

/**
 * StopMirrorTopics once the partitions are STOPPING: each leaves the data plane (open destination transactions are
 * aborted: a stopped topic never shows uncommitted data as committed); then, in one task for all the partitions of the
 * stop, what it may have left on the source is read ({@link LossReport}: the ends at the stop, the last sighting of
 * the source's end, the RPO), every topic left without an active partition is made writable (its read-only guard
 * lifted) and then gets its mirror-owned configs back from the source's, and the partitions settle STOPPED. The mirror's clients are built off the coordinator thread; while they cannot be built, the stop waits,
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

    /**
     * Takes the partitions out of the data plane; once they are out, hands back the topics left without an active
     * partition and settles the partitions STOPPED.
     */
    void stop(String name, Collection<MirrorPartition> stopping) {
        host.withRuntime(name, runtime -> stop(name, stopping, runtime), e -> awaitClientsToStop(name, stopping, e));
    }

    private void stop(String name, Collection<MirrorPartition> stopping, MirrorParts runtime) {
        Map<MirrorPartition, CompletableFuture<DataPlane.Progress>> removals = new TreeMap<>();
        Map<MirrorPartition, Integer> epochs = new HashMap<>();
        stopping.stream()
                .filter(p -> host.partitions(name).containsKey(p)) // gone while the mirror's clients were built
                .forEach(p -> {
                    // a stopped topic never shows uncommitted data as committed
                    removals.put(p, runtime.dataPlane().remove(p, true));
                    epochs.put(p, host.partitions(name).get(p).stateEpoch());
                });
        if (removals.isEmpty()) {
            return;
        }
        // a removal that never completes (a loop that died, a task dropped by a closed runtime) must not leave the
        // partitions STOPPING without a word: at the deadline they say why and are tried again; those out go on
        Uni.createFrom()
                .completionStage(CompletableFuture.allOf(removals.values().toArray(CompletableFuture[]::new)))
                .ifNoItem()
                .after(flows.timeout())
                .fail()
                .subscribe()
                .with(
                        done -> handBackAndSettle(name, runtime, removals, epochs),
                        failure -> thread.run("stop of " + name, () -> {
                            Map<MirrorPartition, CompletableFuture<DataPlane.Progress>> out = new TreeMap<>(removals);
                            out.values().removeIf(r -> !r.isDone() || r.isCompletedExceptionally());
                            Set<MirrorPartition> releasing = new TreeSet<>(removals.keySet());
                            releasing.removeAll(out.keySet());
                            if (!releasing.isEmpty()) {
                                waitAndRetry(
                                        name,
                                        releasing,
                                        failure instanceof TimeoutException
                                                ? flows.exceeded("stop", name, flows.timeout())
                                                        + " (the data plane has not released " + releasing
                                                        + "); tried again every " + RETRY_SECONDS + " s"
                                                : "the data plane could not release " + releasing + ": " + failure);
                            }
                            if (!out.isEmpty()) {
                                handBackAndSettle(name, runtime, out, epochs);
                            }
                        }));
    }

    /**
     * Once the partitions are out (one task for all, on the mirror's workers): what the stop may leave on the source,
     * read first, for all at once (the destination's ends before anyone else may write to them; with the source gone,
     * this waits out its read's timeout once); then the topics left without an active partition are handed back; then
     * the partitions settle STOPPED.
     */
    private void handBackAndSettle(
            String name,
            MirrorParts runtime,
            Map<MirrorPartition, CompletableFuture<DataPlane.Progress>> removals,
            Map<MirrorPartition, Integer> epochs) {
        try {
            runtime.workers().execute(() -> {
                Map<MirrorPartition, LossReport> read;
                String unreported = null;
                try {
                    read = host.lossAtStop(name, removals.keySet());
                } catch (RuntimeException e) {
                    read = Map.of();
                    unreported = "what the stop may have left on the source could not be read: " + e;
                }
                Map<MirrorPartition, LossReport> losses = read;
                Set<String> topics = new TreeSet<>();
                removals.keySet().forEach(p -> topics.add(p.topic()));
                // a topic with a partition still active stays guarded; one whose other partitions are STOPPING too
                // is handed back by each stop that gets here (twice does no harm): waiting for each other, two stops
                // of its partitions (a removal past its deadline, tried again) would both leave it read-only
                topics.removeIf(topic -> host.partitions(name).entrySet().stream()
                        .anyMatch(e -> e.getKey().topic().equals(topic)
                                && !removals.containsKey(e.getKey())
                                && e.getValue().state() != MirrorPartitionState.STOPPED
                                && e.getValue().state() != MirrorPartitionState.STOPPING));
                Map<String, String> handedBack = handBack(topics, runtime, losses);
                String lossError = unreported;
                Function<MirrorPartition, String> errors = p -> lossError == null
                        ? handedBack.get(p.topic())
                        : handedBack.containsKey(p.topic()) ? lossError + "; " + handedBack.get(p.topic()) : lossError;
                thread.run(
                        "stop of " + name,
                        () -> removals.forEach((p, removal) -> {
                            PartitionStatus now = host.partitions(name).get(p);
                            if (now != null && now.stateEpoch() >= epochs.get(p)) {
                                settler.settle(
                                        name,
                                        p,
                                        MirrorPartitionState.STOPPING,
                                        MirrorPartitionState.STOPPED,
                                        errors.apply(p),
                                        removal.getNow(null),
                                        losses.get(p));
                            }
                        }));
            });
        } catch (RejectedExecutionException e) {
            thread.run(
                    "stop of " + name,
                    () -> waitAndRetry(
                            name,
                            removals.keySet(),
                            "the mirror's clients were closed during the stop; tried again every " + RETRY_SECONDS
                                    + " s"));
        }
    }

    /**
     * Hands the topics back: every one writable first (its guard lifted), then their mirror-owned configs restored from
     * the source's. The guards go whatever the configs do: in an unplanned failover the source is gone, and the topics
     * must take writes all the same (the owned configs let any batch in). A topic whose source end the stop could not
     * read keeps the mirror's configs without asking the source again (that would wait out the same timeout, topic
     * after topic). What could not be done, by topic, for the partitions' STOPPED status.
     */
    private static Map<String, String> handBack(
            Set<String> topics, MirrorParts runtime, Map<MirrorPartition, LossReport> losses) {
        Map<String, List<String>> errors = new TreeMap<>();
        for (String topic : topics) {
            try {
                runtime.liftGuard(topic);
            } catch (Exception e) {
                errors.computeIfAbsent(topic, t -> new ArrayList<>())
                        .add("the destination topic is still read-only: its guard ACL (DENY WRITE for User:*) could "
                                + "not be deleted: " + e);
            }
        }
        Set<String> unread = new TreeSet<>();
        losses.forEach((p, loss) -> {
            if (loss != null && !loss.sourceReachable()) {
                unread.add(p.topic());
            }
        });
        for (String topic : topics) {
            String failed = null;
            if (unread.contains(topic)) {
                failed = "the source could not be read at the stop";
            } else {
                try {
                    runtime.restoreConfigs(topic);
                } catch (Exception e) {
                    failed = e.toString();
                }
            }
            if (failed != null) {
                errors.computeIfAbsent(topic, t -> new ArrayList<>())
                        .add("mirror-owned configs of the destination topic could not be restored: " + failed);
            }
        }
        Map<String, String> joined = new TreeMap<>();
        errors.forEach((topic, each) -> joined.put(topic, String.join("; ", each)));
        return joined;
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
