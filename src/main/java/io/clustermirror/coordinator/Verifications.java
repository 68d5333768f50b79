package io.clustermirror.coordinator;

import io.clustermirror.kafka.WireClient;
import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.PartitionStatus;
import io.clustermirror.mirror.RegexList;
import io.clustermirror.mirror.VerificationReport;
import io.clustermirror.verification.Verification;
import io.smallrye.mutiny.Uni;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import org.jboss.logging.Logger;

/**
 * The mirrors' consistency verifications (decisions §46): which partitions a request names, where a {@code "from":
 * "last"} one continues, the recent ones of each mirror for GET, and what each reports to the metrics and the state.
 * A verification runs on its mirror's workers ({@link Verification}); this class only starts it and keeps its report.
 */
final class Verifications {

    private static final Logger LOGGER = Logger.getLogger(Verifications.class);
    /** Verifications kept per mirror for GET: the newest (a running one past them is no longer listed, but runs on). */
    static final int KEPT_PER_MIRROR = 20;

    private final MirrorCoordinator coordinator;
    private final MirrorMetrics metrics;
    private final Clock clock;
    private final int timeoutMs;
    /** The newest last, per mirror. Guarded by itself. */
    private final Map<String, Deque<Verification>> recent = new HashMap<>();

    Verifications(MirrorCoordinator coordinator, MirrorMetrics metrics, Clock clock, int timeoutMs) {
        this.coordinator = coordinator;
        this.metrics = metrics;
        this.clock = clock;
        this.timeoutMs = timeoutMs;
    }

    /** What a request names: topics of the mirror and regexes over its topics, all its partitions in any state. */
    static Set<MirrorPartition> select(Set<MirrorPartition> owned, List<String> topics, List<String> include) {
        if (topics.isEmpty() && include.isEmpty()) {
            throw new MirrorException(MirrorError.INVALID_REQUEST, "Name topics and/or include patterns", "topics");
        }
        Set<String> mirrored = new TreeSet<>();
        owned.forEach(p -> mirrored.add(p.topic()));
        for (String topic : topics) {
            if (!mirrored.contains(topic)) {
                throw new MirrorException(
                        MirrorError.TOPIC_NOT_IN_CLUSTER_MIRROR,
                        "Topic '" + topic + "' is not in this cluster mirror",
                        "topics");
            }
        }
        List<com.google.re2j.Pattern> patterns;
        try {
            patterns = RegexList.compile(include);
        } catch (IllegalArgumentException e) {
            throw new MirrorException(MirrorError.INVALID_REQUEST, e.getMessage(), "include");
        }
        Set<MirrorPartition> selected = new TreeSet<>();
        for (MirrorPartition p : owned) {
            if (topics.contains(p.topic())
                    || patterns.stream().anyMatch(x -> x.matcher(p.topic()).matches())) {
                selected.add(p);
            }
        }
        if (selected.isEmpty()) {
            throw new MirrorException(
                    MirrorError.INVALID_REQUEST, "No topic of the mirror matches the include patterns", "include");
        }
        return selected;
    }

    /**
     * Starts a verification; answered with its first report once it is queued on the mirror's workers, 503 when the
     * mirror's clients were closed while they were built for it (the mirror moved, was read again or deleted), and at
     * the flow deadline whatever else kept it from starting.
     */
    Uni<VerificationReport> start(String name, List<String> topics, List<String> include, boolean fromLast) {
        Uni<VerificationReport> start = coordinator
                .held()
                .onCoordinator(() -> {
                    coordinator.held().require(name);
                    Set<MirrorPartition> partitions =
                            select(coordinator.partitions(name).keySet(), topics, include);
                    Map<MirrorPartition, Long> resume = fromLast ? verifiedUpTo(name) : Map.of();
                    // what it confirms is kept only of a partition that took no transition meanwhile (a recreate
                    // takes several): a log rewritten under a running verification was not the one it compared
                    Map<MirrorPartition, Integer> epochs = new HashMap<>();
                    partitions.forEach(p ->
                            epochs.put(p, coordinator.partitions(name).get(p).stateEpoch()));
                    CompletableFuture<VerificationReport> started = new CompletableFuture<>();
                    coordinator.withRuntimeAnswered(
                            name,
                            runtime -> {
                                try {
                                    started.complete(launch(runtime, partitions, resume, epochs));
                                } catch (RuntimeException e) {
                                    started.completeExceptionally(e);
                                }
                            },
                            started::completeExceptionally);
                    return started;
                })
                .chain(started -> Uni.createFrom().completionStage(started));
        return coordinator
                .flows()
                .bound(start, "verification", name, MirrorError.COORDINATOR_NOT_AVAILABLE, "start it again");
    }

    /** Coordinator thread. */
    private VerificationReport launch(
            MirrorRuntime runtime,
            Set<MirrorPartition> partitions,
            Map<MirrorPartition, Long> resume,
            Map<MirrorPartition, Integer> epochs) {
        String name = runtime.mirror.name();
        String id = UUID.randomUUID().toString();
        Verification verification = new Verification(
                id,
                name,
                partitions,
                resume,
                new Verification.Clusters(
                        runtime.sourceAdmin,
                        runtime.destinationAdmin,
                        () -> WireClient.create(
                                "cluster-mirror-verify-" + name + "-source", runtime.sourceConnection, timeoutMs),
                        () -> WireClient.create(
                                "cluster-mirror-verify-" + name + "-destination",
                                runtime.destinationConnection,
                                timeoutMs),
                        timeoutMs),
                runtime.workers,
                () -> coordinator.settings().throttle().rate(),
                listener(name, epochs),
                clock);
        try {
            verification.start();
        } catch (RejectedExecutionException e) {
            throw new MirrorException(
                    MirrorError.COORDINATOR_NOT_AVAILABLE,
                    "The runtime of mirror '" + name + "' is closing: ask again");
        }
        synchronized (recent) {
            Deque<Verification> kept = recent.computeIfAbsent(name, n -> new ArrayDeque<>());
            kept.addLast(verification);
            // the oldest ended ones go; a running one stays listed (and cancellable) until it ends
            var oldestFirst = kept.iterator();
            while (kept.size() > KEPT_PER_MIRROR && oldestFirst.hasNext()) {
                if (!oldestFirst.next().running()) {
                    oldestFirst.remove();
                }
            }
        }
        LOGGER.infof("Verification %s of mirror %s started: %d partition(s)", id, name, partitions.size());
        return verification.report();
    }

    private Verification.Listener listener(String name, Map<MirrorPartition, Integer> epochs) {
        return new Verification.Listener() {
            @Override
            public void verified(MirrorPartition partition, long upTo) {
                metrics.verifiedOffset(name, partition, upTo);
                remember(name, partition, upTo, epochs.get(partition));
            }

            @Override
            public void differed(MirrorPartition partition) {
                metrics.verificationDifference(name);
            }

            @Override
            public void finished(VerificationReport report) {
                metrics.verification(
                        name,
                        report.verdict() != null
                                ? report.verdict().name()
                                : report.state().name());
                LOGGER.infof(
                        "Verification %s of mirror %s ended %s%s: %d bytes compared",
                        report.id(),
                        name,
                        report.state(),
                        report.verdict() == null ? "" : " " + report.verdict(),
                        report.bytesCompared());
            }
        };
    }

    /** Where each partition was last verified up to (exclusive). */
    Map<MirrorPartition, Long> verifiedUpTo(String name) {
        return coordinator.keeper().state().verified(name);
    }

    /**
     * Keeps how far the partition was verified, in the state (coordinator thread; no request waits for it), if it is
     * still at the state epoch the verification started at: a partition that moved meanwhile (a recreate, which forgets
     * what was verified of the old log; a pause; a failure) keeps what it had, and a next {@code "from": "last"} starts
     * there.
     */
    private void remember(String name, MirrorPartition partition, long upTo, Integer startedAtEpoch) {
        coordinator.thread().run("verified " + name + " " + partition, () -> {
            PartitionStatus now = coordinator.keeper().state().mirrors().containsKey(name)
                    ? coordinator.partitions(name).get(partition)
                    : null;
            if (keeps(now, startedAtEpoch)) {
                coordinator.keeper().queueVerified(name, Map.of(partition, upTo));
            } else {
                LOGGER.debugf(
                        "Mirror %s: %s verified up to %d, not kept: it moved since the verification started",
                        name, partition, upTo);
            }
        });
    }

    /** Whether a partition's verified offset is kept: it is still there, at the state epoch its verification began at. */
    static boolean keeps(PartitionStatus now, Integer startedAtEpoch) {
        return now != null && startedAtEpoch != null && now.stateEpoch() == startedAtEpoch;
    }

    /**
     * Drops the reports of a mirror deleted here or moved to another instance (a mirror created again under its name
     * starts with none); a verification still running ends FAILED, closing its clients: no one could read its report
     * again, so it would not end on its own.
     */
    void forget(String name) {
        Deque<Verification> dropped;
        synchronized (recent) {
            dropped = recent.remove(name);
        }
        if (dropped != null) {
            dropped.forEach(v -> v.cancel("the mirror was deleted, or moved to another instance"));
        }
    }

    /** The mirror's verification, or 404. */
    VerificationReport get(String name, String id) {
        coordinator.describe(name);
        synchronized (recent) {
            for (Verification v : recent.getOrDefault(name, new ArrayDeque<>())) {
                if (v.id().equals(id)) {
                    return v.report();
                }
            }
        }
        throw new MirrorException(MirrorError.NOT_FOUND, "No verification '" + id + "' of mirror '" + name + "'");
    }

    /** The mirror's recent verifications, newest first. */
    List<VerificationReport> list(String name) {
        coordinator.describe(name);
        List<VerificationReport> reports = new ArrayList<>();
        synchronized (recent) {
            recent.getOrDefault(name, new ArrayDeque<>())
                    .descendingIterator()
                    .forEachRemaining(v -> reports.add(v.report()));
        }
        return reports;
    }
}
