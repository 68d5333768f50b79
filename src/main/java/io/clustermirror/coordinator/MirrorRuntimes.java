package io.clustermirror.coordinator;

import io.clustermirror.config.MirrorServiceConfig;
import io.clustermirror.fetch.DataPlane;
import io.clustermirror.fetch.MirrorFetcher;
import io.clustermirror.fetch.ReplicationThrottle;
import io.clustermirror.fetch.TailPreservation;
import io.clustermirror.kafka.KafkaClients;
import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
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
import java.util.function.ToLongFunction;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.jboss.logging.Logger;

/**
 * The running parts of every mirror (its source clients, data plane and workers, built on first use) and the shared
 * destination Admin; closed when the mirror is deleted, the state is replayed again, or this instance is fenced. Also
 * the read side of what runs: live progress and the offsets of a topic. Created and closed on the coordinator thread,
 * read from any thread; a runtime whose data plane has ended is dropped by whichever reader finds it first (and closed
 * on a thread of its own).
 */
final class MirrorRuntimes {

    private static final Logger LOGGER = Logger.getLogger(MirrorRuntimes.class);

    private final KafkaClients clients;
    private final MirrorServiceConfig config;
    private final MirrorMetrics metrics;
    private final ReplicationThrottle throttle;
    private final Map<String, MirrorRuntime> runtimes = new ConcurrentHashMap<>();
    private Admin destinationAdmin;
    private final AtomicLong deadLoops = new AtomicLong();
    private volatile String lastDeadLoop;

    /** @param throttle the instance's replication budget, which every mirror's data plane shares */
    MirrorRuntimes(
            KafkaClients clients, MirrorServiceConfig config, MirrorMetrics metrics, ReplicationThrottle throttle) {
        this.clients = clients;
        this.config = config;
        this.metrics = metrics;
        this.throttle = throttle;
    }

    /**
     * The mirror's runtime while its data plane runs. One whose data plane ended (a loop died or was stuck: its
     * partitions have failed) is dropped here, so that the next use builds a new one, and closed on a thread of its own
     * once the tasks already given to its workers have run.
     */
    Optional<MirrorRuntime> live(String name) {
        MirrorRuntime runtime = runtimes.get(name);
        if (runtime != null && runtime.fetcher.deadReason() != null && runtimes.remove(name, runtime)) {
            Thread closer = new Thread(
                    () -> runtime.closeWhenIdle(Duration.ofMillis(config.flow().timeoutMs())), "mirror-close-" + name);
            closer.setDaemon(true);
            closer.start();
            return Optional.empty();
        }
        return Optional.ofNullable(runtime);
    }

    /** The liveness check of every data plane (see {@link MirrorFetcher#checkLiveness}). */
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
        MirrorRuntime runtime = new MirrorRuntime(
                mirror,
                clients.sourceAdmin(mirror.name(), source, sourceTimeoutMs),
                source,
                destinationAdmin(),
                clients.destinationConnection(),
                new TailPreservation(
                        destinationAdmin(), clients::destinationReader, clients::destinationProducer, timeoutMs),
                listener,
                sourceTimeoutMs,
                timeoutMs,
                throttle);
        runtimes.put(mirror.name(), runtime);
        MirrorFetcher fetcher = runtime.fetcher;
        // the loop's end is logged where it happened, and each of its partitions failed through the listener
        fetcher.death().thenAccept(death -> {
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
                                .orElse(0)));
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

    /** At shutdown: every runtime and the destination Admin. */
    synchronized void shutdown() {
        closeAll();
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
