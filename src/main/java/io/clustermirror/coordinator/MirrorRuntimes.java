package io.clustermirror.coordinator;

import io.clustermirror.config.MirrorServiceConfig;
import io.clustermirror.fetch.DataPlane;
import io.clustermirror.fetch.FetcherPool;
import io.clustermirror.fetch.ReplicationThrottle;
import io.clustermirror.fetch.ShardedDataPlane;
import io.clustermirror.fetch.TailPreservation;
import io.clustermirror.kafka.KafkaClients;
import io.clustermirror.kafka.SourceAdmins;
import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.jboss.logging.Logger;

/**
 * The running parts of every mirror (its share of a source Admin, its data plane and its share of the instance's
 * {@link WorkerPool}, built on first use) and the shared destination Admin; closed when the mirror is deleted, the
 * state is replayed again, or this instance is fenced. Also the read side of what runs: live progress and the offsets
 * of a topic. Created and closed on the coordinator thread, read from any thread; a runtime whose data plane has ended
 * is dropped by whichever reader finds it first (and closed on Quarkus' worker pool).
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
    private volatile String lastDeadLoop;
    private final WorkerPool workers;

    /**
     * @param poolFactory the instance's fetcher pool, built on first use
     * @param throttle the instance's replication budget, which every mirror's data plane shares
     */
    MirrorRuntimes(
            KafkaClients clients,
            MirrorServiceConfig config,
            MirrorMetrics metrics,
            Supplier<FetcherPool> poolFactory,
            ReplicationThrottle throttle) {
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
     * pool, no thread of its own) once the tasks already given to its workers have run.
     */
    Optional<MirrorRuntime> live(String name) {
        MirrorRuntime runtime = runtimes.get(name);
        if (runtime != null && runtime.fetcher.deadReason() != null && runtimes.remove(name, runtime)) {
            runtime.closeWhenIdle(Duration.ofMillis(config.flow().timeoutMs()), Infrastructure.getDefaultWorkerPool())
                    .exceptionally(e -> {
                        LOGGER.errorf(e, "Mirror %s: its dropped runtime could not be closed", name);
                        return null;
                    });
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
     * The mirror's runtime, built when it has none (its clients may fail to build: a config-provider reference that no
     * longer resolves), with its gauges registered.
     *
     * @param partitionsIn how many of the mirror's partitions are in a state, for the per-state gauges
     */
    MirrorRuntime getOrCreate(
            Mirror mirror, DataPlane.Listener listener, ToLongFunction<MirrorPartitionState> partitionsIn) {
        MirrorRuntime existing = runtimes.get(mirror.name());
        if (existing != null) {
            return existing;
        }
        int timeoutMs = config.destination().requestTimeoutMs();
        int sourceTimeoutMs = config.source().requestTimeoutMs();
        // resolved once (config providers, the allowlist's look-ups) for both the Admin and the data plane
        Map<String, String> source = clients.sourceConnection(mirror.config());
        SourceAdmins.Share sourceAdmin = clients.sourceAdmin(mirror.name(), source);
        MirrorRuntime runtime;
        try {
            runtime = new MirrorRuntime(
                    mirror,
                    sourceAdmin,
                    source,
                    destinationAdmin(),
                    clients.destinationConnection(),
                    pool(),
                    new TailPreservation(
                            destinationAdmin(), clients::destinationReader, clients::destinationProducer, timeoutMs),
                    workers.forMirror(mirror.name()),
                    listener,
                    config.numReplicaFetchers(),
                    sourceTimeoutMs,
                    timeoutMs,
                    throttle);
        } catch (RuntimeException e) {
            sourceAdmin.close(); // the data plane's clients could not be built: the share is not kept
            throw e;
        }
        runtimes.put(mirror.name(), runtime);
        ShardedDataPlane fetcher = runtime.fetcher;
        // the loop's end is logged where it happened, and each of its partitions failed through the listener; every
        // shard's death counts
        fetcher.onDeath(death -> {
            deadLoops.incrementAndGet();
            lastDeadLoop = death.reason();
            metrics.deadLoop(mirror.name(), death.loop());
        });
        metrics.registerMirror(
                mirror.name(),
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
                        fetcher::deadLanes));
        return runtime;
    }

    /** Closes the mirror's runtime, if it has one. */
    void close(String name) {
        MirrorRuntime runtime = runtimes.remove(name);
        if (runtime != null) {
            runtime.close();
        }
    }

    /** Closes every runtime: the data plane starts afresh from the state when it is next needed. */
    void closeAll() {
        runtimes.values().forEach(MirrorRuntime::close);
        runtimes.clear();
    }

    /** At shutdown: every runtime, the fetcher pool, the worker threads and the destination Admin. */
    synchronized void shutdown() {
        closeAll();
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

    /** Live data-plane progress, when the partition is in the data plane. */
    Optional<LiveProgress> liveProgress(String mirror, MirrorPartition partition) {
        return live(mirror)
                .flatMap(runtime -> runtime.fetcher.progress(partition))
                .map(p -> new LiveProgress(p.lastMirroredEpoch(), p.openTransactions()));
    }

    /** Source high watermarks and destination log ends of the partitions (-1 where unknown); blocking, for a worker thread. */
    Map<MirrorPartition, PartitionOffsets> offsets(String mirror, Collection<MirrorPartition> partitions) {
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        partitions.forEach(p -> request.put(new TopicPartition(p.topic(), p.partition()), OffsetSpec.latest()));
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

    private static Map<TopicPartition, Long> latest(Admin admin, Map<TopicPartition, OffsetSpec> request) {
        Map<TopicPartition, Long> offsets = new HashMap<>();
        try {
            admin.listOffsets(request)
                    .all()
                    .get(5, TimeUnit.SECONDS)
                    .forEach((tp, info) -> offsets.put(tp, info.offset()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            LOGGER.debugf("Offsets not available: %s", e.toString());
        }
        return offsets;
    }
}
