package io.clustermirror.coordinator;

import java.time.Clock;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Pattern;

import org.apache.kafka.common.utils.ExponentialBackoff;

import io.clustermirror.fetch.DestinationTopics;
import io.clustermirror.fetch.LogTruncation;
import io.clustermirror.fetch.MirrorFetcher;

import org.apache.kafka.clients.admin.Admin;
import org.jboss.logging.Logger;

import io.clustermirror.kafka.KafkaClients;
import io.clustermirror.sync.SyncHost;
import io.clustermirror.config.MirrorServiceConfig;
import io.clustermirror.kafka.SourceClusterProbe;
import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorConfigRules;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.MirrorName;
import io.clustermirror.mirror.RegexList;
import io.clustermirror.mirror.StartPlan;
import io.clustermirror.mirror.TopicSelection;
import io.clustermirror.state.MirrorStateStore;
import io.clustermirror.state.MirrorStateStore.CoordinatorFencedException;
import io.clustermirror.state.MirrorStateStore.StateWriteException;
import io.clustermirror.state.MirrorStateTopic;
import io.clustermirror.state.StateFormatException;
import io.clustermirror.state.StateSnapshot;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionStatus;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/**
 * Owns the mirrors. Every change is validated, persisted to {@code __mirror_state} and only then
 * applied in memory, all on one coordinator thread, so concurrent requests are serialised the way a
 * Kafka coordinator serialises its partition's events. Reads see an immutable snapshot and never wait.
 * Slow remote calls (contacting a source cluster) happen before entering the coordinator thread.
 */
@ApplicationScoped
public class MirrorCoordinator implements SyncHost {

    private static final Logger LOGGER = Logger.getLogger(MirrorCoordinator.class);

    private final KafkaClients clients;
    private final MirrorServiceConfig config;
    private final MirrorConfigRules rules;
    private final SourceClusterProbe probe;
    private final MirrorMetrics metrics;
    private final Clock clock = Clock.systemUTC();
    /** A FAILED partition's automatic retries: doubling from the initial back-off up to the maximum, with 20% jitter. */
    private final ExponentialBackoff retryBackoff;
    /** How often a stop that waits for the mirror's clients is tried again. */
    private static final long STOP_RETRY_SECONDS = 3;
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "mirror-coordinator");
        t.setDaemon(true);
        return t;
    });

    private volatile Map<String, Mirror> mirrors = Map.of();
    private volatile Map<String, Map<MirrorPartition, PartitionStatus>> partitionStatuses = Map.of();
    private volatile Map<String, Set<io.clustermirror.mirror.AclEntry>> createdAcls = Map.of();
    private volatile CoordinatorStatus status = CoordinatorStatus.loading("starting");
    /** Alignment and other progress notes per partition, for describe. */
    private final Map<String, String> progress = new ConcurrentHashMap<>();
    /** Touched only on the coordinator thread. */
    private MirrorStateStore store;
    private final MirrorRuntimes runtimes;

    public MirrorCoordinator(KafkaClients clients, MirrorServiceConfig config, MirrorConfigRules rules,
            SourceClusterProbe probe, MirrorMetrics metrics) {
        this.clients = clients;
        this.config = config;
        this.rules = rules;
        this.probe = probe;
        this.metrics = metrics;
        this.runtimes = new MirrorRuntimes(clients, config, metrics);
        this.retryBackoff = new ExponentialBackoff(config.failed().retry().initialBackoffMs(), 2,
                config.failed().retry().maxBackoffMs(), 0.2);
    }

    void onStart(@Observes StartupEvent event) {
        metrics.registerMirrorCount(() -> mirrors.size());
        thread.execute(this::load);
    }

    void onStop(@Observes ShutdownEvent event) {
        thread.execute(() -> {
            runtimes.shutdown();
            if (store != null) {
                store.close();
            }
        });
        thread.shutdown();
        try {
            thread.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Ensures the state topic, takes over as its writer and replays it; retried while the destination is unreachable. */
    private void load() {
        String topic = config.state().topic().name();
        try (Admin admin = clients.destinationAdmin()) {
            int partitions = MirrorStateTopic.ensure(admin, topic, config.state().topic().numPartitions(),
                    config.state().topic().replicationFactor(), config.destination().requestTimeoutMs());
            if (store != null) {
                store.close();
            }
            store = new MirrorStateStore(new MirrorStateStore.Clients() {
                @Override
                public org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]> stateProducer(String transactionalId) {
                    return clients.stateProducer(transactionalId);
                }

                @Override
                public org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]> stateReader() {
                    return clients.stateReader();
                }
            }, topic, partitions, config.destination().requestTimeoutMs());
            StateSnapshot snapshot = store.open();
            runtimes.closeAll(); // a reload starts the data plane afresh from the replayed state
            mirrors = snapshot.mirrors();
            partitionStatuses = snapshot.partitions();
            createdAcls = snapshot.createdAcls();
            status = CoordinatorStatus.active();
            LOGGER.infof("Coordinator active: %d mirror(s) loaded from %s (%d partitions)", mirrors.size(), topic, partitions);
            partitionStatuses.keySet().forEach(this::resume);
        } catch (StateFormatException e) {
            status = CoordinatorStatus.loading(e.getMessage());
            LOGGER.errorf("Refusing to start: %s", e.getMessage());
            Quarkus.asyncExit(1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            String reason = "destination cluster not ready: " + e;
            status = CoordinatorStatus.loading(reason);
            LOGGER.warnf("Cannot load %s yet (%s); retrying in %d ms", topic, e, config.destination().retryBackoffMs());
            if (!thread.isShutdown()) {
                thread.schedule(this::load, config.destination().retryBackoffMs(), TimeUnit.MILLISECONDS);
            }
        }
    }

    public CoordinatorStatus status() {
        return status;
    }

    @Override
    public List<Mirror> list() {
        requireActive();
        return mirrors.values().stream().sorted(Comparator.comparing(Mirror::name)).toList();
    }

    public Mirror describe(String name) {
        requireActive();
        return require(name);
    }

    /** CreateClusterMirror: validate, contact the source for its cluster id, persist. */
    public Uni<Mirror> create(String name, Map<String, String> configValues) {
        return Uni.createFrom().deferred(() -> {
            MirrorName.validate(name);
            MirrorConfig mirrorConfig = rules.validate(configValues);
            requireActive();
            requireAbsent(name);
            return probe.clusterId(name, mirrorConfig).chain(clusterId -> onCoordinator(() -> {
                requireAbsent(name);
                Instant now = clock.instant();
                Mirror mirror = new Mirror(name, mirrorConfig, clusterId, now, now);
                persist(() -> store.putMirror(mirror));
                mirrors = with(mirror);
                LOGGER.infof("Created mirror %s of source cluster %s at %s, config keys %s", name, clusterId,
                        mirrorConfig.bootstrapServers(), mirrorConfig.values().keySet());
                return mirror;
            }));
        }).runSubscriptionOn(Infrastructure.getDefaultWorkerPool()); // validation compiles regexes: never on an event loop
    }

    /**
     * Alters a mirror's config. A change to how the source is reached is checked against the source:
     * it must still be the cluster the mirror was created for.
     */
    public Uni<Mirror> alterConfig(String name, Map<String, String> set, Set<String> delete) {
        return Uni.createFrom().deferred(() -> {
            requireActive();
            Mirror current = require(name);
            MirrorConfig next = rules.alter(current.config(), set, delete);
            Uni<String> clusterId = next.sameSourceConnection(current.config())
                    ? Uni.createFrom().item(current.sourceClusterId())
                    : probe.clusterId(name, next);
            return clusterId.chain(id -> {
                if (!id.equals(current.sourceClusterId())) {
                    throw new MirrorException(MirrorError.INVALID_CONFIG, "The new connection settings reach cluster " + id
                            + ", but mirror '" + name + "' mirrors cluster " + current.sourceClusterId()
                            + "; create a new mirror for a different source", "set." + MirrorConfig.BOOTSTRAP_SERVERS);
                }
                return onCoordinator(() -> {
                    Mirror latest = require(name);
                    if (!latest.config().equals(current.config())) {
                        throw new MirrorException(MirrorError.INVALID_CLUSTER_MIRROR_STATE,
                                "Mirror '" + name + "' was changed by another request meanwhile; read it again and retry");
                    }
                    Mirror updated = latest.withConfig(next, clock.instant());
                    persist(() -> store.putMirror(updated));
                    mirrors = with(updated);
                    LOGGER.infof("Altered config of mirror %s: set %s, deleted %s", name, set.keySet(), delete);
                    return updated;
                });
            });
        }).runSubscriptionOn(Infrastructure.getDefaultWorkerPool()); // validation compiles regexes: never on an event loop
    }

    /** DeleteClusterMirror. */
    public Uni<Void> delete(String name) {
        return onCoordinator(() -> {
            require(name);
            Map<MirrorPartition, PartitionStatus> owned = partitionStatuses.getOrDefault(name, Map.of());
            List<String> busy = owned.entrySet().stream().filter(e -> e.getValue().state() != MirrorPartitionState.STOPPED)
                    .map(e -> e.getKey() + " " + e.getValue().state()).sorted().toList();
            if (!busy.isEmpty()) {
                throw new MirrorException(MirrorError.CLUSTER_MIRROR_NOT_EMPTY, "Mirror '" + name
                        + "' still has partitions that are not STOPPED: " + String.join(", ", busy.subList(0, Math.min(10, busy.size())))
                        + (busy.size() > 10 ? " and " + (busy.size() - 10) + " more" : "") + "; stop its topics first");
            }
            persist(() -> store.deleteMirror(name, owned.keySet()));
            Map<String, Mirror> next = new HashMap<>(mirrors);
            next.remove(name);
            mirrors = Map.copyOf(next);
            Map<String, Map<MirrorPartition, PartitionStatus>> nextStatuses = new HashMap<>(partitionStatuses);
            nextStatuses.remove(name);
            partitionStatuses = Map.copyOf(nextStatuses);
            Map<String, Set<io.clustermirror.mirror.AclEntry>> nextAcls = new HashMap<>(createdAcls);
            nextAcls.remove(name);
            createdAcls = Map.copyOf(nextAcls);
            runtimes.close(name);
            metrics.removeMirror(name);
            halted.remove(name);
            progress.keySet().removeIf(key -> key.startsWith(name + "/"));
            LOGGER.infof("Deleted mirror %s", name);
            return null;
        });
    }

    private <T> Uni<T> onCoordinator(Supplier<T> action) {
        return Uni.createFrom().item(() -> {
            requireActive();
            return action.get();
        }).runSubscriptionOn(thread);
    }

    /** Runs a state write; on failure leaves the in-memory state equal to what the topic holds. */
    private void persist(Runnable write) {
        try {
            write.run();
            metrics.stateWrite(true);
        } catch (CoordinatorFencedException e) {
            metrics.stateWrite(false);
            status = CoordinatorStatus.fenced(e.getMessage());
            LOGGER.error(e.getMessage() + "; stopping this instance's data plane");
            runtimes.closeAll();
            throw new MirrorException(MirrorError.COORDINATOR_NOT_AVAILABLE, e.getMessage());
        } catch (StateWriteException e) {
            metrics.stateWrite(false);
            LOGGER.warnf("State write failed, re-reading %s: %s", config.state().topic().name(), e.getMessage());
            try {
                StateSnapshot snapshot = store.open();
                mirrors = snapshot.mirrors();
                partitionStatuses = snapshot.partitions();
                createdAcls = snapshot.createdAcls();
            } catch (RuntimeException reopen) {
                status = CoordinatorStatus.loading("re-reading state after a failed write: " + reopen);
                thread.schedule(this::load, config.destination().retryBackoffMs(), TimeUnit.MILLISECONDS);
            }
            throw new MirrorException(MirrorError.COORDINATOR_NOT_AVAILABLE, e.getMessage()
                    + "; the change was not confirmed (the state was re-read: GET the mirror to see what holds)");
        }
    }

    private Map<String, Mirror> with(Mirror mirror) {
        Map<String, Mirror> next = new HashMap<>(mirrors);
        next.put(mirror.name(), mirror);
        return Map.copyOf(next);
    }

    private void requireActive() {
        CoordinatorStatus current = status;
        if (!current.isActive()) {
            throw new MirrorException(MirrorError.COORDINATOR_NOT_AVAILABLE,
                    "Mirror state is not available on this instance (" + current.phase() + ": " + current.reason() + ")");
        }
    }

    private Mirror require(String name) {
        Mirror mirror = mirrors.get(name);
        if (mirror == null) {
            throw MirrorException.unknownMirror(name);
        }
        return mirror;
    }

    private void requireAbsent(String name) {
        if (mirrors.containsKey(name)) {
            throw new MirrorException(MirrorError.CLUSTER_MIRROR_ALREADY_EXISTS, "Cluster mirror '" + name + "' already exists", "name");
        }
    }

    // ================================================================ topics and partitions

    /** Runs a task on the coordinator thread; a failure is logged, never lost. */
    private void run(String what, Runnable task) {
        try {
            thread.execute(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    LOGGER.errorf(e, "Coordinator task failed: %s", what);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            LOGGER.debugf("Coordinator is shut down; dropped: %s", what);
        }
    }

    /** Per-partition status of a mirror, as persisted. */
    @Override
    public Map<MirrorPartition, PartitionStatus> partitions(String mirror) {
        return partitionStatuses.getOrDefault(mirror, Map.of());
    }

    public String progress(String mirror, MirrorPartition partition) {
        return progress.get(mirror + "/" + partition);
    }

    /** Live data-plane progress, when the partition is in the fetcher. */
    public java.util.Optional<LiveProgress> liveProgress(String mirror, MirrorPartition partition) {
        return runtimes.liveProgress(mirror, partition);
    }

    /** Current source high watermarks and destination log ends of a topic; blocking, for a worker thread. */
    public Map<MirrorPartition, PartitionOffsets> offsets(String mirror, String topic) {
        return runtimes.offsets(mirror, partitions(mirror).keySet().stream().filter(p -> p.topic().equals(topic)).toList());
    }

    /**
     * StartMirrorTopics: named topics and/or include/exclude patterns; one outcome per topic. Patterns are compiled
     * and the config they extend is validated on a worker thread, never on the caller's (an HTTP event loop).
     */
    public Uni<List<TopicOutcome>> startTopics(String name, TopicSelection selection) {
        return Uni.createFrom().deferred(() -> {
            requireActive();
            Mirror mirror = require(name);
            List<Pattern> includes = patterns(selection.include(), "include");
            List<Pattern> excludes = patterns(selection.exclude(), "exclude");
            if (selection.topics().isEmpty() && includes.isEmpty()) {
                throw new MirrorException(MirrorError.INVALID_REQUEST, "Name topics and/or give include patterns", "topics");
            }
            withPatterns(mirror, selection); // the mirror's lists with these patterns added must be valid too
            long started = System.nanoTime();
            Set<String> reserved = ConcurrentHashMap.newKeySet();
            return onCoordinator(() -> runtime(name)).chain(runtime -> Uni.createFrom().item(() -> prepareTopics(mirror, runtime, selection,
                    includes, excludes, reserved)).runSubscriptionOn(runtime.workers))
                    .invoke(prepared -> LOGGER.infof("Mirror %s: prepared %d destination topic(s) in %d ms", name, prepared.ready().size(),
                            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)))
                    .chain(prepared -> onCoordinator(() -> startPrepared(name, prepared, selection)))
                    .onTermination().invoke(() -> starting.removeAll(reserved));
        }).runSubscriptionOn(Infrastructure.getDefaultWorkerPool());
    }

    private record PreparedTopics(Map<String, DestinationTopics.Prepared> ready, List<TopicOutcome> failed) {
    }

    private PreparedTopics prepareTopics(Mirror mirror, MirrorRuntime runtime, TopicSelection selection, List<Pattern> includes,
            List<Pattern> excludes, Set<String> reserved) {
        Set<String> sourceTopics;
        try {
            sourceTopics = runtime.topics.sourceTopics();
        } catch (Exception e) {
            throw new MirrorException(MirrorError.SOURCE_METADATA_NOT_AVAILABLE, "Could not list the source topics: " + e);
        }
        List<Pattern> allExcludes = new ArrayList<>(excludes);
        allExcludes.addAll(RegexList.compile(mirror.config().list(MirrorConfig.TOPICS_EXCLUDE, MirrorConfig.DEFAULT_TOPICS_EXCLUDE)));
        StartPlan plan = StartPlan.plan(mirror.name(), selection, includes, allExcludes, sourceTopics, config.state().topic().name(),
                partitionStatuses);
        List<String> excludedProps = mirror.config().list(MirrorConfig.TOPIC_PROPERTIES_EXCLUDE, MirrorConfig.DEFAULT_TOPIC_PROPERTIES_EXCLUDE);
        Map<String, DestinationTopics.Prepared> ready = new TreeMap<>();
        List<TopicOutcome> failed = new ArrayList<>(plan.refusals().stream().map(r -> TopicOutcome.error(r.topic(), r.error(), r.reason()))
                .toList());
        for (StartPlan.Candidate candidate : plan.candidates()) {
            String topic = candidate.topic();
            if (!starting.add(topic)) {
                failed.add(TopicOutcome.error(topic, MirrorError.TOPIC_ALREADY_IN_CLUSTER_MIRROR,
                        "another request is starting this topic right now"));
                continue;
            }
            reserved.add(topic);
            try {
                runtime.topics.prepare(topic, excludedProps, candidate.mayAdopt()).ifPresentOrElse(p -> ready.put(topic, p), () -> failed.add(
                        TopicOutcome.error(topic, MirrorError.UNKNOWN_TOPIC_OR_PARTITION, "topic does not exist on the source cluster")));
            } catch (DestinationTopics.TopicConflictException e) {
                failed.add(TopicOutcome.error(topic, MirrorError.TOPIC_ALREADY_EXISTS, e.getMessage()));
            } catch (Exception e) {
                failed.add(TopicOutcome.error(topic, MirrorError.INVALID_CONFIG, "could not prepare the destination topic: " + e.getMessage()));
            }
        }
        return new PreparedTopics(ready, failed);
    }

    private List<TopicOutcome> startPrepared(String name, PreparedTopics prepared, TopicSelection selection) {
        requireActive();
        Mirror mirror = require(name);
        List<TopicOutcome> outcomes = new ArrayList<>(prepared.failed());
        if (!selection.include().isEmpty() || !selection.exclude().isEmpty()) {
            Mirror updated = mirror.withConfig(withPatterns(mirror, selection), clock.instant());
            persist(() -> store.putMirror(updated));
            mirrors = with(updated);
        }
        Map<MirrorPartition, PartitionStatus> changed = new TreeMap<>();
        Instant now = clock.instant();
        for (DestinationTopics.Prepared topic : prepared.ready().values()) {
            for (int p = 0; p < topic.partitions(); p++) {
                MirrorPartition partition = new MirrorPartition(topic.topic(), p);
                PartitionStatus current = partitions(name).getOrDefault(partition, PartitionStatus.initial(now));
                if (current.state() != MirrorPartitionState.UNKNOWN && current.state() != MirrorPartitionState.STOPPED) {
                    continue;
                }
                changed.put(partition, current.moveTo(MirrorPartitionState.LOG_TRUNCATION, null, now));
            }
            outcomes.add(TopicOutcome.ok(topic.topic(), topic.partitions(), "STARTED"));
        }
        persistPartitions(name, changed);
        changed.keySet().forEach(p -> truncate(name, p));
        outcomes.sort(java.util.Comparator.comparing(TopicOutcome::topic));
        return outcomes;
    }

    /** The mirror's config with the selection's include/exclude patterns added, validated (INVALID_REQUEST naming the list). */
    private MirrorConfig withPatterns(Mirror mirror, TopicSelection selection) {
        Map<String, String> set = new HashMap<>();
        appendPatterns(mirror, MirrorConfig.TOPICS_INCLUDE, selection.include(), "", set);
        appendPatterns(mirror, MirrorConfig.TOPICS_EXCLUDE, selection.exclude(), MirrorConfig.DEFAULT_TOPICS_EXCLUDE, set);
        if (set.isEmpty()) {
            return mirror.config();
        }
        try {
            return rules.alter(mirror.config(), set, Set.of());
        } catch (MirrorException e) {
            String field = e.field() != null && e.field().endsWith(MirrorConfig.TOPICS_EXCLUDE) ? "exclude" : "include";
            throw new MirrorException(MirrorError.INVALID_REQUEST, "The mirror's patterns with this request's added would be invalid: "
                    + e.getMessage(), field);
        }
    }

    private static void appendPatterns(Mirror mirror, String key, List<String> added, String defaultValue, Map<String, String> set) {
        if (added.isEmpty()) {
            return;
        }
        Set<String> all = new java.util.LinkedHashSet<>(mirror.config().list(key, defaultValue));
        all.addAll(added);
        set.put(key, String.join(",", all));
    }

    private static List<Pattern> patterns(List<String> regexes, String field) {
        try {
            return RegexList.compile(regexes);
        } catch (IllegalArgumentException e) {
            throw new MirrorException(MirrorError.INVALID_REQUEST, "'" + field + "': " + e.getMessage(), field);
        }
    }

    /** Runs LOG_TRUNCATION for a partition on a worker; its outcome moves the partition on. */
    private void truncate(String name, MirrorPartition partition) {
        MirrorRuntime runtime = runtimeOrFail(name, partition);
        if (runtime == null) {
            return;
        }
        int epoch = partitions(name).get(partition).stateEpoch();
        String key = name + "/" + partition;
        runtime.fetcher.whenGone(partition).thenRunAsync(() -> {
            LogTruncation.Outcome outcome;
            try {
                outcome = runtime.truncation.run(name, partition, note -> progress.put(key, note));
            } catch (Exception e) {
                outcome = new LogTruncation.Unsupported("log truncation could not complete: " + e);
            }
            LogTruncation.Outcome result = outcome;
            run("after LOG_TRUNCATION of " + partition, () -> afterTruncation(name, partition, epoch, result));
        }, runtime.workers);
    }

    private void afterTruncation(String name, MirrorPartition partition, int epoch, LogTruncation.Outcome outcome) {
        PartitionStatus current = partitions(name).get(partition);
        if (current == null || current.stateEpoch() != epoch || current.state() != MirrorPartitionState.LOG_TRUNCATION) {
            return; // stopped or changed meanwhile
        }
        try {
            if (outcome instanceof LogTruncation.Ready ready) {
                persistPartitions(name, Map.of(partition, current.moveTo(MirrorPartitionState.MIRRORING, null, clock.instant())));
                if (!halted.containsKey(name)) {
                    runtime(name).fetcher.add(partition, ready.startOffset(), ready.sourceEpoch());
                }
                LOGGER.infof("Mirror %s: %s MIRRORING from offset %d", name, partition, ready.startOffset());
            } else if (outcome instanceof LogTruncation.Diverged diverged) {
                if (require(name).config().recreateOnDivergence()) {
                    recreate(name, partition.topic(), diverged.reason());
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

    /** Policy {@code recreate}: every partition of the topic leaves the data plane, the destination topic is recreated, all restart. */
    private void recreate(String name, String topic, String reason) {
        MirrorRuntime runtime = runtime(name);
        Instant now = clock.instant();
        Map<MirrorPartition, PartitionStatus> failed = new TreeMap<>();
        partitions(name).forEach((p, s) -> {
            if (p.topic().equals(topic) && s.state() != MirrorPartitionState.STOPPED && s.state() != MirrorPartitionState.STOPPING) {
                failed.put(p, s.moveTo(MirrorPartitionState.FAILED, "destination diverged, recreating the topic: " + reason, now));
            }
        });
        persistPartitions(name, failed);
        LOGGER.warnf("Mirror %s: destination topic %s diverged (%s); recreating it (mirror.truncation.policy=recreate)", name, topic, reason);
        CompletableFuture.allOf(failed.keySet().stream().map(p -> runtime.fetcher.remove(p, true)).toArray(CompletableFuture[]::new))
                .thenRunAsync(() -> {
                    String error = null;
                    try {
                        runtime.topics.recreate(topic, require(name).config().list(MirrorConfig.TOPIC_PROPERTIES_EXCLUDE,
                                MirrorConfig.DEFAULT_TOPIC_PROPERTIES_EXCLUDE));
                    } catch (Exception e) {
                        error = "recreating destination topic " + topic + " failed: " + e;
                    }
                    String recreateError = error;
                    run("restart after recreating " + topic, () -> {
                        Map<MirrorPartition, PartitionStatus> restarted = new TreeMap<>();
                        failed.keySet().forEach(p -> {
                            PartitionStatus s = partitions(name).get(p);
                            if (s != null && s.state() == MirrorPartitionState.FAILED) {
                                restarted.put(p, recreateError == null ? s.moveTo(MirrorPartitionState.LOG_TRUNCATION, null, clock.instant())
                                        : s.moveTo(MirrorPartitionState.FAILED, recreateError, clock.instant()));
                            }
                        });
                        persistPartitions(name, restarted);
                        if (recreateError == null) {
                            restarted.keySet().forEach(p -> truncate(name, p));
                        }
                    });
                }, runtime.workers);
    }

    private void onDataPlaneFailure(String name, MirrorPartition partition, String error) {
        run("data-plane failure of " + partition, () -> {
            PartitionStatus current = partitions(name).get(partition);
            if (current == null) {
                return;
            }
            switch (current.state()) {
                case MIRRORING, PAUSING -> failPartition(name, partition, error);
                case STOPPING -> persistPartitions(name, Map.of(partition, current.moveTo(MirrorPartitionState.STOPPING, error,
                        clock.instant())));
                default -> LOGGER.warnf("Mirror %s: %s (%s) reported: %s", name, partition, current.state(), error);
            }
        });
    }

    /**
     * Checks the destination against the source (LOG_TRUNCATION's check, on a worker) once the partition has left
     * the data plane, then mirrors on from the destination's end, or FAILS the partition with the reason. For a
     * partition {@code waitingIn} MIRRORING (resume) or EPOCH_FENCING; nothing happens if it moved on meanwhile.
     */
    private void recheck(String name, MirrorPartition partition, MirrorPartitionState waitingIn, String why, long epochEndOffset) {
        MirrorRuntime runtime = runtimeOrFail(name, partition);
        if (runtime == null) {
            return;
        }
        runtime.fetcher.whenGone(partition).thenRunAsync(() -> {
            LogTruncation.Outcome outcome;
            java.util.function.Consumer<String> note = text -> progress.put(name + "/" + partition, text);
            try {
                outcome = epochEndOffset >= 0 ? runtime.truncation.afterEpochFencing(name, partition, epochEndOffset, note)
                        : runtime.truncation.run(name, partition, note);
            } catch (Exception e) {
                outcome = new LogTruncation.Unsupported("could not check the destination: " + e);
            }
            LogTruncation.Outcome checked = outcome;
            run(why + " of " + partition, () -> {
                PartitionStatus now = partitions(name).get(partition);
                if (halted.containsKey(name) || now == null || now.state() != waitingIn) {
                    return;
                }
                if (checked instanceof LogTruncation.Ready ready) {
                    if (waitingIn != MirrorPartitionState.MIRRORING) {
                        persistPartitions(name, Map.of(partition, now.moveTo(MirrorPartitionState.MIRRORING, null, clock.instant())));
                        LOGGER.infof("Mirror %s: %s MIRRORING again from offset %d after %s", name, partition, ready.startOffset(), why);
                    }
                    try {
                        runtime(name).fetcher.add(partition, ready.startOffset(), ready.sourceEpoch());
                    } catch (IllegalStateException e) {
                        failPartition(name, partition, why + ": could not mirror on: " + e.getMessage());
                    }
                } else if (checked instanceof LogTruncation.Diverged diverged) {
                    failPartition(name, partition, why + ": " + diverged.reason());
                } else if (checked instanceof LogTruncation.Unsupported unsupported) {
                    failPartition(name, partition, why + ": " + unsupported.reason());
                }
            });
        }, runtime.workers);
    }

    /**
     * EPOCH_FENCING (DESIGN §3): the source leader's log no longer holds what was fetched from it. The partition
     * leaves the data plane and the destination is checked against the source's new history: still a prefix of
     * it, mirroring goes on; holding records the source lost, FAILED (and LOG_TRUNCATION's policy on retry).
     */
    private void epochFencing(String name, MirrorPartition partition, String reason, long epochEndOffset) {
        PartitionStatus current = partitions(name).get(partition);
        if (current == null || current.state() != MirrorPartitionState.MIRRORING) {
            LOGGER.warnf("Mirror %s: %s (%s) reported: %s", name, partition, current == null ? "gone" : current.state(), reason);
            return;
        }
        metrics.epochFenced(name);
        persistPartitions(name, Map.of(partition, current.moveTo(MirrorPartitionState.EPOCH_FENCING, reason, clock.instant())));
        runtime(name).fetcher.remove(partition, false);
        LOGGER.warnf("Mirror %s: %s EPOCH_FENCING: %s", name, partition, reason);
        recheck(name, partition, MirrorPartitionState.EPOCH_FENCING, "epoch fencing (" + reason + ")", epochEndOffset);
    }

    /**
     * The mirror's runtime for a partition about to be checked or mirrored; when its clients cannot be built (e.g. a
     * config-provider reference that no longer resolves after a restart), the partition goes FAILED with the reason
     * and retries with back-off like any other failure, instead of waiting silently. Null then.
     */
    private MirrorRuntime runtimeOrFail(String name, MirrorPartition partition) {
        try {
            return runtime(name);
        } catch (RuntimeException e) {
            failPartition(name, partition, "the mirror's clients could not be built: " + e.getMessage());
            return null;
        }
    }

    /** Moves a partition to FAILED (persisted), takes it out of the data plane, and schedules the automatic retry. */
    private void failPartition(String name, MirrorPartition partition, String error) {
        PartitionStatus current = partitions(name).get(partition);
        metrics.partitionFailed(name);
        int attempt = current.retryAttempt();
        PartitionStatus failed = current.moveTo(MirrorPartitionState.FAILED, error, clock.instant());
        if (attempt < 0 || attempt >= config.failed().retry().maxAttempts()) {
            failed = failed.withRetryAttempt(-1);
        }
        persistPartitions(name, Map.of(partition, failed));
        runtimes.live(name).ifPresent(r -> r.fetcher.remove(partition, false));
        LOGGER.errorf("Mirror %s: %s FAILED (retry attempt %d): %s", name, partition, failed.retryAttempt(), error);
        if (failed.retryAttempt() >= 0) {
            long delay = retryBackoff.backoff(failed.retryAttempt());
            int epoch = failed.stateEpoch();
            thread.schedule(() -> run("retry of " + partition, () -> retry(name, partition, epoch)), delay, TimeUnit.MILLISECONDS);
        }
    }

    private void retry(String name, MirrorPartition partition, int epoch) {
        PartitionStatus current = partitions(name).get(partition);
        if (current == null || current.stateEpoch() != epoch || current.state() != MirrorPartitionState.FAILED || !status.isActive()) {
            return;
        }
        try {
            persistPartitions(name, Map.of(partition, current.moveTo(MirrorPartitionState.LOG_TRUNCATION, null, clock.instant())
                    .withRetryAttempt(current.retryAttempt() + 1)));
            truncate(name, partition);
        } catch (RuntimeException e) {
            LOGGER.warnf("Mirror %s: retry of %s failed: %s", name, partition, e.getMessage());
        }
    }

    /** The partition mirrors data again: its automatic retries start from zero next time. */
    private void resetRetries(String name, MirrorPartition partition) {
        PartitionStatus current = partitions(name).get(partition);
        if (current != null && current.retryAttempt() != 0 && current.state() == MirrorPartitionState.MIRRORING) {
            persistPartitions(name, Map.of(partition, current.withRetryAttempt(0)));
        }
    }

    /** Pause, resume, stop or recover the named topics; all-or-nothing validation against the transition table. */
    public Uni<List<TopicOutcome>> topicVerb(String name, TopicVerb verb, List<String> topics) {
        return topicVerb(name, verb, topics, null);
    }

    private Uni<List<TopicOutcome>> topicVerb(String name, TopicVerb verb, List<String> topics, String reason) {
        return onCoordinator(() -> {
            Mirror mirror = require(name);
            if (topics.isEmpty()) {
                throw new MirrorException(MirrorError.INVALID_REQUEST, "Name at least one topic", "topics");
            }
            Map<MirrorPartition, PartitionStatus> owned = partitions(mirror.name());
            Map<MirrorPartition, PartitionStatus> changed = new TreeMap<>();
            List<String> illegal = new ArrayList<>();
            Instant now = clock.instant();
            for (String topic : new TreeSet<>(topics)) {
                Map<MirrorPartition, PartitionStatus> ofTopic = new TreeMap<>();
                owned.forEach((p, s) -> {
                    if (p.topic().equals(topic)) {
                        ofTopic.put(p, s);
                    }
                });
                if (ofTopic.isEmpty()) {
                    throw new MirrorException(MirrorError.TOPIC_NOT_IN_CLUSTER_MIRROR, "Topic '" + topic + "' is not in mirror '" + name + "'",
                            "topics");
                }
                if (verb == TopicVerb.STOP && ofTopic.values().stream().allMatch(s -> s.state() == MirrorPartitionState.STOPPED)) {
                    throw new MirrorException(MirrorError.MIRROR_TOPIC_ALREADY_STOPPED, "Topic '" + topic + "' is already stopped", "topics");
                }
                ofTopic.forEach((p, s) -> {
                    if (verb.skips(s.state())) {
                        return;
                    }
                    if (!s.state().canMoveTo(verb.target()) || !verb.accepts(s.state())) {
                        illegal.add(p + " is " + s.state());
                        return;
                    }
                    PartitionStatus next = s.moveTo(verb.target(), reason, now);
                    changed.put(p, verb == TopicVerb.RECOVER ? next.withRetryAttempt(0) : next);
                });
            }
            if (!illegal.isEmpty()) {
                throw new MirrorException(MirrorError.INVALID_MIRROR_PARTITION_STATE, "Cannot " + verb.name().toLowerCase(java.util.Locale.ROOT)
                        + ": " + String.join(", ", illegal.subList(0, Math.min(20, illegal.size()))), "topics");
            }
            persistPartitions(name, changed);
            if (verb == TopicVerb.STOP) {
                stopPartitions(name, changed.keySet());
            } else {
                changed.keySet().forEach(p -> act(name, verb, p));
            }
            return new TreeSet<>(topics).stream().map(t -> TopicOutcome.ok(t,
                    (int) owned.keySet().stream().filter(p -> p.topic().equals(t)).count(),
                    changed.keySet().stream().anyMatch(p -> p.topic().equals(t)) ? verb.target().name() : "UNCHANGED")).toList();
        });
    }

    private void act(String name, TopicVerb verb, MirrorPartition partition) {
        switch (verb) {
            case PAUSE -> runtime(name).fetcher.remove(partition, false).thenAccept(last -> run("pause of " + partition,
                    () -> settle(name, partition, MirrorPartitionState.PAUSING, MirrorPartitionState.PAUSED, null, last)));
            // the destination's end is the checkpoint, but only once its last batch is checked against the source:
            // a write while the partition was paused (or the service down) must not be taken as mirrored data
            case RESUME -> recheck(name, partition, MirrorPartitionState.MIRRORING, "resume", -1);
            case RECOVER -> truncate(name, partition);
            case STOP -> stopPartitions(name, List.of(partition));
        }
    }

    /** Takes the partitions out of the data plane; once all of a topic's are out, restores its configs and settles them STOPPED. */
    private void stopPartitions(String name, Collection<MirrorPartition> stopping) {
        MirrorRuntime runtime;
        try {
            runtime = runtime(name);
        } catch (RuntimeException e) {
            awaitClientsToStop(name, stopping, e);
            return;
        }
        Map<String, List<MirrorPartition>> byTopic = new TreeMap<>();
        stopping.forEach(p -> byTopic.computeIfAbsent(p.topic(), t -> new ArrayList<>()).add(p));
        byTopic.forEach((topic, ps) -> {
            Map<MirrorPartition, CompletableFuture<MirrorFetcher.Progress>> removals = new HashMap<>();
            Map<MirrorPartition, Integer> epochs = new HashMap<>();
            ps.forEach(p -> {
                removals.put(p, runtime.fetcher.remove(p, true)); // a stopped topic never shows uncommitted data as committed
                epochs.put(p, partitions(name).get(p).stateEpoch());
            });
            CompletableFuture.allOf(removals.values().toArray(CompletableFuture[]::new)).thenRunAsync(() -> {
                boolean othersActive = partitions(name).entrySet().stream().anyMatch(e -> e.getKey().topic().equals(topic)
                        && !removals.containsKey(e.getKey()) && e.getValue().state() != MirrorPartitionState.STOPPED);
                String error = null;
                if (!othersActive) {
                    try {
                        runtime.topics.restore(topic);
                    } catch (Exception e) {
                        error = "mirror-owned configs of the destination topic could not be restored: " + e;
                    }
                }
                String restoreError = error;
                run("stop of " + topic, () -> removals.forEach((p, removal) -> {
                    PartitionStatus now = partitions(name).get(p);
                    if (now != null && now.stateEpoch() >= epochs.get(p)) {
                        settle(name, p, MirrorPartitionState.STOPPING, MirrorPartitionState.STOPPED, restoreError, removal.getNow(null));
                    }
                }));
            }, runtime.workers);
        });
    }

    private void settle(String name, MirrorPartition partition, MirrorPartitionState from, MirrorPartitionState to, String error,
            MirrorFetcher.Progress last) {
        PartitionStatus current = partitions(name).get(partition);
        if (current != null && current.state() == from) {
            PartitionStatus next = current.moveTo(to, error != null ? error : current.error(), clock.instant());
            if (last != null && last.lastMirroredEpoch() >= 0) {
                next = next.withLastMirroredEpoch(last.lastMirroredEpoch());
            }
            persistPartitions(name, Map.of(partition, next));
            LOGGER.infof("Mirror %s: %s %s", name, partition, to);
        }
    }

    /**
     * A stop needs the mirror's clients (to restore the destination topic's configs from the source's and to abort
     * the destination transactions it holds open); while they cannot be built, the partitions stay STOPPING with the
     * reason in describe and the stop is tried again every few seconds.
     */
    private void awaitClientsToStop(String name, Collection<MirrorPartition> stopping, RuntimeException cause) {
        String reason = "stopping waits for the mirror's clients: " + cause.getMessage();
        Map<MirrorPartition, PartitionStatus> waiting = new TreeMap<>();
        stopping.forEach(p -> {
            PartitionStatus current = partitions(name).get(p);
            if (current != null && current.state() == MirrorPartitionState.STOPPING && !reason.equals(current.error())) {
                waiting.put(p, current.moveTo(MirrorPartitionState.STOPPING, reason, clock.instant()));
            }
        });
        if (!waiting.isEmpty()) {
            persistPartitions(name, waiting);
            LOGGER.warnf("Mirror %s: %s", name, reason);
        }
        thread.schedule(() -> run("stop of " + name, () -> {
            List<MirrorPartition> still = stopping.stream().filter(p -> partitions(name).containsKey(p)
                    && partitions(name).get(p).state() == MirrorPartitionState.STOPPING).toList();
            if (!still.isEmpty() && mirrors.containsKey(name)) {
                stopPartitions(name, still);
            }
        }), STOP_RETRY_SECONDS, TimeUnit.SECONDS);
    }

    /** After a restart: every partition continues from its persisted state. */
    private void resume(String name) {
        try {
            partitions(name).forEach((p, s) -> {
                switch (s.state()) {
                    case LOG_TRUNCATION -> truncate(name, p);
                    case MIRRORING -> act(name, TopicVerb.RESUME, p);
                    // the epoch's end on the source is not persisted: after a restart the prefix check alone decides
                    case EPOCH_FENCING -> recheck(name, p, MirrorPartitionState.EPOCH_FENCING, "epoch fencing (" + s.error() + ")", -1);
                    case PAUSING -> settle(name, p, MirrorPartitionState.PAUSING, MirrorPartitionState.PAUSED, null, null);
                    case STOPPING -> stopPartitions(name, List.of(p));
                    case FAILED -> {
                        if (s.retryAttempt() >= 0) {
                            thread.schedule(() -> run("retry of " + p, () -> retry(name, p, s.stateEpoch())),
                                    config.failed().retry().initialBackoffMs(), TimeUnit.MILLISECONDS);
                        }
                    }
                    default -> {
                    }
                }
            });
        } catch (RuntimeException e) {
            LOGGER.errorf(e, "Mirror %s: could not resume its partitions", name);
        }
    }

    private void persistPartitions(String name, Map<MirrorPartition, PartitionStatus> changed) {
        if (changed.isEmpty()) {
            return;
        }
        persist(() -> store.putPartitions(name, changed));
        Map<MirrorPartition, PartitionStatus> next = new HashMap<>(partitions(name));
        next.putAll(changed);
        Map<String, Map<MirrorPartition, PartitionStatus>> all = new HashMap<>(partitionStatuses);
        all.put(name, Map.copyOf(next));
        partitionStatuses = Map.copyOf(all);
    }

    /** Topics a start is preparing right now (any mirror): a second start of one of them is refused, not run twice. */
    private final Set<String> starting = ConcurrentHashMap.newKeySet();
    /** Mirrors whose source answers with another cluster id: no data plane until it is the right cluster again. */
    private final Map<String, String> halted = new ConcurrentHashMap<>();

    /** Why the mirror is halted, or null. */
    @Override
    public String haltedReason(String name) {
        return halted.get(name);
    }

    /**
     * The source cluster's id is not the one the mirror was created for: take every partition out of the data
     * plane (persisted states stay as they are) until {@link #unhalt} finds the right cluster again.
     */
    @Override
    public void halt(String name, String actualClusterId) {
        run("halt of " + name, () -> {
            Mirror mirror = mirrors.get(name);
            if (mirror == null || halted.containsKey(name)) {
                return;
            }
            String reason = "source cluster id is " + actualClusterId + ", but mirror '" + name + "' mirrors cluster "
                    + mirror.sourceClusterId() + " (bootstrap " + mirror.config().bootstrapServers()
                    + "): mirroring halted; point bootstrap.servers back at that cluster, or delete the mirror";
            halted.put(name, reason);
            metrics.mirrorHalted(name);
            LOGGER.errorf("Mirror %s: %s", name, reason);
            runtimes.live(name).ifPresent(r -> partitions(name).keySet().forEach(p -> r.fetcher.remove(p, false)));
        });
    }

    /** The source is the right cluster again: partitions continue from their persisted states. */
    @Override
    public void unhalt(String name) {
        run("unhalt of " + name, () -> {
            if (halted.remove(name) != null) {
                LOGGER.infof("Mirror %s: source cluster id matches again; mirroring resumes", name);
                runtimes.live(name).ifPresent(r -> resume(name));
            }
        });
    }

    /** The source Admin of a mirror (its runtime is created on first use). */
    @Override
    public Uni<Admin> sourceAdmin(String name) {
        return onCoordinator(() -> runtime(name).sourceAdmin);
    }

    /** The ACLs this mirror created on the destination. */
    @Override
    public Set<io.clustermirror.mirror.AclEntry> createdAcls(String name) {
        return createdAcls.getOrDefault(name, Set.of());
    }

    /** Persists the ACLs this mirror has created (before they are relied on for deletion). */
    @Override
    public Uni<Void> recordCreatedAcls(String name, Set<io.clustermirror.mirror.AclEntry> acls) {
        return onCoordinator(() -> {
            require(name);
            persist(() -> store.putCreatedAcls(name, acls));
            Map<String, Set<io.clustermirror.mirror.AclEntry>> next = new HashMap<>(createdAcls);
            next.put(name, Set.copyOf(acls));
            createdAcls = Map.copyOf(next);
            return null;
        });
    }

    /** The shared destination Admin. */
    @Override
    public Admin destination() {
        return runtimes.destinationAdmin();
    }

    /** The source topic has more partitions: the destination topic grows too and the new partitions are mirrored. */
    @Override
    public Uni<Integer> expand(String name, String topic) {
        return onCoordinator(() -> runtime(name)).chain(runtime -> Uni.createFrom().item(() -> {
            try {
                return runtime.topics.prepare(topic, require(name).config().list(MirrorConfig.TOPIC_PROPERTIES_EXCLUDE,
                        MirrorConfig.DEFAULT_TOPIC_PROPERTIES_EXCLUDE), true).orElseThrow(
                                () -> new MirrorException(MirrorError.UNKNOWN_TOPIC_OR_PARTITION, topic + " vanished from the source"));
            } catch (MirrorException e) {
                throw e;
            } catch (Exception e) {
                throw new MirrorException(MirrorError.UNKNOWN_SERVER_ERROR, "expanding " + topic + " failed: " + e);
            }
        }).runSubscriptionOn(runtime.workers)).chain(prepared -> onCoordinator(() -> {
            Map<MirrorPartition, PartitionStatus> added = new TreeMap<>();
            Instant now = clock.instant();
            for (int p = 0; p < prepared.partitions(); p++) {
                MirrorPartition partition = new MirrorPartition(topic, p);
                if (!partitions(name).containsKey(partition)) {
                    added.put(partition, PartitionStatus.initial(now).moveTo(MirrorPartitionState.LOG_TRUNCATION, null, now));
                }
            }
            persistPartitions(name, added);
            added.keySet().forEach(p -> truncate(name, p));
            LOGGER.infof("Mirror %s: topic %s grew to %d partitions; mirroring %d new", name, topic, prepared.partitions(), added.size());
            return added.size();
        }));
    }

    @Override
    public boolean isActive() {
        return status.isActive();
    }

    @Override
    public Uni<List<String>> startDiscovered(String name, Set<String> topics) {
        return startTopics(name, TopicSelection.named(topics)).map(MirrorCoordinator::failures);
    }

    /** Topics gone from the source: their partitions are stopped (the destination topic stays, writable). */
    @Override
    public Uni<List<String>> stopDeletedOnSource(String name, Set<String> topics) {
        return topicVerb(name, TopicVerb.STOP, List.copyOf(topics), "source topic deleted; the destination topic is kept and writable")
                .map(MirrorCoordinator::failures);
    }

    /** The outcomes that failed, as "topic: reason"; a topic already mirrored is no failure for the sync. */
    private static List<String> failures(List<TopicOutcome> outcomes) {
        return outcomes.stream().filter(o -> o.errorCode() != null && !MirrorError.TOPIC_ALREADY_IN_CLUSTER_MIRROR.name().equals(o.errorCode()))
                .map(o -> o.topic() + ": " + o.error()).toList();
    }
    /** The mirror's runtime, created on first use (coordinator thread). */
    private MirrorRuntime runtime(String name) {
        return runtimes.live(name).orElseGet(() -> runtimes.getOrCreate(require(name), listener(name),
                state -> partitions(name).values().stream().filter(s -> s.state() == state).count()));
    }

    /** What the mirror's data plane reports, turned into partition transitions on the coordinator thread. */
    private MirrorFetcher.Listener listener(String name) {
        return new MirrorFetcher.Listener() {
            @Override
            public void onFailed(MirrorPartition partition, String error) {
                onDataPlaneFailure(name, partition, error);
            }

            @Override
            public void onEpochFenced(MirrorPartition partition, String reason, long epochEndOffset) {
                run("epoch fencing of " + partition, () -> epochFencing(name, partition, reason, epochEndOffset));
            }

            @Override
            public void onAppended(MirrorPartition partition, int records, int bytes) {
                metrics.mirrored(name, records, bytes);
                PartitionStatus current = partitions(name).get(partition);
                if (current != null && current.retryAttempt() != 0) {
                    run("retry reset of " + partition, () -> resetRetries(name, partition));
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
        };
    }
}
