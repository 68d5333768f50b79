package io.clustermirror.coordinator;

import io.clustermirror.fetch.DataPlane;
import io.clustermirror.fetch.LogTruncation;
import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionStatus;
import io.clustermirror.mirror.TopicDivergence;
import java.time.Clock;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/**
 * The partition lifecycle of DESIGN §3 as it runs: LOG_TRUNCATION and its outcome, the data plane's reports (failure,
 * EPOCH_FENCING), FAILED with its automatic retries, the topic verbs' effects (pause, resume, stop, recover), the
 * recreate policy, halting a mirror whose source changed identity, and the restart of every partition from its
 * persisted state. It decides and moves partitions through the coordinator's state ({@link Host}); blocking steps run on
 * the mirror's workers, and every outcome comes back to the coordinator thread.
 */
final class PartitionLifecycle {

    private static final Logger LOGGER = Logger.getLogger(PartitionLifecycle.class);

    /** What the lifecycle needs from the coordinator: its state, the writer of that state, and the mirrors' runtimes. */
    interface Host {
        Map<MirrorPartition, PartitionStatus> partitions(String mirror);

        /** Persists the changed statuses, then makes them the state (coordinator thread). */
        void persistPartitions(String mirror, Map<MirrorPartition, PartitionStatus> changed);

        /** Persists what a recreated topic held, with the changed statuses, in one write (coordinator thread). */
        void persistDivergence(
                String mirror, TopicDivergence divergence, Map<MirrorPartition, PartitionStatus> changed);

        Optional<Mirror> mirror(String name);

        /** The mirror, or UNKNOWN_CLUSTER_MIRROR. */
        Mirror require(String name);

        default boolean exists(String name) {
            return mirror(name).isPresent();
        }

        boolean isActive();

        /** The mirror's running parts, built on first use; throws when its clients cannot be built. */
        MirrorParts runtime(String name);

        Optional<? extends MirrorParts> liveRuntime(String name);
    }

    private final Host host;
    private final CoordinatorThread thread;
    private final RetryPolicy retries;
    private final MirrorMetrics metrics;
    private final Clock clock;
    /** Alignment and other progress notes per partition, for describe. */
    private final Map<String, String> progress = new ConcurrentHashMap<>();

    private final TopicStops stops;
    private final MirrorHalts halts;
    private final TopicRecreation recreation;

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
        this.halts = new MirrorHalts(host, thread, metrics, this::resume);
        this.recreation = new TopicRecreation(host, thread, metrics, clock, this::truncate);
    }

    /** Stops the partitions (STOPPING to STOPPED): see {@link TopicStops}. */
    void stopPartitions(String name, Collection<MirrorPartition> stopping) {
        stops.stop(name, stopping);
    }

    /** The progress note of the partition's current (or last) step, for describe. */
    String progress(String mirror, MirrorPartition partition) {
        return progress.get(mirror + "/" + partition);
    }

    /** A deleted mirror leaves nothing behind. */
    void forget(String mirror) {
        halts.forget(mirror);
        progress.keySet().removeIf(key -> key.startsWith(mirror + "/"));
    }

    /** Runs LOG_TRUNCATION for a partition on a worker; its outcome moves the partition on. */
    void truncate(String name, MirrorPartition partition) {
        MirrorParts runtime = runtimeOrFail(name, partition);
        if (runtime == null) {
            return;
        }
        int epoch = host.partitions(name).get(partition).stateEpoch();
        String key = name + "/" + partition;
        runtime.dataPlane()
                .whenGone(partition)
                .thenRunAsync(
                        () -> {
                            LogTruncation.Outcome outcome;
                            try {
                                outcome = runtime.prefixCheck().run(name, partition, note -> progress.put(key, note));
                            } catch (Exception e) {
                                outcome = new LogTruncation.Unsupported("log truncation could not complete: " + e);
                            }
                            LogTruncation.Outcome result = outcome;
                            thread.run(
                                    "after LOG_TRUNCATION of " + partition,
                                    () -> afterTruncation(name, partition, epoch, result));
                        },
                        runtime.workers());
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
                host.persistPartitions(
                        name, Map.of(partition, current.moveTo(MirrorPartitionState.MIRRORING, null, clock.instant())));
                if (!halts.isHalted(name)) {
                    host.runtime(name).dataPlane().add(partition, ready.startOffset(), ready.sourceEpoch());
                }
                LOGGER.infof("Mirror %s: %s MIRRORING from offset %d", name, partition, ready.startOffset());
            } else if (outcome instanceof LogTruncation.Diverged diverged) {
                if (host.require(name).config().recreateOnDivergence()) {
                    recreation.recreate(name, partition.topic(), diverged.reason());
                } else {
                    failPartition(name, partition, diverged.reason());
                }
            } else if (outcome instanceof LogTruncation.Unsupported unsupported) {
                failPartition(name, partition, unsupported.reason());
            }
        } catch (RuntimeException e) {
            LOGGER.errorf(e, "Mirror %s: %s could not leave LOG_TRUNCATION", name, partition);
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
                    host.persistPartitions(
                            name,
                            Map.of(partition, current.moveTo(MirrorPartitionState.STOPPING, error, clock.instant())));
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
        MirrorParts runtime = runtimeOrFail(name, partition);
        if (runtime == null) {
            return;
        }
        runtime.dataPlane()
                .whenGone(partition)
                .thenRunAsync(
                        () -> {
                            LogTruncation.Outcome outcome;
                            java.util.function.Consumer<String> note =
                                    text -> progress.put(name + "/" + partition, text);
                            try {
                                outcome = epochEndOffset >= 0
                                        ? runtime.prefixCheck().afterEpochFencing(name, partition, epochEndOffset, note)
                                        : runtime.prefixCheck().run(name, partition, note);
                            } catch (Exception e) {
                                outcome = new LogTruncation.Unsupported("could not check the destination: " + e);
                            }
                            LogTruncation.Outcome checked = outcome;
                            thread.run(why + " of " + partition, () -> {
                                PartitionStatus now = host.partitions(name).get(partition);
                                if (halts.isHalted(name) || now == null || now.state() != waitingIn) {
                                    return;
                                }
                                if (checked instanceof LogTruncation.Ready ready) {
                                    if (waitingIn != MirrorPartitionState.MIRRORING) {
                                        host.persistPartitions(
                                                name,
                                                Map.of(
                                                        partition,
                                                        now.moveTo(
                                                                MirrorPartitionState.MIRRORING,
                                                                null,
                                                                clock.instant())));
                                        LOGGER.infof(
                                                "Mirror %s: %s MIRRORING again from offset %d after %s",
                                                name, partition, ready.startOffset(), why);
                                    }
                                    try {
                                        host.runtime(name)
                                                .dataPlane()
                                                .add(partition, ready.startOffset(), ready.sourceEpoch());
                                    } catch (IllegalStateException e) {
                                        failPartition(
                                                name, partition, why + ": could not mirror on: " + e.getMessage());
                                    }
                                } else if (checked instanceof LogTruncation.Diverged diverged) {
                                    failPartition(name, partition, why + ": " + diverged.reason());
                                } else if (checked instanceof LogTruncation.Unsupported unsupported) {
                                    failPartition(name, partition, why + ": " + unsupported.reason());
                                }
                            });
                        },
                        runtime.workers());
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
                name, Map.of(partition, current.moveTo(MirrorPartitionState.EPOCH_FENCING, reason, clock.instant())));
        host.runtime(name).dataPlane().remove(partition, false);
        LOGGER.warnf("Mirror %s: %s EPOCH_FENCING: %s", name, partition, reason);
        recheck(name, partition, MirrorPartitionState.EPOCH_FENCING, "epoch fencing (" + reason + ")", epochEndOffset);
    }

    /**
     * The mirror's runtime for a partition about to be checked or mirrored; when its clients cannot be built (e.g. a
     * config-provider reference that no longer resolves after a restart), the partition goes FAILED with the reason
     * and retries with back-off like any other failure, instead of waiting silently. Null then.
     */
    private MirrorParts runtimeOrFail(String name, MirrorPartition partition) {
        try {
            return host.runtime(name);
        } catch (RuntimeException e) {
            failPartition(name, partition, "the mirror's clients could not be built: " + e.getMessage());
            return null;
        }
    }

    /** Moves a partition to FAILED (persisted), takes it out of the data plane, and schedules the automatic retry. */
    private void failPartition(String name, MirrorPartition partition, String error) {
        PartitionStatus current = host.partitions(name).get(partition);
        metrics.partitionFailed(name);
        PartitionStatus failed = current.moveTo(MirrorPartitionState.FAILED, error, clock.instant())
                .withRetryAttempt(retries.afterFailure(current.retryAttempt()));
        host.persistPartitions(name, Map.of(partition, failed));
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
                                    .withRetryAttempt(current.retryAttempt() + 1)));
            truncate(name, partition);
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
            case PAUSE ->
                host.runtime(name)
                        .dataPlane()
                        .remove(partition, false)
                        .thenAccept(last -> thread.run(
                                "pause of " + partition,
                                () -> settle(
                                        name,
                                        partition,
                                        MirrorPartitionState.PAUSING,
                                        MirrorPartitionState.PAUSED,
                                        null,
                                        last)));
            // the destination's end is the checkpoint, but only once its last batch is checked against the source:
            // a write while the partition was paused (or the service down) must not be taken as mirrored data
            case RESUME -> recheck(name, partition, MirrorPartitionState.MIRRORING, "resume", -1);
            case RECOVER -> truncate(name, partition);
            case STOP -> stops.stop(name, List.of(partition));
        }
    }

    /** Moves a partition that is still {@code from} on to {@code to}, keeping the last mirrored epoch the data plane reached. */
    void settle(
            String name,
            MirrorPartition partition,
            MirrorPartitionState from,
            MirrorPartitionState to,
            String error,
            DataPlane.Progress last) {
        PartitionStatus current = host.partitions(name).get(partition);
        if (current != null && current.state() == from) {
            PartitionStatus next = current.moveTo(to, error != null ? error : current.error(), clock.instant());
            if (last != null && last.lastMirroredEpoch() >= 0) {
                next = next.withLastMirroredEpoch(last.lastMirroredEpoch());
            }
            host.persistPartitions(name, Map.of(partition, next));
            LOGGER.infof("Mirror %s: %s %s", name, partition, to);
        }
    }

    /** After a restart: every partition continues from its persisted state. */
    void resume(String name) {
        try {
            host.partitions(name).forEach((p, s) -> {
                switch (s.state()) {
                    case LOG_TRUNCATION -> truncate(name, p);
                    case MIRRORING -> act(name, TopicVerb.RESUME, p);
                    // the epoch's end on the source is not persisted: after a restart the prefix check alone decides
                    case EPOCH_FENCING ->
                        recheck(name, p, MirrorPartitionState.EPOCH_FENCING, "epoch fencing (" + s.error() + ")", -1);
                    case PAUSING ->
                        settle(name, p, MirrorPartitionState.PAUSING, MirrorPartitionState.PAUSED, null, null);
                    case STOPPING -> stops.stop(name, List.of(p));
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
        } catch (RuntimeException e) {
            LOGGER.errorf(e, "Mirror %s: could not resume its partitions", name);
        }
    }

    /** Why the mirror is halted, or null. */
    String haltedReason(String name) {
        return halts.reason(name);
    }

    void halt(String name, String actualClusterId) {
        halts.halt(name, actualClusterId);
    }

    void unhalt(String name) {
        halts.unhalt(name);
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
