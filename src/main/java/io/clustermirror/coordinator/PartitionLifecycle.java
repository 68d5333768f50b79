package io.clustermirror.coordinator;

import io.clustermirror.fetch.DataPlane;
import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.LossReport;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionStatus;
import io.clustermirror.mirror.TopicDivergence;
import io.clustermirror.mirror.TruncationProgress;
import io.clustermirror.truncation.LogTruncation;
import io.clustermirror.truncation.NotServedYet;
import io.clustermirror.truncation.PrefixCheck;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jboss.logging.Logger;

/**
 * The partition lifecycle of DESIGN §3 as it runs: LOG_TRUNCATION and its outcome, the data plane's reports (failure,
 * EPOCH_FENCING), FAILED with its automatic retries, the topic verbs' effects (pause, resume, stop, recover), the
 * recreate policy ({@link TopicRecreation} recreates, the lifecycle checks the partitions again), halting a mirror whose source changed identity, and the restart of every partition from its
 * persisted state. It decides and moves partitions through the coordinator's state ({@link Host}): a move is the state
 * at once and is written with the coordinator tick's others, and what must follow a durable move (joining the data
 * plane, leaving it, a retry) runs once that write committed. Blocking steps, building a mirror's clients among them,
 * run off the coordinator thread, and every outcome comes back to it.
 */
final class PartitionLifecycle {

    private static final Logger LOGGER = Logger.getLogger(PartitionLifecycle.class);

    /** What the lifecycle needs from the coordinator: its state, the writer of that state, and the mirrors' runtimes. */
    interface Host {
        Map<MirrorPartition, PartitionStatus> partitions(String mirror);

        /**
         * Makes the changed statuses the state and writes them with the tick's other changes; {@code then} (may be
         * null) runs once they committed, never if they did not (coordinator thread).
         */
        void persistPartitions(String mirror, Map<MirrorPartition, PartitionStatus> changed, Runnable then);

        default void persistPartitions(String mirror, Map<MirrorPartition, PartitionStatus> changed) {
            persistPartitions(mirror, changed, null);
        }

        /** A recreated topic's statuses, what it held (null: nothing), the end of its verified offsets: one write. */
        void persistRecreated(
                String mirror,
                String topic,
                TopicDivergence divergence,
                Map<MirrorPartition, PartitionStatus> changed,
                Runnable then);

        Optional<Mirror> mirror(String name);

        /** The mirror, or UNKNOWN_CLUSTER_MIRROR. */
        Mirror require(String name);

        default boolean exists(String name) {
            return mirror(name).isPresent();
        }

        boolean isActive();

        /**
         * The mirror's running parts for {@code then}, on the coordinator thread: at once when they are built, else
         * once they were built off it; {@code failed} with why its clients could not be built. Neither runs when the
         * runtimes were closed meanwhile (a reload restarts every flow from the state).
         */
        void withRuntime(String name, Consumer<MirrorParts> then, Consumer<RuntimeException> failed);

        Optional<? extends MirrorParts> liveRuntime(String name);

        /**
         * What stopping the partitions may leave on the source ({@link LossReport}): their ends read now, the last
         * sighting of the source's end, the RPO. Blocking (a source that does not answer takes its read's timeout); a
         * worker thread.
         */
        Map<MirrorPartition, LossReport> lossAtStop(String mirror, Collection<MirrorPartition> partitions);

        /** Lifts the read-only guards of the topics over the service's destination Admin (no mirror's clients needed). */
        CompletionStage<Void> liftGuards(Set<String> topics);
    }

    private final Host host;
    private final CoordinatorThread thread;
    private final RetryPolicy retries;
    private final MirrorMetrics metrics;
    private final Clock clock;
    /** Where each partition's last LOG_TRUNCATION check stands (or ended), for describe. */
    private final Map<String, TruncationProgress> progress = new ConcurrentHashMap<>();

    private final TopicStops stops;
    private final TopicRecreation recreation;
    private final TruncationBatches batches;
    /**
     * Mirrors halted because their source answers with another cluster id than the one they were created for, with
     * why: no data plane until the metadata sync finds the right cluster again. The partition states do not change:
     * the halt is the mirror's, shown in describe and counted.
     */
    private final Map<String, String> halted = new ConcurrentHashMap<>();
    /**
     * How often each mirror's partitions were resumed from the state (a reload, the end of a halt): a prefix check
     * submitted before the last resume answers for nothing, since the resume checked its partitions again (coordinator
     * thread).
     */
    private final Map<String, Integer> resumes = new ConcurrentHashMap<>();

    PartitionLifecycle(
            Host host,
            CoordinatorThread thread,
            RetryPolicy retries,
            MirrorMetrics metrics,
            Clock clock,
            FlowDeadlines flows) {
        this.host = host;
        this.thread = thread;
        this.retries = retries;
        this.metrics = metrics;
        this.clock = clock;
        this.stops = new TopicStops(host, thread, this::settle, clock, flows);
        this.recreation = new TopicRecreation(host, thread, metrics, clock);
        this.batches = new TruncationBatches(thread);
    }

    /** Stops the partitions (STOPPING to STOPPED): see {@link TopicStops}. */
    void stopPartitions(String name, Collection<MirrorPartition> stopping) {
        stops.stop(name, stopping);
    }

    /** Where the partition's current (or last) LOG_TRUNCATION check stands, for describe; null before the first. */
    TruncationProgress truncation(String mirror, MirrorPartition partition) {
        return progress.get(mirror + "/" + partition);
    }

    /** A deleted mirror leaves nothing behind. */
    void forget(String mirror) {
        halted.remove(mirror);
        progress.keySet().removeIf(key -> key.startsWith(mirror + "/"));
        stops.forget(mirror);
    }

    /**
     * Runs LOG_TRUNCATION for a partition on a worker, checked together with the others asked for in the same
     * coordinator task ({@link TruncationBatches}); its outcome moves the partition on.
     */
    void truncate(String name, MirrorPartition partition) {
        withRuntimeOrFail(name, partition, runtime -> truncate(name, partition, runtime));
    }

    private void truncate(String name, MirrorPartition partition, MirrorParts runtime) {
        PartitionStatus status = host.partitions(name).get(partition);
        int epoch = status.stateEpoch();
        checkOnceGone(
                name,
                runtime,
                PrefixCheck.Check.full(partition, step -> progress.put(name + "/" + partition, step)),
                answer -> {
                    long waited = Duration.between(status.updatedAt(), clock.instant())
                            .toMillis();
                    if (answer.failure() != null
                            && NotServedYet.is(answer.failure())
                            && waited < NotServedYet.GRACE_MS) {
                        // a topic just created: the cluster's brokers have not applied it yet (thousands of partitions
                        // take them tens of seconds); asked again, not FAILED, within the grace
                        thread.schedule(
                                "LOG_TRUNCATION of " + partition + " once served",
                                NotServedYet.delayMs(waited),
                                () -> truncateAgain(name, partition, epoch));
                        return;
                    }
                    afterTruncation(name, partition, epoch, outcome(answer, "log truncation could not complete: "));
                });
    }

    /** LOG_TRUNCATION of the partition once more, unless it moved on meanwhile (coordinator thread). */
    private void truncateAgain(String name, MirrorPartition partition, int epoch) {
        PartitionStatus current = host.partitions(name).get(partition);
        if (current != null
                && current.stateEpoch() == epoch
                && current.state() == MirrorPartitionState.LOG_TRUNCATION
                && !isHalted(name)) {
            truncate(name, partition);
        }
    }

    private static LogTruncation.Outcome outcome(PrefixCheck.Answer answer, String failedBecause) {
        return answer.failure() == null
                ? answer.outcome()
                : new LogTruncation.Unsupported(failedBecause + answer.failure());
    }

    /**
     * Checks the partition with the others of this task's batch ({@link TruncationBatches}) once it has left the data
     * plane; {@code then} gets its answer on the coordinator thread. The data plane is told that a partition is coming
     * ({@link io.clustermirror.fetch.DataPlane#joining}), so that its lanes are free for its first Fetch.
     */
    private void checkOnceGone(
            String name, MirrorParts runtime, PrefixCheck.Check check, Consumer<PrefixCheck.Answer> then) {
        runtime.dataPlane().joining();
        int resumedBefore = resumes.getOrDefault(name, 0);
        whenGone(
                runtime,
                check.partition(),
                () -> batches.submit(name, runtime, check, answer -> {
                    if (resumes.getOrDefault(name, 0) != resumedBefore) {
                        // the mirror was resumed from its state since (a reload closed the runtime this check ran on,
                        // at the
                        // same state epoch): the resume's own check of the partition decides, not this one's
                        // interrupted answer
                        return;
                    }
                    then.accept(answer);
                }));
    }

    /**
     * Runs {@code then} on the coordinator thread once the partition has left the data plane: at once (in this task, so
     * that it joins this task's batch) when it is not in it.
     */
    private void whenGone(MirrorParts runtime, MirrorPartition partition, Runnable then) {
        CompletableFuture<?> gone = runtime.dataPlane().whenGone(partition);
        if (gone.isDone()) {
            then.run();
        } else {
            gone.whenComplete((left, e) -> thread.run(partition + " left the data plane", then));
        }
    }

    private void afterTruncation(String name, MirrorPartition partition, int epoch, LogTruncation.Outcome outcome) {
        PartitionStatus current = host.partitions(name).get(partition);
        if (current == null
                || current.stateEpoch() != epoch
                || current.state() != MirrorPartitionState.LOG_TRUNCATION) {
            return; // stopped or changed meanwhile
        }
        try {
            if (outcome instanceof LogTruncation.Ready ready) {
                PartitionStatus mirroring = current.moveTo(MirrorPartitionState.MIRRORING, null, clock.instant());
                host.persistPartitions(
                        name,
                        Map.of(partition, mirroring),
                        () -> mirrorOn(
                                name,
                                partition,
                                mirroring.stateEpoch(),
                                ready,
                                e -> {
                                    // the FAILED line says it (failPartition); the stack only at DEBUG
                                    LOGGER.debugf(e, "Mirror %s: %s could not leave LOG_TRUNCATION", name, partition);
                                    return "could not leave LOG_TRUNCATION: " + e;
                                },
                                () -> LOGGER.infof(
                                        "Mirror %s: %s MIRRORING from offset %d",
                                        name, partition, ready.startOffset())));
            } else if (outcome instanceof LogTruncation.Diverged diverged) {
                if (host.require(name).config().recreateOnDivergence()) {
                    recreation
                            .recreate(name, partition.topic(), diverged.reason())
                            .thenAccept(restarted -> restarted.forEach(p -> truncate(name, p)))
                            .exceptionally(e -> {
                                LOGGER.errorf(e, "Mirror %s: the check of recreated %s failed", name, partition);
                                return null;
                            });
                } else {
                    failPartition(name, partition, diverged.reason());
                }
            } else if (outcome instanceof LogTruncation.Unsupported unsupported) {
                failPartition(name, partition, unsupported.reason());
            }
        } catch (RuntimeException e) {
            // the FAILED line says it (failPartition); the stack only at DEBUG
            LOGGER.debugf(e, "Mirror %s: %s could not leave LOG_TRUNCATION", name, partition);
            failPartition(name, partition, "could not leave LOG_TRUNCATION: " + e);
        }
    }

    private void onDataPlaneFailure(String name, MirrorPartition partition, String error) {
        thread.run("data-plane failure of " + partition, () -> {
            PartitionStatus current = host.partitions(name).get(partition);
            if (current == null) {
                return;
            }
            switch (current.state()) {
                case MIRRORING, PAUSING -> failPartition(name, partition, error);
                case STOPPING -> {
                    LOGGER.warnf("Mirror %s: %s failed while STOPPING: %s", name, partition, error);
                    PartitionStatus failed = current.withFailure(error, clock.instant());
                    if (!failed.error().equals(current.error())) { // said already: nothing new to write
                        host.persistPartitions(name, Map.of(partition, failed));
                    }
                }
                default -> LOGGER.warnf("Mirror %s: %s (%s) reported: %s", name, partition, current.state(), error);
            }
        });
    }

    /**
     * Checks the destination against the source (LOG_TRUNCATION's check, on a worker) once the partition has left
     * the data plane, then mirrors on from the destination's end, or FAILS the partition with the reason. For a
     * partition {@code waitingIn} MIRRORING (resume) or EPOCH_FENCING; nothing happens if it moved on meanwhile.
     */
    private void recheck(
            String name, MirrorPartition partition, MirrorPartitionState waitingIn, String why, long epochEndOffset) {
        withRuntimeOrFail(
                name, partition, runtime -> recheck(name, partition, waitingIn, why, epochEndOffset, runtime));
    }

    private void recheck(
            String name,
            MirrorPartition partition,
            MirrorPartitionState waitingIn,
            String why,
            long epochEndOffset,
            MirrorParts runtime) {
        checkOnceGone(
                name,
                runtime,
                new PrefixCheck.Check(partition, epochEndOffset, step -> progress.put(name + "/" + partition, step)),
                answer -> {
                    LogTruncation.Outcome checked = outcome(answer, "could not check the destination: ");
                    PartitionStatus now = host.partitions(name).get(partition);
                    if (isHalted(name) || now == null || now.state() != waitingIn) {
                        return; // moved on meanwhile
                    }
                    if (checked instanceof LogTruncation.Ready ready) {
                        Consumer<PartitionStatus> join = mirroring -> mirrorOn(
                                name,
                                partition,
                                mirroring.stateEpoch(),
                                ready,
                                e -> {
                                    if (e instanceof IllegalStateException) {
                                        return why + ": could not mirror on: " + e.getMessage();
                                    }
                                    throw e;
                                },
                                () -> {});
                        if (waitingIn != MirrorPartitionState.MIRRORING) {
                            PartitionStatus mirroring =
                                    now.moveTo(MirrorPartitionState.MIRRORING, null, clock.instant());
                            host.persistPartitions(name, Map.of(partition, mirroring), () -> {
                                LOGGER.infof(
                                        "Mirror %s: %s MIRRORING again from offset %d after %s",
                                        name, partition, ready.startOffset(), why);
                                join.accept(mirroring);
                            });
                        } else {
                            join.accept(now);
                        }
                    } else if (checked instanceof LogTruncation.Diverged diverged) {
                        failPartition(name, partition, why + ": " + diverged.reason());
                    } else if (checked instanceof LogTruncation.Unsupported unsupported) {
                        failPartition(name, partition, why + ": " + unsupported.reason());
                    }
                });
    }

    /**
     * EPOCH_FENCING (DESIGN §3): the source leader's log no longer holds what was fetched from it. The partition
     * leaves the data plane and the destination is checked against the source's new history: still a prefix of
     * it, mirroring goes on; holding records the source lost, FAILED (and LOG_TRUNCATION's policy on retry).
     */
    private void epochFencing(String name, MirrorPartition partition, String reason, long epochEndOffset) {
        PartitionStatus current = host.partitions(name).get(partition);
        if (current == null || current.state() != MirrorPartitionState.MIRRORING) {
            LOGGER.warnf(
                    "Mirror %s: %s (%s) reported: %s",
                    name, partition, current == null ? "gone" : current.state(), reason);
            return;
        }
        metrics.epochFenced(name);
        host.persistPartitions(
                name,
                Map.of(partition, current.moveTo(MirrorPartitionState.EPOCH_FENCING, reason, clock.instant())),
                () -> {
                    host.liveRuntime(name).ifPresent(r -> r.dataPlane().remove(partition, false));
                    LOGGER.warnf("Mirror %s: %s EPOCH_FENCING: %s", name, partition, reason);
                    recheck(
                            name,
                            partition,
                            MirrorPartitionState.EPOCH_FENCING,
                            "epoch fencing (" + reason + ")",
                            epochEndOffset);
                });
    }

    /**
     * Once a move to MIRRORING committed: the partition joins the data plane from where the check found the
     * destination's end, unless it moved on or the mirror halted meanwhile. What the data plane refuses fails the
     * partition with the reason {@code refused} gives.
     */
    private void mirrorOn(
            String name,
            MirrorPartition partition,
            int epoch,
            LogTruncation.Ready ready,
            Function<RuntimeException, String> refused,
            Runnable joined) {
        withRuntimeOrFail(name, partition, runtime -> {
            PartitionStatus now = host.partitions(name).get(partition);
            if (isHalted(name)
                    || now == null
                    || now.stateEpoch() != epoch
                    || now.state() != MirrorPartitionState.MIRRORING) {
                return;
            }
            try {
                runtime.dataPlane().add(partition, ready.startOffset(), ready.sourceEpoch(), ready.sourceEnd());
                joined.run();
            } catch (RuntimeException e) {
                failPartition(name, partition, refused.apply(e));
            }
        });
    }

    /**
     * The mirror's runtime for a partition about to be checked or mirrored, once built (off this thread); when its
     * clients cannot be built (e.g. a config-provider reference that no longer resolves after a restart), the
     * partition goes FAILED with the reason and retries with back-off like any other failure, instead of waiting
     * silently. Nothing runs for a partition that moved on while the clients were built.
     */
    private void withRuntimeOrFail(String name, MirrorPartition partition, Consumer<MirrorParts> then) {
        PartitionStatus asked = host.partitions(name).get(partition);
        int epoch = asked == null ? -1 : asked.stateEpoch();
        host.withRuntime(
                name,
                runtime -> {
                    if (unchanged(name, partition, epoch)) {
                        then.accept(runtime);
                    }
                },
                e -> {
                    if (unchanged(name, partition, epoch)) {
                        failPartition(name, partition, "the mirror's clients could not be built: " + e.getMessage());
                    }
                });
    }

    private boolean unchanged(String name, MirrorPartition partition, int epoch) {
        PartitionStatus now = host.partitions(name).get(partition);
        return now != null && now.stateEpoch() == epoch;
    }

    /** Moves a partition to FAILED (persisted), takes it out of the data plane, and schedules the automatic retry. */
    private void failPartition(String name, MirrorPartition partition, String error) {
        PartitionStatus current = host.partitions(name).get(partition);
        metrics.partitionFailed(name);
        PartitionStatus failed = current.moveTo(MirrorPartitionState.FAILED, error, clock.instant())
                .withRetryAttempt(retries.afterFailure(current.retryAttempt()));
        host.persistPartitions(name, Map.of(partition, failed), () -> {
            host.liveRuntime(name).ifPresent(r -> r.dataPlane().remove(partition, false));
            // WARN while a retry follows (a source outage fails each partition up to maxAttempts times), ERROR once an
            // operator must act
            LOGGER.logf(
                    failed.retryAttempt() >= 0 ? Logger.Level.WARN : Logger.Level.ERROR,
                    "Mirror %s: %s FAILED, %s: %s",
                    name,
                    partition,
                    retries.next(failed.retryAttempt()),
                    error);
            if (failed.retryAttempt() >= 0) {
                long delay = retries.delayMs(failed.retryAttempt());
                int epoch = failed.stateEpoch();
                thread.schedule("retry of " + partition, delay, () -> retry(name, partition, epoch));
            }
        });
    }

    private void retry(String name, MirrorPartition partition, int epoch) {
        PartitionStatus current = host.partitions(name).get(partition);
        if (current == null
                || current.stateEpoch() != epoch
                || current.state() != MirrorPartitionState.FAILED
                || !host.isActive()) {
            return;
        }
        try {
            host.persistPartitions(
                    name,
                    Map.of(
                            partition,
                            current.moveTo(MirrorPartitionState.LOG_TRUNCATION, null, clock.instant())
                                    .withRetryAttempt(current.retryAttempt() + 1)),
                    () -> truncate(name, partition));
        } catch (RuntimeException e) {
            LOGGER.warnf("Mirror %s: retry of %s failed: %s", name, partition, e.getMessage());
        }
    }

    /** The partition mirrors data again: its automatic retries start from zero next time. */
    private void resetRetries(String name, MirrorPartition partition) {
        PartitionStatus current = host.partitions(name).get(partition);
        if (current != null && current.retryAttempt() != 0 && current.state() == MirrorPartitionState.MIRRORING) {
            host.persistPartitions(name, Map.of(partition, current.withRetryAttempt(0)));
        }
    }

    void act(String name, TopicVerb verb, MirrorPartition partition) {
        switch (verb) {
            // a mirror without a running data plane holds no partition in one: nothing to leave, no client to build
            case PAUSE ->
                host.liveRuntime(name)
                        .map(r -> r.dataPlane().remove(partition, false))
                        .orElseGet(() -> CompletableFuture.completedFuture(null))
                        .thenAccept(last -> thread.run(
                                "pause of " + partition,
                                () -> settle(
                                        name,
                                        partition,
                                        MirrorPartitionState.PAUSING,
                                        MirrorPartitionState.PAUSED,
                                        null,
                                        last,
                                        null)));
            // the destination's end is the checkpoint, but only once its last batch is checked against the source:
            // a write while the partition was paused (or the service down) must not be taken as mirrored data
            case RESUME -> recheck(name, partition, MirrorPartitionState.MIRRORING, "resume", -1);
            case RECOVER -> truncate(name, partition);
            case STOP -> stops.stop(name, List.of(partition));
        }
    }

    /**
     * Moves a partition that is still {@code from} on to {@code to}, keeping the last mirrored epoch the data plane
     * reached and a stop's loss report ({@code loss}, null for any other move).
     */
    void settle(
            String name,
            MirrorPartition partition,
            MirrorPartitionState from,
            MirrorPartitionState to,
            String error,
            DataPlane.Progress last,
            LossReport loss) {
        PartitionStatus current = host.partitions(name).get(partition);
        if (current != null && current.state() == from) {
            PartitionStatus next = current.moveTo(to, error != null ? error : current.error(), clock.instant());
            if (last != null && last.lastMirroredEpoch() >= 0) {
                next = next.withLastMirroredEpoch(last.lastMirroredEpoch());
            }
            if (loss != null) {
                next = next.withLossAtStop(loss);
            }
            host.persistPartitions(
                    name, Map.of(partition, next), () -> LOGGER.infof("Mirror %s: %s %s", name, partition, to));
        }
    }

    /** After a restart: every partition continues from its persisted state. */
    void resume(String name) {
        resumes.merge(name, 1, Integer::sum);
        try {
            // one stop for all: a topic is handed back once, when none of its partitions is left active, which
            // partitions stopped one by one never see of each other while all are STOPPING
            List<MirrorPartition> stopping = new ArrayList<>();
            host.partitions(name).forEach((p, s) -> {
                switch (s.state()) {
                    case LOG_TRUNCATION -> truncate(name, p);
                    case MIRRORING -> act(name, TopicVerb.RESUME, p);
                    // the epoch's end on the source is not persisted: after a restart the prefix check alone decides
                    case EPOCH_FENCING ->
                        recheck(name, p, MirrorPartitionState.EPOCH_FENCING, "epoch fencing (" + s.error() + ")", -1);
                    case PAUSING ->
                        settle(name, p, MirrorPartitionState.PAUSING, MirrorPartitionState.PAUSED, null, null, null);
                    case STOPPING -> stopping.add(p);
                    case FAILED -> {
                        if (s.retryAttempt() >= 0) {
                            thread.schedule(
                                    "retry of " + p,
                                    retries.delayAfterRestartMs(),
                                    () -> retry(name, p, s.stateEpoch()));
                        }
                    }
                    default -> {}
                }
            });
            if (!stopping.isEmpty()) {
                stops.stop(name, stopping);
            }
        } catch (RuntimeException e) {
            LOGGER.errorf(e, "Mirror %s: could not resume its partitions", name);
        }
    }

    /** Why the mirror is halted, or null. */
    String haltedReason(String name) {
        return halted.get(name);
    }

    private boolean isHalted(String name) {
        return halted.containsKey(name);
    }

    /**
     * The source cluster's id is not the one the mirror was created for: take every partition out of the data
     * plane (persisted states stay as they are) until {@link #unhalt} finds the right cluster again.
     */
    void halt(String name, String actualClusterId) {
        thread.run("halt of " + name, () -> {
            Mirror mirror = host.mirror(name).orElse(null);
            if (mirror == null || halted.containsKey(name)) {
                return;
            }
            String reason = "source cluster id is " + actualClusterId + ", but mirror '" + name + "' mirrors cluster "
                    + mirror.sourceClusterId() + " (bootstrap "
                    + mirror.config().bootstrapServers()
                    + "): mirroring halted; point bootstrap.servers back at that cluster, or delete the mirror";
            halted.put(name, reason);
            metrics.mirrorHalted(name);
            LOGGER.errorf("Mirror %s: %s", name, reason);
            host.liveRuntime(name)
                    .ifPresent(r -> host.partitions(name)
                            .keySet()
                            .forEach(p -> r.dataPlane().remove(p, false)));
        });
    }

    /** The source is the right cluster again: partitions continue from their persisted states. */
    void unhalt(String name) {
        thread.run("unhalt of " + name, () -> {
            if (halted.remove(name) != null) {
                LOGGER.infof("Mirror %s: source cluster id matches again; mirroring resumes", name);
                host.liveRuntime(name).ifPresent(r -> resume(name));
            }
        });
    }

    /** What the mirror's data plane reports, turned into partition transitions on the coordinator thread. */
    DataPlane.Listener listener(String name) {
        return new DataPlane.Listener() {
            @Override
            public void onFailed(MirrorPartition partition, String error) {
                onDataPlaneFailure(name, partition, error);
            }

            @Override
            public void onEpochFenced(MirrorPartition partition, String reason, long epochEndOffset) {
                thread.run(
                        "epoch fencing of " + partition, () -> epochFencing(name, partition, reason, epochEndOffset));
            }

            @Override
            public void onAppended(MirrorPartition partition, int records, int bytes) {
                metrics.mirrored(name, records, bytes);
                PartitionStatus current = host.partitions(name).get(partition);
                if (current != null && current.retryAttempt() != 0) {
                    thread.run("retry reset of " + partition, () -> resetRetries(name, partition));
                }
            }

            @Override
            public void onSourceClusterChanged(String actualClusterId) {
                halt(name, actualClusterId);
            }

            @Override
            public void onRequest(String api, boolean failed) {
                metrics.request(name, api, failed);
            }

            @Override
            public void onFetched(int sourceBroker, int fetcher, long bytes) {
                metrics.fetched(name, sourceBroker, fetcher, bytes);
            }

            @Override
            public void onThrottled(int sourceBroker, int fetcher, long millis) {
                metrics.throttled(name, sourceBroker, fetcher, millis);
            }
        };
    }
}
