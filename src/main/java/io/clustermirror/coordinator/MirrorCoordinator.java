package io.clustermirror.coordinator;

import java.time.Clock;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.ArrayList;
import java.util.TreeMap;
import java.util.TreeSet;



import org.apache.kafka.clients.admin.Admin;
import org.jboss.logging.Logger;

import io.clustermirror.kafka.KafkaClients;
import io.clustermirror.config.MirrorServiceConfig;
import io.clustermirror.kafka.SourceClusterProbe;
import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorConfigRules;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.MirrorName;
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
 * Its rooms: {@link CoordinatorThread} (the thread), {@link CoordinatorState} (the snapshot), {@link TopicStarts} and
 * {@link TopicStops} (the verbs that take and hand back destination topics), {@link PartitionLifecycle} (the partition
 * state machine as it runs) and {@link MirrorRuntimes} (each mirror's clients and data plane); this class boots and
 * replays the state and serves mirror CRUD and the topic verbs; {@link MetadataSyncHost} applies what the metadata sync asks.
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
    private final CoordinatorThread thread = new CoordinatorThread();

    /** Written on the coordinator thread after the state topic took the change; read from any thread. */
    private volatile CoordinatorState state = CoordinatorState.EMPTY;
    private volatile CoordinatorStatus status = CoordinatorStatus.loading("starting");
    /** Touched only on the coordinator thread. */
    private MirrorStateStore store;
    private final MirrorRuntimes runtimes;
    private final PartitionLifecycle lifecycle;
    private final TopicStarts starts;

    public MirrorCoordinator(KafkaClients clients, MirrorServiceConfig config, MirrorConfigRules rules,
            SourceClusterProbe probe, MirrorMetrics metrics) {
        this.clients = clients;
        this.config = config;
        this.rules = rules;
        this.probe = probe;
        this.metrics = metrics;
        this.runtimes = new MirrorRuntimes(clients, config, metrics);
        this.lifecycle = new PartitionLifecycle(new LifecycleHost(), thread, RetryPolicy.of(config.failed().retry()), metrics, clock);
        this.starts = new TopicStarts(new StartsHost(), rules, config.state().topic().name());
    }

    void onStart(@Observes StartupEvent event) {
        metrics.registerMirrorCount(() -> state.mirrors().size());
        thread.run("load", this::load);
    }

    void onStop(@Observes ShutdownEvent event) {
        thread.shutdown(() -> {
            runtimes.shutdown();
            if (store != null) {
                store.close();
            }
        });
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
            state = CoordinatorState.of(snapshot);
            status = CoordinatorStatus.active();
            LOGGER.infof("Coordinator active: %d mirror(s) loaded from %s (%d partitions)", state.mirrors().size(), topic, partitions);
            state.partitions().keySet().forEach(lifecycle::resume);
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
                thread.schedule("load", config.destination().retryBackoffMs(), this::load);
            }
        }
    }

    public CoordinatorStatus status() {
        return status;
    }

    public List<Mirror> list() {
        requireActive();
        return state.mirrors().values().stream().sorted(Comparator.comparing(Mirror::name)).toList();
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
                state = state.with(mirror);
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
                    state = state.with(updated);
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
            Map<MirrorPartition, PartitionStatus> owned = partitions(name);
            List<String> busy = owned.entrySet().stream().filter(e -> e.getValue().state() != MirrorPartitionState.STOPPED)
                    .map(e -> e.getKey() + " " + e.getValue().state()).sorted().toList();
            if (!busy.isEmpty()) {
                throw new MirrorException(MirrorError.CLUSTER_MIRROR_NOT_EMPTY, "Mirror '" + name
                        + "' still has partitions that are not STOPPED: " + String.join(", ", busy.subList(0, Math.min(10, busy.size())))
                        + (busy.size() > 10 ? " and " + (busy.size() - 10) + " more" : "") + "; stop its topics first");
            }
            persist(() -> store.deleteMirror(name, owned.keySet()));
            state = state.without(name);
            runtimes.close(name);
            metrics.removeMirror(name);
            lifecycle.forget(name);
            LOGGER.infof("Deleted mirror %s", name);
            return null;
        });
    }

    <T> Uni<T> onCoordinator(Supplier<T> action) {
        return thread.call(() -> {
            requireActive();
            return action.get();
        });
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
                state = CoordinatorState.of(store.open());
            } catch (RuntimeException reopen) {
                status = CoordinatorStatus.loading("re-reading state after a failed write: " + reopen);
                thread.schedule("load", config.destination().retryBackoffMs(), this::load);
            }
            throw new MirrorException(MirrorError.COORDINATOR_NOT_AVAILABLE, e.getMessage()
                    + "; the change was not confirmed (the state was re-read: GET the mirror to see what holds)");
        }
    }

    private void requireActive() {
        CoordinatorStatus current = status;
        if (!current.isActive()) {
            throw new MirrorException(MirrorError.COORDINATOR_NOT_AVAILABLE,
                    "Mirror state is not available on this instance (" + current.phase() + ": " + current.reason() + ")");
        }
    }

    private Mirror require(String name) {
        Mirror mirror = state.mirrors().get(name);
        if (mirror == null) {
            throw MirrorException.unknownMirror(name);
        }
        return mirror;
    }

    private void requireAbsent(String name) {
        if (state.mirrors().containsKey(name)) {
            throw new MirrorException(MirrorError.CLUSTER_MIRROR_ALREADY_EXISTS, "Cluster mirror '" + name + "' already exists", "name");
        }
    }

    // ================================================================ topics and partitions

    /** Runs a task on the coordinator thread; a failure is logged, never lost. */
    private void run(String what, Runnable task) {
        thread.run(what, task);
    }

    /** Per-partition status of a mirror, as persisted. */
    public Map<MirrorPartition, PartitionStatus> partitions(String mirror) {
        return state.partitions(mirror);
    }

    public String progress(String mirror, MirrorPartition partition) {
        return lifecycle.progress(mirror, partition);
    }

    /** Live data-plane progress, when the partition is in the fetcher. */
    public java.util.Optional<LiveProgress> liveProgress(String mirror, MirrorPartition partition) {
        return runtimes.liveProgress(mirror, partition);
    }

    /** Current source high watermarks and destination log ends of a topic; blocking, for a worker thread. */
    public Map<MirrorPartition, PartitionOffsets> offsets(String mirror, String topic) {
        return runtimes.offsets(mirror, partitions(mirror).keySet().stream().filter(p -> p.topic().equals(topic)).toList());
    }

    /** StartMirrorTopics: see {@link TopicStarts}. */
    public Uni<List<TopicOutcome>> startTopics(String name, TopicSelection selection) {
        return starts.start(name, selection);
    }

    /** Pause, resume, stop or recover the named topics; all-or-nothing validation against the transition table. */
    public Uni<List<TopicOutcome>> topicVerb(String name, TopicVerb verb, List<String> topics) {
        return topicVerb(name, verb, topics, null);
    }

    Uni<List<TopicOutcome>> topicVerb(String name, TopicVerb verb, List<String> topics, String reason) {
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
                lifecycle.stopPartitions(name, changed.keySet());
            } else {
                changed.keySet().forEach(p -> lifecycle.act(name, verb, p));
            }
            return new TreeSet<>(topics).stream().map(t -> TopicOutcome.ok(t,
                    (int) owned.keySet().stream().filter(p -> p.topic().equals(t)).count(),
                    changed.keySet().stream().anyMatch(p -> p.topic().equals(t)) ? verb.target().name() : "UNCHANGED")).toList();
        });
    }

    void persistPartitions(String name, Map<MirrorPartition, PartitionStatus> changed) {
        if (changed.isEmpty()) {
            return;
        }
        persist(() -> store.putPartitions(name, changed));
        state = state.withPartitions(name, changed);
    }

    /** Why the mirror is halted (its source changed identity), or null. */
    public String haltedReason(String name) {
        return lifecycle.haltedReason(name);
    }

    /** The ACLs this mirror created on the destination. */
    public Set<io.clustermirror.mirror.AclEntry> createdAcls(String name) {
        return state.createdAcls(name);
    }

    /** Persists the ACLs this mirror has created (before they are relied on for deletion). */
    public Uni<Void> recordCreatedAcls(String name, Set<io.clustermirror.mirror.AclEntry> acls) {
        return onCoordinator(() -> {
            require(name);
            persist(() -> store.putCreatedAcls(name, acls));
            state = state.withCreatedAcls(name, acls);
            return null;
        });
    }

    /** The shared destination Admin. */
    Admin destinationAdmin() {
        return runtimes.destinationAdmin();
    }

    PartitionLifecycle lifecycle() {
        return lifecycle;
    }

    /** The mirror's runtime, created on first use (coordinator thread). */
    MirrorRuntime runtime(String name) {
        return runtimes.live(name).orElseGet(() -> runtimes.getOrCreate(require(name), lifecycle.listener(name),
                state -> partitions(name).values().stream().filter(s -> s.state() == state).count()));
    }

    /** The coordinator as the partition lifecycle sees it. */
    private final class LifecycleHost implements PartitionLifecycle.Host {
        @Override
        public Map<MirrorPartition, PartitionStatus> partitions(String mirror) {
            return state.partitions(mirror);
        }

        @Override
        public void persistPartitions(String mirror, Map<MirrorPartition, PartitionStatus> changed) {
            MirrorCoordinator.this.persistPartitions(mirror, changed);
        }

        @Override
        public java.util.Optional<Mirror> mirror(String name) {
            return java.util.Optional.ofNullable(state.mirrors().get(name));
        }

        @Override
        public Mirror require(String name) {
            return MirrorCoordinator.this.require(name);
        }

        @Override
        public boolean isActive() {
            return status.isActive();
        }

        @Override
        public MirrorRuntime runtime(String name) {
            return MirrorCoordinator.this.runtime(name);
        }

        @Override
        public java.util.Optional<MirrorRuntime> liveRuntime(String name) {
            return runtimes.live(name);
        }
    }

    /** The coordinator as a start sees it. */
    private final class StartsHost implements TopicStarts.Host {
        @Override
        public Mirror require(String name) {
            requireActive();
            return MirrorCoordinator.this.require(name);
        }

        @Override
        public <T> Uni<T> onCoordinator(Supplier<T> action) {
            return MirrorCoordinator.this.onCoordinator(action);
        }

        @Override
        public MirrorRuntime runtime(String name) {
            return MirrorCoordinator.this.runtime(name);
        }

        @Override
        public Map<String, Map<MirrorPartition, PartitionStatus>> allPartitions() {
            return state.partitions();
        }

        @Override
        public void persistMirror(Mirror updated) {
            persist(() -> store.putMirror(updated));
            state = state.with(updated);
        }

        @Override
        public void persistPartitions(String mirror, Map<MirrorPartition, PartitionStatus> changed) {
            MirrorCoordinator.this.persistPartitions(mirror, changed);
        }

        @Override
        public void truncate(String mirror, MirrorPartition partition) {
            lifecycle.truncate(mirror, partition);
        }
    }
}
