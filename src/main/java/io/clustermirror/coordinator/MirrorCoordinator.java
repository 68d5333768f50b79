package io.clustermirror.coordinator;

import io.clustermirror.config.MirrorServiceConfig;
import io.clustermirror.fetch.FetchBudget;
import io.clustermirror.fetch.FetcherPool;
import io.clustermirror.kafka.KafkaClients;
import io.clustermirror.kafka.SourceClusterProbe;
import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.AclEntry;
import io.clustermirror.mirror.CatchUpWindow;
import io.clustermirror.mirror.LossReport;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorConfigRules;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.MirrorName;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.MirrorProgress;
import io.clustermirror.mirror.PartitionProgress;
import io.clustermirror.mirror.PartitionStatus;
import io.clustermirror.mirror.RecoveryPoint;
import io.clustermirror.mirror.TopicDivergence;
import io.clustermirror.mirror.TopicPromotion;
import io.clustermirror.mirror.TopicSelection;
import io.clustermirror.mirror.VerificationReport;
import io.clustermirror.topics.ForeignStateTopics;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.jboss.logging.Logger;

/**
 * Owns the mirrors. Every change is validated, persisted to {@code __mirror_state} and only then
 * applied in memory, all on one coordinator thread, so concurrent requests are serialised the way a
 * Kafka coordinator serialises its partition's events. Reads see an immutable snapshot and never wait.
 * Slow remote calls (contacting a source cluster) happen before entering the coordinator thread.
 * Its rooms: {@link CoordinatorThread} (the thread), {@link CoordinatorState} (the snapshot), {@link TopicStarts} and
 * {@link TopicStops} (the verbs that take and hand back destination topics), {@link PartitionLifecycle} (the partition
 * state machine as it runs), {@link MirrorRuntimes} (each mirror's clients and data plane) and {@link HeldMirrors}
 * (whether this instance may act for a mirror now: the state active, the mirror's state partition held); this class boots and
 * replays the state and serves mirror CRUD and the topic verbs; {@link MetadataSyncHost} applies what the metadata sync asks.
 */
@ApplicationScoped
public class MirrorCoordinator {

    private static final Logger LOGGER = Logger.getLogger(MirrorCoordinator.class);
    /** At most this long to read the first records of a start's existing destination topics (state topic check). */
    private static final int STATE_TOPIC_CHECK_TIMEOUT_MS = 10_000;

    private final KafkaClients clients;
    private final MirrorServiceConfig config;
    private final MirrorConfigRules rules;
    private final SourceClusterProbe probe;
    private final MirrorMetrics metrics;
    private final Clock clock = Clock.systemUTC();
    private final CoordinatorThread thread = new CoordinatorThread();

    private final StateKeeper keeper;
    private final StateGroup group;
    private final HeldMirrors held;

    private final MirrorRuntimes runtimes;
    private final PartitionLifecycle lifecycle;
    private final TopicPromotes promotes;
    private final TopicStarts starts;
    private final FlowDeadlines flows;
    private final ServiceConfigs settings;
    private final PartitionRates rates = new PartitionRates();
    private final RecoveryPoints recoveryPoints = new RecoveryPoints();
    private final Verifications verifications;

    public MirrorCoordinator(
            KafkaClients clients,
            MirrorServiceConfig config,
            MirrorConfigRules rules,
            SourceClusterProbe probe,
            MirrorMetrics metrics,
            Vertx vertx) {
        this.clients = clients;
        this.config = config;
        this.rules = rules;
        this.probe = probe;
        this.metrics = metrics;
        this.settings = new ServiceConfigs(this, config, metrics);
        this.runtimes = new MirrorRuntimes(
                clients, config, metrics, () -> fetcherPool(vertx), settings.throttle(), thread, recoveryPoints);
        ServiceInstance.Identity identity = ServiceInstance.Identity.of(config);
        this.keeper = new StateKeeper(clients, config, metrics, rules, thread, new StateKeeper.Listener() {
            @Override
            public void ready() {
                group.start();
            }

            @Override
            public void loaded(CoordinatorState state) {
                settings.apply(state.serviceConfigs());
                runtimes.closeAll(); // a reload starts the data plane afresh from the replayed state
                state.partitions().keySet().forEach(lifecycle::resume);
                state.mirrors().keySet().forEach(promotes.fences()::recover);
            }

            @Override
            public void taken(CoordinatorState part) {
                settings.apply(keeper.state().serviceConfigs());
                part.partitions().keySet().forEach(lifecycle::resume);
                part.mirrors().keySet().forEach(promotes.fences()::recover);
            }

            @Override
            public CompletableFuture<Void> givenUp(Set<String> mirrors) {
                List<CompletableFuture<Void>> closed = new ArrayList<>();
                for (String name : mirrors) {
                    closed.add(runtimes.closing(name));
                    metrics.removeMirror(name);
                    lifecycle.forget(name);
                    verifications.forget(name);
                }
                return CompletableFuture.allOf(closed.toArray(CompletableFuture[]::new));
            }
        });
        this.group = new StateGroup(clients, config, identity, keeper, thread, metrics);
        this.held = new HeldMirrors(keeper, group, thread, identity);
        this.verifications =
                new Verifications(this, metrics, clock, config.destination().requestTimeoutMs());
        this.flows = new FlowDeadlines(metrics, Duration.ofMillis(config.flow().timeoutMs()));
        this.lifecycle = new PartitionLifecycle(
                new CoordinatorPorts.Lifecycle(this),
                thread,
                RetryPolicy.of(config.failed().retry()),
                metrics,
                clock,
                flows);
        this.starts = new TopicStarts(
                new CoordinatorPorts.Starts(this),
                rules,
                config.state().topic().name(),
                new ForeignStateTopics(
                        this::destinationAdmin,
                        clients::destinationSampler,
                        Math.min(config.destination().requestTimeoutMs(), STATE_TOPIC_CHECK_TIMEOUT_MS)),
                flows);
        this.promotes = new TopicPromotes(
                new CoordinatorPorts.Promotes(this, metrics),
                thread,
                metrics,
                clock,
                config.destination().requestTimeoutMs(),
                flows);
    }

    /**
     * The instance's fetcher pool: {@code mirror.fetcher.threads} fetchers turning on a named Vert.x worker pool of as
     * many threads (so a turn always finds a thread; its blocked-thread check warns past the stuck-loop limit).
     */
    private FetcherPool fetcherPool(Vertx vertx) {
        int threads = config.fetcherThreads();
        FetchBudget budget = new FetchBudget(config.fetcherBufferBytes());
        metrics.registerFetchBudget(budget::queued, budget.limit());
        WorkerExecutor workers = vertx.createSharedWorkerExecutor(
                "cluster-mirror-fetcher", threads, stuckAfterMs(), TimeUnit.MILLISECONDS);
        return new FetcherPool(
                threads,
                task -> workers.executeBlocking(
                        () -> {
                            task.run();
                            return null;
                        },
                        false),
                clients.destinationConnection(),
                config.destination().requestTimeoutMs(),
                budget,
                () -> this.group.leaseValid());
    }

    void onStart(@Observes StartupEvent event) {
        metrics.registerMirrorCount(() -> keeper.state().mirrors().size());
        metrics.registerCoordinatorQueue(thread::queued);
        thread.run("load", keeper::load);
    }

    void onStop(@Observes ShutdownEvent event) {
        group.close(Duration.ofSeconds(20)); // its partitions given up first: their mirrors stop, then move at once
        thread.shutdown(() -> {
            runtimes.shutdown();
            keeper.close();
        });
    }

    /**
     * The data planes' liveness check, every 5 s: a loop that has not gone round for {@link #stuckAfterMs()} is stuck
     * (every remote call it makes has a timeout, so none legitimately waits that long).
     */
    @Scheduled(every = "5s", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void checkDataPlanes() {
        runtimes.checkLiveness(stuckAfterMs());
    }

    /** The data planes' rates: one sample of each every {@value PartitionRates#SAMPLE_EVERY} (volatile reads only). */
    @Scheduled(every = PartitionRates.SAMPLE_EVERY, concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void sampleRates() {
        runtimes.sampleRates(rates, TimeUnit.NANOSECONDS.toMillis(System.nanoTime()));
    }

    /** The service settings another instance wrote: see {@link ServiceConfigs#follow()}. */
    @Scheduled(every = "5s", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void followServiceConfigs() {
        settings.follow();
    }

    /**
     * The recovery points of every partition not STOPPED, every 5 s on each mirror's workers (a source that does not
     * answer holds one worker of its mirror for the read's timeout, and the next sample waits for it). A partition in
     * LOG_TRUNCATION whose check has not begun is left out (its recovery point stays unknown until then): its topic
     * may have just been created, and the destination not serve it yet.
     */
    @Scheduled(every = "5s", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void sampleRecoveryPoints() {
        Map<String, Set<MirrorPartition>> active = new HashMap<>();
        keeper.state().mirrors().keySet().forEach(name -> {
            Set<MirrorPartition> partitions = new HashSet<>();
            partitions(name).forEach((p, s) -> {
                boolean unchecked =
                        s.state() == MirrorPartitionState.LOG_TRUNCATION && lifecycle.truncation(name, p) == null;
                if (s.state() != MirrorPartitionState.STOPPED && !unchecked) {
                    partitions.add(p);
                }
            });
            active.put(name, partitions);
        });
        runtimes.sampleRecoveryPoints(active);
    }

    /**
     * The recovery point of each partition from its ends just read ({@link #offsets}); null where it cannot be told.
     * Blocking (it may read the timestamps of source records), for a worker thread.
     */
    public Map<MirrorPartition, RecoveryPoint> recoveryPoints(
            String mirror, Map<MirrorPartition, PartitionOffsets> offsets) {
        long now = System.currentTimeMillis();
        Map<MirrorPartition, RecoveryPoint> rpos = new HashMap<>();
        runtimes.recoveryPoints(mirror, offsets).forEach((p, in) -> rpos.put(p, in.at(now)));
        return rpos;
    }

    /** The stop's loss report of each partition: see {@link LossReport}. Blocking, for a worker thread. */
    Map<MirrorPartition, LossReport> lossAtStop(String mirror, Collection<MirrorPartition> partitions) {
        Map<MirrorPartition, PartitionOffsets> offsets = runtimes.offsets(mirror, partitions);
        Map<MirrorPartition, RecoveryPoints.Inputs> inputs = runtimes.recoveryPoints(mirror, offsets);
        long now = System.currentTimeMillis();
        Map<MirrorPartition, LossReport> losses = new HashMap<>();
        offsets.forEach((p, o) -> {
            RecoveryPoints.Inputs in = inputs.get(p);
            losses.put(
                    p,
                    LossReport.of(
                            now,
                            o.sourceEnd(),
                            o.destinationEnd(),
                            in == null ? null : in.sighting(),
                            in == null ? null : in.at(now)));
        });
        return losses;
    }

    private long stuckAfterMs() {
        return Math.max(
                300_000L,
                10L
                        * Math.max(
                                config.destination().requestTimeoutMs(),
                                config.source().requestTimeoutMs()));
    }

    public CoordinatorStatus status() {
        return keeper.status();
    }

    public List<Mirror> list() {
        held.requireActive();
        return keeper.state().mirrors().values().stream()
                .sorted(Comparator.comparing(Mirror::name))
                .toList();
    }

    public Mirror describe(String name) {
        held.requireActive();
        return held.require(name);
    }

    /** CreateClusterMirror: validate, contact the source for its cluster id, persist. */
    public Uni<Mirror> create(String name, Map<String, String> configValues) {
        return Uni.createFrom()
                .deferred(() -> {
                    MirrorName.validate(name);
                    MirrorConfig mirrorConfig = rules.validate(configValues);
                    held.requireActive();
                    held.requireAbsent(name);
                    return probe.clusterId(name, mirrorConfig)
                            .chain(clusterId -> held.onCoordinator(() -> {
                                held.requireAbsent(name);
                                Instant now = clock.instant();
                                Mirror mirror = new Mirror(name, mirrorConfig, clusterId, now, now);
                                keeper.putMirror(mirror);
                                group.rebalanceSoon();
                                LOGGER.infof(
                                        "Created mirror %s of source cluster %s at %s, config keys %s",
                                        name,
                                        clusterId,
                                        mirrorConfig.bootstrapServers(),
                                        mirrorConfig.values().keySet());
                                return mirror;
                            }));
                })
                .runSubscriptionOn(
                        Infrastructure.getDefaultWorkerPool()); // validation compiles regexes: never on an event loop
    }

    /**
     * Alters a mirror's config. A change to how the source is reached is checked against the source:
     * it must still be the cluster the mirror was created for.
     */
    public Uni<Mirror> alterConfig(String name, Map<String, String> set, Set<String> delete) {
        return Uni.createFrom()
                .deferred(() -> {
                    held.requireActive();
                    Mirror current = held.require(name);
                    MirrorConfig next = rules.alter(current.config(), set, delete);
                    Uni<String> clusterId = next.sameSourceConnection(current.config())
                            ? Uni.createFrom().item(current.sourceClusterId())
                            : probe.clusterId(name, next);
                    return clusterId.chain(id -> {
                        if (!id.equals(current.sourceClusterId())) {
                            throw new MirrorException(
                                    MirrorError.INVALID_CONFIG,
                                    "The new connection settings reach cluster " + id
                                            + ", but mirror '" + name + "' mirrors cluster " + current.sourceClusterId()
                                            + "; create a new mirror for a different source",
                                    "set." + MirrorConfig.BOOTSTRAP_SERVERS);
                        }
                        return held.onCoordinator(() -> {
                            Mirror latest = held.require(name);
                            if (!latest.config().equals(current.config())) {
                                throw new MirrorException(
                                        MirrorError.INVALID_CLUSTER_MIRROR_STATE,
                                        "Mirror '" + name
                                                + "' was changed by another request meanwhile; read it again and retry");
                            }
                            Mirror updated = latest.withConfig(next, clock.instant());
                            keeper.putMirror(updated);
                            LOGGER.infof("Altered config of mirror %s: set %s, deleted %s", name, set.keySet(), delete);
                            return updated;
                        });
                    });
                })
                .runSubscriptionOn(
                        Infrastructure.getDefaultWorkerPool()); // validation compiles regexes: never on an event loop
    }

    /** DeleteClusterMirror. */
    public Uni<Void> delete(String name) {
        return held.onCoordinator(() -> {
            held.require(name);
            Map<MirrorPartition, PartitionStatus> owned = partitions(name);
            List<String> busy = owned.entrySet().stream()
                    .filter(e -> e.getValue().state() != MirrorPartitionState.STOPPED)
                    .map(e -> e.getKey() + " " + e.getValue().state())
                    .sorted()
                    .toList();
            if (!busy.isEmpty()) {
                throw new MirrorException(
                        MirrorError.CLUSTER_MIRROR_NOT_EMPTY,
                        "Mirror '" + name
                                + "' still has partitions that are not STOPPED: "
                                + String.join(", ", busy.subList(0, Math.min(10, busy.size())))
                                + (busy.size() > 10 ? " and " + (busy.size() - 10) + " more" : "")
                                + "; stop its topics first");
            }
            keeper.deleteMirror(name, owned.keySet());
            group.rebalanceSoon();
            runtimes.close(name);
            metrics.removeMirror(name);
            lifecycle.forget(name);
            verifications.forget(name);
            LOGGER.infof("Deleted mirror %s", name);
            return null;
        });
    }

    /** Whether this instance may act for a mirror now: see {@link HeldMirrors}. */
    public HeldMirrors held() {
        return held;
    }

    /** The deadlines of the flows (start, stop, promote, verification), counted when missed. */
    FlowDeadlines flows() {
        return flows;
    }

    // ================================================================ topics and partitions

    /** Per-partition status of a mirror, as persisted. */
    public Map<MirrorPartition, PartitionStatus> partitions(String mirror) {
        return keeper.state().partitions(mirror);
    }

    /**
     * How far the partition is, for describe: its last LOG_TRUNCATION check, and while MIRRORING the rates of the last
     * {@link CatchUpWindow#WINDOW_MS} ms and the time to catch up {@code lag} records at them.
     */
    public PartitionProgress progress(String mirror, MirrorPartition partition, MirrorPartitionState state, long lag) {
        return PartitionProgress.of(
                state, lag, lifecycle.truncation(mirror, partition), rates.rates(mirror, partition));
    }

    /**
     * The mirror's progress over its MIRRORING partitions, each one's lag as its data plane saw it at the last sample
     * (no cluster is read and nothing waited for: describe of a mirror runs on the event loop); a partition not sampled
     * in the data plane (yet) has an unknown lag.
     */
    public MirrorProgress mirrorProgress(String mirror) {
        Map<MirrorPartition, PartitionRates.Measured> measured = rates.measured(mirror);
        List<MirrorProgress.Partition> mirroring = new ArrayList<>();
        partitions(mirror).forEach((p, s) -> {
            if (s.state() == MirrorPartitionState.MIRRORING) {
                PartitionRates.Measured m = measured.get(p);
                mirroring.add(new MirrorProgress.Partition(
                        p,
                        PartitionProgress.of(
                                s.state(),
                                m == null ? -1 : m.lag(),
                                lifecycle.truncation(mirror, p),
                                m == null ? null : m.rates())));
            }
        });
        return MirrorProgress.of(mirroring, MirrorProgress.SLOWEST);
    }

    /** Live data-plane progress, when the partition is in the fetcher. */
    public Optional<LiveProgress> liveProgress(String mirror, MirrorPartition partition) {
        return runtimes.liveProgress(mirror, partition);
    }

    /** Current source high watermarks and destination log ends of a topic; blocking, for a worker thread. */
    public Map<MirrorPartition, PartitionOffsets> offsets(String mirror, String topic) {
        return runtimes.offsets(
                mirror,
                partitions(mirror).keySet().stream()
                        .filter(p -> p.topic().equals(topic))
                        .toList());
    }

    /** StartMirrorTopics: see {@link TopicStarts}. */
    public Uni<List<TopicOutcome>> startTopics(String name, TopicSelection selection) {
        return starts.start(name, selection);
    }

    /**
     * The metadata sync cycle's start of new source topics: it answers once their destination topics are created, not
     * served yet (their LOG_TRUNCATION waits for that), so that the cycle's other steps do not wait for the broker.
     */
    Uni<List<TopicOutcome>> startDiscoveredTopics(String name, Set<String> topics) {
        return starts.start(name, TopicSelection.named(topics), false);
    }

    /** Pause, resume, stop or recover the named topics; all-or-nothing validation against the transition table. */
    public Uni<List<TopicOutcome>> topicVerb(String name, TopicVerb verb, List<String> topics) {
        return topicVerb(name, verb, topics, null);
    }

    Uni<List<TopicOutcome>> topicVerb(String name, TopicVerb verb, List<String> topics, String reason) {
        Uni<List<TopicOutcome>> planned = held.onCoordinator(() -> {
            Mirror mirror = held.require(name);
            if (topics.isEmpty()) {
                throw new MirrorException(MirrorError.INVALID_REQUEST, "Name at least one topic", "topics");
            }
            Map<MirrorPartition, PartitionStatus> owned = partitions(mirror.name());
            Map<MirrorPartition, PartitionStatus> changed = verb.plan(name, owned, topics, reason, clock.instant());
            persistPartitions(name, changed);
            if (verb == TopicVerb.STOP) {
                lifecycle.stopPartitions(name, changed.keySet());
            } else {
                changed.keySet().forEach(p -> lifecycle.act(name, verb, p));
            }
            return new TreeSet<>(topics)
                    .stream()
                            .map(t -> TopicOutcome.ok(
                                    t,
                                    (int) owned.keySet().stream()
                                            .filter(p -> p.topic().equals(t))
                                            .count(),
                                    changed.keySet().stream()
                                                    .anyMatch(p -> p.topic().equals(t))
                                            ? verb.target().name()
                                            : "UNCHANGED"))
                            .toList();
        });
        return flows.bound(
                planned,
                verb.name().toLowerCase(Locale.ROOT),
                name,
                MirrorError.COORDINATOR_NOT_AVAILABLE,
                "the coordinator did not get to it and may still: describe the topics before asking again");
    }

    void persistPartitions(String name, Map<MirrorPartition, PartitionStatus> changed) {
        keeper.putPartitions(name, changed);
    }

    /** Why the mirror is halted (its source changed identity), or null. */
    public String haltedReason(String name) {
        return lifecycle.haltedReason(name);
    }

    /** The ACLs this mirror created on the destination. */
    public Set<AclEntry> createdAcls(String name) {
        return keeper.state().createdAcls(name);
    }

    /** Persists the ACLs this mirror has created (before they are relied on for deletion). */
    public Uni<Void> recordCreatedAcls(String name, Set<AclEntry> acls) {
        return held.onCoordinator(() -> {
            held.require(name);
            keeper.putCreatedAcls(name, acls);
            return null;
        });
    }

    /**
     * Starts a consistency verification of the named topics and those the regexes match (any state): see
     * {@link Verifications}. {@code fromLast}: each partition continues where the last verification of it ended.
     */
    public Uni<VerificationReport> startVerification(
            String name, List<String> topics, List<String> include, boolean fromLast) {
        return verifications.start(name, topics, include, fromLast);
    }

    /** A recent verification of the mirror; NOT_FOUND when it has none of that id. */
    public VerificationReport verification(String name, String id) {
        return verifications.get(name, id);
    }

    /** The mirror's recent verifications, newest first. */
    public List<VerificationReport> verifications(String name) {
        return verifications.list(name);
    }

    /** The shared destination Admin. */
    Admin destinationAdmin() {
        return runtimes.destinationAdmin();
    }

    PartitionLifecycle lifecycle() {
        return lifecycle;
    }

    /** A planned switchover of topics: see {@link TopicPromotes}. */
    public Uni<TopicPromotes.Outcome> promote(String name, TopicPromotes.Request request) {
        return promotes.promote(name, request);
    }

    /** The divergent tail preserved when the topic was last recreated (failback), if any. */
    public Optional<TopicDivergence> divergence(String name, String topic) {
        return Optional.ofNullable(keeper.state().divergences(name).get(topic));
    }

    /** The mirror's topic promotions (under way, or the proof of those that completed), by topic. */
    public Map<String, TopicPromotion> promotions(String name) {
        return keeper.state().promotions(name);
    }

    /** Why the last attempt to lift the source fence of the topic's promotion failed, while it is retried. */
    public Optional<String> fenceLiftError(String name, String topic) {
        return promotes.fences().liftError(name, topic);
    }

    TopicPromotes promotes() {
        return promotes;
    }

    /** The service settings that change at runtime: see {@link ServiceConfigs}. */
    public ServiceConfigs settings() {
        return settings;
    }

    /** How many mirrors the state holds (0 before it is loaded). */
    public int mirrorCount() {
        return keeper.state().mirrors().size();
    }

    StateKeeper keeper() {
        return keeper;
    }

    CoordinatorThread thread() {
        return thread;
    }

    MirrorRuntimes runtimes() {
        return runtimes;
    }

    /** The mirror's runtime once built (off the coordinator thread), continuing on the coordinator thread. */
    Uni<MirrorRuntime> runtime(String name) {
        return held.onCoordinator(() -> whenBuilt(name))
                .chain(built -> Uni.createFrom().completionStage(built));
    }

    /**
     * The mirror's runtime for {@code then} (coordinator thread): at once when it runs, else once its clients were built
     * on a worker; {@code failed} with why they could not be. Neither runs when a close overtook the build (a reload
     * restarts every flow from the state; a deleted mirror has none).
     */
    void withRuntime(String name, Consumer<? super MirrorRuntime> then, Consumer<RuntimeException> failed) {
        withRuntime(name, then, failed, false);
    }

    /**
     * Like {@link #withRuntime(String, Consumer, Consumer)} for a request that waits for its answer: a close that
     * overtook the build is {@code failed} too (COORDINATOR_NOT_AVAILABLE, to try again), as no reload answers it.
     */
    void withRuntimeAnswered(String name, Consumer<? super MirrorRuntime> then, Consumer<RuntimeException> failed) {
        withRuntime(name, then, failed, true);
    }

    private void withRuntime(
            String name, Consumer<? super MirrorRuntime> then, Consumer<RuntimeException> failed, boolean answered) {
        CompletableFuture<MirrorRuntime> built;
        try {
            built = whenBuilt(name);
        } catch (RuntimeException e) {
            failed.accept(e);
            return;
        }
        if (built.isDone() && !built.isCompletedExceptionally()) {
            then.accept(built.join()); // running: as if it were a call, exceptions included
            return;
        }
        built.whenComplete((runtime, error) -> {
            try {
                if (error == null) {
                    then.accept(runtime);
                } else if (error instanceof RuntimeBuilds.ClosedMeanwhile closed) {
                    if (answered) {
                        failed.accept(closed); // COORDINATOR_NOT_AVAILABLE: try again
                    }
                } else {
                    failed.accept(
                            error instanceof RuntimeException e
                                    ? e
                                    : new IllegalStateException(error.toString(), error));
                }
            } catch (RuntimeException e) {
                LOGGER.errorf(e, "Coordinator task failed: after the clients of mirror %s were built", name);
            }
        });
    }

    /** Coordinator thread. */
    private CompletableFuture<MirrorRuntime> whenBuilt(String name) {
        return runtimes.whenBuilt(
                held.require(name),
                lifecycle.listener(name),
                state -> partitions(name).values().stream()
                        .filter(s -> s.state() == state)
                        .count());
    }
}
