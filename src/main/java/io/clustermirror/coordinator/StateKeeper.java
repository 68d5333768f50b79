package io.clustermirror.coordinator;

import io.clustermirror.config.MirrorServiceConfig;
import io.clustermirror.kafka.KafkaClients;
import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.AclEntry;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfigRules;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.PartitionStatus;
import io.clustermirror.mirror.TopicDivergence;
import io.clustermirror.mirror.TopicPromotion;
import io.clustermirror.state.MirrorStateStore;
import io.clustermirror.state.MirrorStateStore.Changes;
import io.clustermirror.state.MirrorStateStore.CoordinatorFencedException;
import io.clustermirror.state.MirrorStateTopic;
import io.clustermirror.state.SecretCipher;
import io.clustermirror.state.StateFormatException;
import io.clustermirror.state.StateSecrets;
import io.quarkus.runtime.Quarkus;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.jboss.logging.Logger;

/**
 * Boot, replay and every write of the coordinator's state: ensures {@code __mirror_state}, takes over as its one
 * writer, replays it into a {@link CoordinatorState}, and from then on writes the changes to the topic, a coordinator
 * tick's in one transaction ({@link GroupCommit}), before the new snapshot is what other threads read. A failed write
 * re-reads the topic, so memory never holds what the topic does not; a fenced writer stops acting. Writes run on the
 * coordinator thread; the committed snapshot and the status are read from any thread.
 */
final class StateKeeper {

    private static final Logger LOGGER = Logger.getLogger(StateKeeper.class);

    /** What the coordinator does when the state has been (re)loaded, and when another instance took over. */
    interface Listener {
        void loaded(CoordinatorState state);

        void fenced();
    }

    private final KafkaClients clients;
    private final MirrorServiceConfig config;
    private final MirrorMetrics metrics;
    private final MirrorConfigRules rules;
    private final CoordinatorThread thread;
    private final Listener listener;
    private final GroupCommit commit;
    private volatile CoordinatorStatus status = CoordinatorStatus.loading("starting");
    /** Touched only on the coordinator thread. */
    private MirrorStateStore store;
    /** {@code store}'s partition count, for readers off the coordinator thread. */
    private volatile int statePartitions;
    /** Touched only on the coordinator thread. */
    private StateSecrets secrets;

    StateKeeper(
            KafkaClients clients,
            MirrorServiceConfig config,
            MirrorMetrics metrics,
            MirrorConfigRules rules,
            CoordinatorThread thread,
            Listener listener) {
        this.clients = clients;
        this.config = config;
        this.metrics = metrics;
        this.rules = rules;
        this.thread = thread;
        this.listener = listener;
        this.commit = new GroupCommit(thread, changes -> store.write(changes), new GroupCommit.Failures() {
            @Override
            public MirrorException failed(RuntimeException cause) {
                return writeFailed(cause);
            }

            @Override
            public void committed() {
                metrics.stateWrite(true);
            }
        });
    }

    /** The working state on the coordinator thread, the committed one elsewhere (see {@link GroupCommit#state}). */
    CoordinatorState state() {
        return commit.state();
    }

    CoordinatorStatus status() {
        return status;
    }

    /** The state topic's partitions once loaded (0 before); read from any thread. */
    int statePartitions() {
        return statePartitions;
    }

    /** Ensures the state topic, takes over as its writer and replays it; retried while the destination is unreachable. */
    void load() {
        String topic = config.state().topic().name();
        try (Admin admin = clients.destinationAdmin()) {
            int partitions = MirrorStateTopic.ensure(
                    admin,
                    topic,
                    config.state().topic().numPartitions(),
                    config.state().topic().replicationFactor(),
                    config.destination().requestTimeoutMs());
            close();
            store = new MirrorStateStore(
                    new MirrorStateStore.Clients() {
                        @Override
                        public KafkaProducer<byte[], byte[]> stateProducer(String transactionalId) {
                            return clients.stateProducer(transactionalId);
                        }

                        @Override
                        public KafkaConsumer<byte[], byte[]> stateReader() {
                            return clients.stateReader();
                        }
                    },
                    topic,
                    partitions,
                    config.destination().requestTimeoutMs(),
                    config.state().writeTimeoutMs(),
                    secrets());
            CoordinatorState state = CoordinatorState.of(store.open());
            statePartitions = partitions;
            commit.reset(state);
            status = CoordinatorStatus.active();
            LOGGER.infof(
                    "Coordinator active: %d mirror(s) loaded from %s (%d partitions)",
                    state.mirrors().size(), topic, partitions);
            listener.loaded(state);
        } catch (CoordinatorFencedException e) {
            // a newer instance took over while this one was sealing secrets at start: it is the writer now
            status = CoordinatorStatus.fenced(e.getMessage());
            LOGGER.error(e.getMessage() + "; this instance stops");
            listener.fenced();
        } catch (StateFormatException | java.io.IOException e) {
            status = CoordinatorStatus.loading(e.getMessage());
            LOGGER.errorf("Refusing to start: %s", e.getMessage());
            Quarkus.asyncExit(1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            status = CoordinatorStatus.loading("destination cluster not ready: " + e);
            LOGGER.warnf(
                    "Cannot load %s yet (%s); retrying in %d ms",
                    topic, e, config.destination().retryBackoffMs());
            if (!thread.isShutdown()) {
                thread.schedule("load", config.destination().retryBackoffMs(), this::load);
            }
        }
    }

    /**
     * The state encryption keys configured (the first seals), with the config rules' idea of what is secret: read once,
     * not on every retry of the load.
     */
    private StateSecrets secrets() throws java.io.IOException {
        if (secrets == null) {
            secrets = readSecrets();
        }
        return secrets;
    }

    private StateSecrets readSecrets() throws java.io.IOException {
        List<String> keys =
                new java.util.ArrayList<>(config.state().encryption().keys().orElse(List.of()));
        if (config.state().encryption().keyFile().isPresent()) {
            String file = config.state().encryption().keyFile().get();
            try {
                keys.addAll(java.nio.file.Files.readAllLines(java.nio.file.Path.of(file)));
            } catch (java.io.IOException e) {
                throw new java.io.IOException("mirror.state.encryption.key.file " + file + " cannot be read: " + e, e);
            }
        }
        try {
            return new StateSecrets(SecretCipher.of(keys), rules::isSensitive);
        } catch (IllegalArgumentException e) {
            throw new java.io.IOException("mirror.state.encryption.keys: " + e.getMessage(), e);
        }
    }

    void putMirror(Mirror mirror) {
        persist(c -> c.mirror(mirror), s -> s.with(mirror));
    }

    void deleteMirror(String name, Collection<MirrorPartition> partitions) {
        Set<String> promoted = state().promotions(name).keySet();
        Set<String> diverged = state().divergences(name).keySet();
        persist(c -> c.deleteMirror(name, partitions, promoted, diverged), s -> s.without(name));
    }

    /** A request's partition statuses: answered once they committed (with what the tick had pending). */
    void putPartitions(String mirror, Map<MirrorPartition, PartitionStatus> changed) {
        if (changed.isEmpty()) {
            return;
        }
        persist(c -> c.partitions(mirror, changed), s -> s.withPartitions(mirror, changed));
    }

    /**
     * Partition statuses the coordinator decided on its own (no request waits): the state now, the write with the
     * tick's others; {@code then} (may be null) runs once it committed.
     */
    void queuePartitions(String mirror, Map<MirrorPartition, PartitionStatus> changed, String what, Runnable then) {
        if (changed.isEmpty()) {
            if (then != null) {
                then.run();
            }
            return;
        }
        queue(c -> c.partitions(mirror, changed), s -> s.withPartitions(mirror, changed), what, then);
    }

    /** Partition statuses and topic promotions of one mirror, in one write (a null promotion removes the topic's). */
    void putPromotions(
            String mirror, Map<String, TopicPromotion> promotions, Map<MirrorPartition, PartitionStatus> changed) {
        persist(
                c -> c.partitions(mirror, changed).promotions(mirror, promotions),
                s -> s.withPartitions(mirror, changed).withPromotions(mirror, promotions));
    }

    /**
     * What a topic held when it was recreated for diverging, with the partition statuses, in one write, with the
     * tick's others; {@code then} runs once it committed.
     */
    void queueDivergence(
            String mirror,
            TopicDivergence divergence,
            Map<MirrorPartition, PartitionStatus> changed,
            String what,
            Runnable then) {
        queue(
                c -> c.partitions(mirror, changed).divergence(mirror, divergence),
                s -> s.withPartitions(mirror, changed).withDivergence(mirror, divergence),
                what,
                then);
    }

    /** How far verifications confirmed partitions identical: the state now, the write with the tick's others. */
    void queueVerified(String mirror, Map<MirrorPartition, Long> offsets) {
        queue(c -> c.verified(mirror, offsets), s -> s.withVerified(mirror, offsets), "verified " + mirror, null);
    }

    void putCreatedAcls(String mirror, Set<AclEntry> acls) {
        persist(c -> c.createdAcls(mirror, acls), s -> s.withCreatedAcls(mirror, acls));
    }

    /** A service setting changed at runtime; null returns it to its configured value. */
    void putServiceConfig(String name, String value) {
        persist(c -> c.serviceConfig(name, value), s -> s.withServiceConfig(name, value));
    }

    void close() {
        if (store != null) {
            store.close();
            store = null;
        }
    }

    /**
     * A change a caller waits for: written at once, with whatever the tick had pending; on failure the in-memory state
     * stays equal to what the topic holds and the caller gets the answer.
     */
    private void persist(Consumer<Changes> records, UnaryOperator<CoordinatorState> applied) {
        queue(records, applied, null, null);
        commit.flush();
    }

    private void queue(Consumer<Changes> records, UnaryOperator<CoordinatorState> applied, String what, Runnable then) {
        if (store == null || !store.isOpen()) { // a failed write closed the writer; the re-read is queued
            throw new MirrorException(
                    MirrorError.COORDINATOR_NOT_AVAILABLE,
                    "Mirror state is not available on this instance (" + status.phase() + ": " + status.reason() + ")");
        }
        commit.change(records, applied, what, then);
    }

    /** A failed write (of one change or of a tick's): fenced, or re-read; the answer to every change in it. */
    private MirrorException writeFailed(RuntimeException failure) {
        metrics.stateWrite(false);
        if (failure instanceof CoordinatorFencedException e) {
            status = CoordinatorStatus.fenced(e.getMessage());
            LOGGER.error(e.getMessage() + "; stopping this instance's data plane");
            listener.fenced();
            return new MirrorException(MirrorError.COORDINATOR_NOT_AVAILABLE, e.getMessage());
        }
        // a StateWriteException; anything else (a value that could not be sealed) is no less unconfirmed: re-read too
        LOGGER.warnf(
                "State write failed, re-reading %s: %s", config.state().topic().name(), failure.getMessage());
        // re-read as a coordinator task of its own; meanwhile requests are answered 503 at once, not queued behind
        // it
        status = CoordinatorStatus.loading("re-reading the state after a failed write: " + failure.getMessage());
        thread.run("re-read state", this::reopen);
        return new MirrorException(
                MirrorError.COORDINATOR_NOT_AVAILABLE,
                failure.getMessage()
                        + "; the change was not confirmed (the state is being re-read: GET the mirror to see what holds)");
    }

    /**
     * After a failed write: the state as the topic holds it, or, while the destination does not answer, load again. The
     * data plane starts afresh from it, as after a load: tasks queued before this one (a partition the data plane
     * failed, a stop settling) were refused while the writer was closed, so what runs must follow the state again.
     */
    private void reopen() {
        try {
            CoordinatorState state = CoordinatorState.of(store.open());
            commit.reset(state);
            status = CoordinatorStatus.active();
            listener.loaded(state);
        } catch (RuntimeException reopen) {
            status = CoordinatorStatus.loading("re-reading state after a failed write: " + reopen);
            thread.schedule("load", config.destination().retryBackoffMs(), this::load);
        }
    }
}
