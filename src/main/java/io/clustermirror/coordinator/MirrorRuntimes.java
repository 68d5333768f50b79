package io.clustermirror.coordinator;

import io.clustermirror.config.MirrorServiceConfig;
import io.clustermirror.fetch.DataPlane;
import io.clustermirror.fetch.FetcherPool;
import io.clustermirror.fetch.ReplicationThrottle;
import io.clustermirror.fetch.ShardedDataPlane;
import io.clustermirror.kafka.KafkaClients;
import io.clustermirror.kafka.SourceAdmins;
import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.topics.OffsetLookup;
import io.clustermirror.topics.OffsetLookup.Offsets;
import io.clustermirror.topics.TailPreservation;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartition;
import org.jboss.logging.Logger;

/**
 * The running parts of every mirror (its share of a source Admin, its data plane and its share of the instance's
 * {@link WorkerPool}, built on first use) and the shared destination Admin; closed when the mirror is deleted, the
 * state is replayed again, or this instance is fenced. Also the read side of what runs: live progress and the offsets
 * of a topic. A runtime's clients (config providers, the allowlist's DNS look-ups, SASL logins, Admins) are built on
 * the mirror's share of the worker pool and closed on Quarkus' worker pool, never on the coordinator thread, which only
 * asks for a runtime ({@link #whenBuilt}) and installs it when it is built (decisions §37). Read from any thread; a
 * runtime whose data plane has ended is dropped by whichever reader finds it first (and closed on Quarkus' worker
 * pool).
 */
final class MirrorRuntimes {

    private static final Logger LOGGER = Logger.getLogger(MirrorRuntimes.class);

    private final KafkaClients clients;
    private final MirrorServiceConfig config;
    private final MirrorMetrics metrics;
    private final ReplicationThrottle throttle;
    private final Map<String, MirrorRuntime> runtimes = new ConcurrentHashMap<>();
    private final Supplier<FetcherPool> poolFactory;
    private FetcherPool pool;
    private Admin destinationAdmin;
    private final AtomicLong deadLoops = new AtomicLong();
    private final RecoveryPoints points;
    /** Mirrors whose recovery points are being sampled now. */
    private final Set<String> sampling = ConcurrentHashMap.newKeySet();

    private volatile String lastDeadLoop;
    private final WorkerPool workers;
    /** Builds of runtimes under way, and the closes they wait for. */
    private final RuntimeBuilds<MirrorRuntime> builds;

    /**
     * @param poolFactory the instance's fetcher pool, built on first use
     * @param throttle the instance's replication budget, which every mirror's data plane shares
     */
    MirrorRuntimes(
            KafkaClients clients,
            MirrorServiceConfig config,
            MirrorMetrics metrics,
            Supplier<FetcherPool> poolFactory,
            ReplicationThrottle throttle,
            CoordinatorThread thread,
            RecoveryPoints points) {
        this.points = points;
        this.builds = new RuntimeBuilds<>(thread);
        this.clients = clients;
        this.config = config;
        this.metrics = metrics;
        this.poolFactory = poolFactory;
        this.throttle = throttle;
        this.workers = new WorkerPool(config.worker().threads());
    }

    private synchronized FetcherPool pool() {
        if (pool == null) {
            pool = poolFactory.get();
        }
        return pool;
    }

    /**
     * The mirror's runtime while its data plane runs. One whose data plane ended (a loop died or was stuck: its
     * partitions have failed) is dropped here, so that the next use builds a new one, and closed (on Quarkus' worker
     * pool, no thread of its own) once the tasks already given to its workers have run. The next build waits for that
     * close, as for any other ({@link RuntimeBuilds#closing}): its data plane must have left the pool first.
     */
    Optional<MirrorRuntime> live(String name) {
        MirrorRuntime runtime = runtimes.get(name);
        if (runtime != null && runtime.fetcher.deadReason() != null && runtimes.remove(name, runtime)) {
            builds.closing(
                    name,
                    runtime.closeWhenIdle(
                                    Duration.ofMillis(config.flow().timeoutMs()), Infrastructure.getDefaultWorkerPool())
                            .exceptionally(e -> {
                                LOGGER.errorf(e, "Mirror %s: its dropped runtime could not be closed", name);
                                return null;
                            }));
            return Optional.empty();
        }
        return Optional.ofNullable(runtime);
    }

    /** The liveness check of every data plane (see {@link ShardedDataPlane#checkLiveness}). */
    void checkLiveness(long stuckAfterMs) {
        runtimes.values().forEach(runtime -> runtime.fetcher.checkLiveness(stuckAfterMs));
    }

    /** Data-plane loops that died or were stuck since start, and the last one's reason (readiness data). */
    long deadLoops() {
        return deadLoops.get();
    }

    String lastDeadLoop() {
        return lastDeadLoop;
    }

    /**
     * The mirror's runtime: at once when it runs, else once built on the mirror's share of the worker pool (after its
     * last runtime has closed); completed on the coordinator thread, so what depends on it runs there. Its clients may
     * fail to build (a config-provider reference that no longer resolves): it fails with why. Coordinator thread.
     *
     * @param partitionsIn how many of the mirror's partitions are in a state, for the per-state gauges
     */
    CompletableFuture<MirrorRuntime> whenBuilt(
            Mirror mirror, DataPlane.Listener listener, ToLongFunction<MirrorPartitionState> partitionsIn) {
        String name = mirror.name();
        Optional<MirrorRuntime> running = live(name);
        if (running.isPresent()) {
            return CompletableFuture.completedFuture(running.get());
        }
        MirrorWorkers share = workers.forMirror(name);
        return builds.build(
                name,
                share,
                () -> build(mirror, share, listener),
                runtime -> install(name, runtime, partitionsIn),
                runtime -> closeLater(name, runtime));
    }

    /** On a worker: the mirror's clients and data plane. */
    private MirrorRuntime build(Mirror mirror, MirrorWorkers share, DataPlane.Listener listener) {
        int timeoutMs = config.destination().requestTimeoutMs();
        int sourceTimeoutMs = config.source().requestTimeoutMs();
        // resolved once (config providers, the allowlist's look-ups) for both the Admin and the data plane
        Map<String, String> source = clients.sourceConnection(mirror.config());
        SourceAdmins.Share sourceAdmin = clients.sourceAdmin(mirror.name(), source);
        try {
            return new MirrorRuntime(
                    mirror,
                    sourceAdmin,
                    source,
                    destinationAdmin(),
                    clients.destinationConnection(),
                    pool(),
                    new TailPreservation(
                            destinationAdmin(), clients::destinationReader, clients::destinationProducer, timeoutMs),
                    share,
                    listener,
                    config.numReplicaFetchers(),
                    sourceTimeoutMs,
                    timeoutMs,
                    throttle);
        } catch (RuntimeException e) {
            sourceAdmin.close(); // the data plane's clients could not be built: the share is not kept
            throw e;
        }
    }

    private void install(String name, MirrorRuntime runtime, ToLongFunction<MirrorPartitionState> partitionsIn) {
        runtimes.put(name, runtime);
        ShardedDataPlane fetcher = runtime.fetcher;
        // the loop's end is logged where it happened, and each of its partitions failed through the listener; every
        // shard's death counts
        fetcher.onDeath(death -> {
            deadLoops.incrementAndGet();
            lastDeadLoop = death.reason();
            metrics.deadLoop(name, death.loop().label());
        });
        metrics.registerMirror(
                name,
                new MirrorMetrics.MirrorGaugeSources(
                        partitionsIn::applyAsLong,
                        fetcher::maxLag,
                        fetcher::lags,
                        () -> fetcher.openTransactions().size(),
                        () -> fetcher.openTransactions().stream()
                                .mapToLong(t -> Duration.between(t.openSince(), Instant.now())
                                        .toSeconds())
                                .max()
                                .orElse(0),
                        fetcher::deadLanes,
                        () -> rpoSeconds(name),
                        () -> rpoSeconds(name).values().stream()
                                .mapToDouble(Double::doubleValue)
                                .max()
                                .orElse(0)));
    }

    /** Each active partition's RPO in seconds as last sampled, against the clock now (unknown ones left out). */
    private Map<MirrorPartition, Double> rpoSeconds(String mirror) {
        Map<MirrorPartition, Double> seconds = new HashMap<>();
        points.current(mirror, System.currentTimeMillis()).forEach((p, rpo) -> seconds.put(p, rpo.seconds()));
        return seconds;
    }

    /**
     * Closes a runtime off the coordinator thread (its data plane may take seconds to leave the pool, its source Admin
     * to close); its workers refuse new tasks at once. The mirror's next runtime is built once this close ended.
     */
    private CompletableFuture<Void> closeLater(String name, MirrorRuntime runtime) {
        runtime.workers.close();
        CompletableFuture<Void> closed = CompletableFuture.runAsync(
                        runtime::close, Infrastructure.getDefaultWorkerPool())
                .exceptionally(e -> {
                    LOGGER.errorf(e, "Mirror %s: its runtime could not be closed", name);
                    return null;
                });
        builds.closing(name, closed);
        return closed;
    }

    /** Closes the mirror's runtime, if it has one. */
    void close(String name) {
        closing(name);
    }

    /** Closes the mirror's runtime, if it has one: done once it is closed (its data plane appends no more). */
    CompletableFuture<Void> closing(String name) {
        builds.overtake(name);
        MirrorRuntime runtime = runtimes.remove(name);
        return runtime == null ? CompletableFuture.completedFuture(null) : closeLater(name, runtime);
    }

    /** Closes every runtime (off this thread): the data plane starts afresh from the state when it is next needed. */
    void closeAll() {
        builds.overtakeAll();
        new ArrayList<>(runtimes.keySet()).forEach(this::close);
    }

    /** At shutdown (the coordinator's last task): every runtime, the fetcher pool, the worker threads and the destination Admin. */
    synchronized void shutdown() {
        builds.overtakeAll();
        runtimes.values().forEach(MirrorRuntime::close);
        runtimes.clear();
        if (pool != null) {
            pool.close();
        }
        workers.shutdown();
        if (destinationAdmin != null) {
            destinationAdmin.close(Duration.ofSeconds(2));
        }
    }

    synchronized Admin destinationAdmin() {
        if (destinationAdmin == null) {
            destinationAdmin = clients.longLivedDestinationAdmin("admin");
        }
        return destinationAdmin;
    }

    /** One sample of every running data plane for the rates ({@link PartitionRates}); mirrors without one lose theirs. */
    void sampleRates(PartitionRates rates, long atMs) {
        Map<String, MirrorRuntime> running = Map.copyOf(runtimes);
        running.forEach((name, runtime) -> rates.sample(name, runtime.fetcher.counts(), atMs));
        rates.retain(running.keySet());
    }

    /** Live data-plane progress, when the partition is in the data plane. */
    Optional<LiveProgress> liveProgress(String mirror, MirrorPartition partition) {
        return live(mirror)
                .flatMap(runtime -> runtime.fetcher.progress(partition))
                .map(p -> new LiveProgress(p.lastMirroredEpoch(), p.openTransactions()));
    }

    /** Source high watermarks and destination log ends of the partitions (-1 where unknown); blocking, for a worker thread. */
    Map<MirrorPartition, PartitionOffsets> offsets(String mirror, Collection<MirrorPartition> partitions) {
        Set<TopicPartition> request = new HashSet<>();
        partitions.forEach(p -> request.add(new TopicPartition(p.topic(), p.partition())));
        Map<TopicPartition, Long> source = live(mirror)
                .map(runtime -> latest(runtime.sourceAdmin, request))
                .orElse(Map.of());
        Map<TopicPartition, Long> destination = latest(destinationAdmin(), request);
        Map<MirrorPartition, PartitionOffsets> result = new TreeMap<>();
        for (MirrorPartition p : partitions) {
            TopicPartition tp = new TopicPartition(p.topic(), p.partition());
            result.put(p, new PartitionOffsets(source.getOrDefault(tp, -1L), destination.getOrDefault(tp, -1L)));
        }
        return result;
    }

    /**
     * Samples the recovery point of each mirror's active partitions (decisions §44) on the mirror's workers, one sample
     * of a mirror at a time; a mirror without a running data plane is not sampled (its RPO stays as last published).
     */
    void sampleRecoveryPoints(Map<String, Set<MirrorPartition>> active) {
        points.retain(active.keySet());
        active.forEach((name, partitions) -> live(name).ifPresent(runtime -> {
            if (!sampling.add(name)) {
                return; // the last sample still runs (a source that does not answer takes its timeout)
            }
            try {
                runtime.workers.execute(() -> {
                    try {
                        long now = System.currentTimeMillis();
                        points.publish(
                                name, points.evaluate(name, ends(runtime, partitions), now, reader(name, runtime)));
                    } finally {
                        sampling.remove(name);
                    }
                });
            } catch (RejectedExecutionException e) {
                sampling.remove(name); // the runtime is closing: the next sample finds its successor
            }
        }));
    }

    /**
     * The recovery points of the partitions from the ends just read ({@code offsets}, describe), with what their data
     * plane says of them; blocking, for a worker thread.
     */
    Map<MirrorPartition, RecoveryPoints.Inputs> recoveryPoints(
            String mirror, Map<MirrorPartition, PartitionOffsets> offsets) {
        Optional<MirrorRuntime> runtime = live(mirror);
        Map<MirrorPartition, DataPlane.Counts> counts =
                runtime.map(r -> r.fetcher.counts()).orElse(Map.of());
        Map<MirrorPartition, RecoveryPoints.Ends> ends = new HashMap<>();
        offsets.forEach(
                (p, o) -> ends.put(p, new RecoveryPoints.Ends(o.sourceEnd(), o.destinationEnd(), counts.get(p))));
        return points.evaluate(
                mirror,
                ends,
                System.currentTimeMillis(),
                runtime.map(r -> reader(mirror, r)).orElse(request -> Map.of()));
    }

    private static RecoveryPoints.TimestampReader reader(String mirror, MirrorRuntime runtime) {
        return request -> runtime.timestamps.at(mirror, request);
    }

    /**
     * The ends of the partitions for their recovery points: the source's read now (raised to what the data plane saw
     * since, -1 when it could not be read), the destination's acknowledged end from the data plane, or read now for a
     * partition outside it.
     */
    private Map<MirrorPartition, RecoveryPoints.Ends> ends(MirrorRuntime runtime, Set<MirrorPartition> partitions) {
        Map<MirrorPartition, DataPlane.Counts> counts = runtime.fetcher.counts();
        Set<TopicPartition> all = new HashSet<>();
        Set<TopicPartition> outside = new HashSet<>();
        partitions.forEach(p -> {
            TopicPartition tp = new TopicPartition(p.topic(), p.partition());
            all.add(tp);
            if (!counts.containsKey(p)) {
                outside.add(tp);
            }
        });
        Map<TopicPartition, Long> source = latest(runtime.sourceAdmin, all);
        Map<TopicPartition, Long> destination = outside.isEmpty() ? Map.of() : latest(destinationAdmin(), outside);
        Map<MirrorPartition, RecoveryPoints.Ends> ends = new HashMap<>();
        partitions.forEach(p -> {
            TopicPartition tp = new TopicPartition(p.topic(), p.partition());
            DataPlane.Counts c = counts.get(p);
            long sourceEnd = source.getOrDefault(tp, -1L);
            if (sourceEnd >= 0 && c != null) {
                sourceEnd = Math.max(sourceEnd, c.sourceHighWatermark());
            }
            long destinationEnd = c != null ? c.destinationEnd() : destination.getOrDefault(tp, -1L);
            ends.put(p, new RecoveryPoints.Ends(sourceEnd, destinationEnd, c));
        });
        return ends;
    }

    /** The partitions' ends that could be read; one that could not stays unknown and fails no other. */
    private static Map<TopicPartition, Long> latest(Admin admin, Set<TopicPartition> request) {
        Map<TopicPartition, Long> offsets = new HashMap<>();
        try {
            Offsets listed = new OffsetLookup(admin, 5_000).latest(request);
            listed.found().forEach((tp, info) -> offsets.put(tp, info.offset()));
            listed.firstFailure()
                    .ifPresent(e -> LOGGER.debugf(
                            "Offsets of %d partition(s) not available: %s",
                            listed.failed().size(), e.toString()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return offsets;
    }
}
