package io.clustermirror.coordinator;

import java.time.Clock;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.apache.kafka.clients.admin.Admin;
import org.jboss.logging.Logger;

import io.clustermirror.kafka.KafkaClients;
import io.clustermirror.kafka.MirrorServiceConfig;
import io.clustermirror.kafka.SourceClusterProbe;
import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorConfigRules;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.MirrorName;
import io.clustermirror.state.MirrorStateStore;
import io.clustermirror.state.MirrorStateStore.CoordinatorFencedException;
import io.clustermirror.state.MirrorStateStore.StateWriteException;
import io.clustermirror.state.MirrorStateTopic;
import io.clustermirror.state.StateFormatException;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/**
 * Owns the mirrors. Every change is validated, persisted to {@code __mirror_state} and only then
 * applied in memory, all on one coordinator thread, so concurrent requests are serialised the way a
 * Kafka coordinator serialises its partition's events. Reads see an immutable snapshot and never wait.
 * Slow remote calls (contacting a source cluster) happen before entering the coordinator thread.
 */
@ApplicationScoped
public class MirrorCoordinator {

    private static final Logger LOGGER = Logger.getLogger(MirrorCoordinator.class);

    private final KafkaClients clients;
    private final MirrorServiceConfig config;
    private final MirrorConfigRules rules;
    private final SourceClusterProbe probe;
    private final MirrorMetrics metrics;
    private final Clock clock = Clock.systemUTC();
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "mirror-coordinator");
        t.setDaemon(true);
        return t;
    });

    private volatile Map<String, Mirror> mirrors = Map.of();
    private volatile CoordinatorStatus status = CoordinatorStatus.loading("starting");
    /** Touched only on the coordinator thread. */
    private MirrorStateStore store;

    public MirrorCoordinator(KafkaClients clients, MirrorServiceConfig config, MirrorConfigRules rules,
            SourceClusterProbe probe, MirrorMetrics metrics) {
        this.clients = clients;
        this.config = config;
        this.rules = rules;
        this.probe = probe;
        this.metrics = metrics;
    }

    void onStart(@Observes StartupEvent event) {
        metrics.registerMirrorCount(() -> mirrors.size());
        thread.execute(this::load);
    }

    void onStop(@Observes ShutdownEvent event) {
        thread.execute(() -> {
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
            store = new MirrorStateStore(clients, topic, partitions, config.destination().requestTimeoutMs());
            mirrors = Map.copyOf(store.open());
            status = CoordinatorStatus.active();
            LOGGER.infof("Coordinator active: %d mirror(s) loaded from %s (%d partitions)", mirrors.size(), topic, partitions);
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
        });
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
        });
    }

    /** DeleteClusterMirror. */
    public Uni<Void> delete(String name) {
        return onCoordinator(() -> {
            require(name);
            persist(() -> store.deleteMirror(name));
            Map<String, Mirror> next = new HashMap<>(mirrors);
            next.remove(name);
            mirrors = Map.copyOf(next);
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
            LOGGER.error(e.getMessage());
            throw new MirrorException(MirrorError.COORDINATOR_NOT_AVAILABLE, e.getMessage());
        } catch (StateWriteException e) {
            metrics.stateWrite(false);
            LOGGER.warnf("State write failed, re-reading %s: %s", config.state().topic().name(), e.getMessage());
            try {
                mirrors = Map.copyOf(store.open());
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
}
