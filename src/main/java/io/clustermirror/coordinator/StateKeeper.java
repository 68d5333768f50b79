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
import io.smallrye.mutiny.infrastructure.Infrastructure;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.IntPredicate;
import java.util.function.UnaryOperator;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.jboss.logging.Logger;

/**
 * Boot, replay and every write of the coordinator's state: ensures {@code __mirror_state}; takes over the state
 * partitions the state group assigns ({@link StateGroup}: fences their writers, replays them into the {@link
 * CoordinatorState}) and gives up the ones it takes away; from then on writes the changes to the topic, a coordinator
 * tick's in one transaction per state partition ({@link GroupCommit}), before the new snapshot is what other threads
 * read. A failed write re-reads the owned partitions, so memory never holds what the topic does not; a fenced write
 * gives its partition up. Writes run on the coordinator thread; the committed snapshot and the status are read from
 * any thread.
 */
final class StateKeeper {

    private static final Logger LOGGER = Logger.getLogger(StateKeeper.class);

    /** What the coordinator does as the state topic is ready, partitions come and go, and the state is re-read. */
    interface Listener {
        /** The state topic exists: join the state group. */
        void ready();

        /** Re-read after a failed write: the data plane starts afresh from what the owned partitions hold. */
        void loaded(CoordinatorState state);

        /** State partitions taken over: what they hold, now part of the state, to start. */
        void taken(CoordinatorState part);

        /** These mirrors left the state (their partition went to another instance): stop them; done once stopped. */
        CompletableFuture<Void> givenUp(Set<String> mirrors);
    }

    private final KafkaClients clients;
    private final MirrorServiceConfig config;
    private final MirrorMetrics metrics;
    private final MirrorConfigRules rules;
    private final CoordinatorThread thread;
    private final Listener listener;
    private final GroupCommit commit;
    private volatile CoordinatorStatus status = CoordinatorStatus.loading("starting");
    /** Written only on the coordinator thread; volatile for {@link #readServiceConfigs()}. */
    private volatile MirrorStateStore store;
    /** {@code store}'s partition count, for readers off the coordinator thread. */
    private volatile int statePartitions;
    /** Touched only on the coordinator thread. */
    private StateSecrets secrets;
    /** The state partitions taken over and replayed, whose mirrors the state holds; read from any thread. */
    private volatile Set<Integer> held = Set.of();
    /** The state partitions the group assigned to this instance; coordinator thread. */
    private final Set<Integer> assigned = new TreeSet<>();

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

    /**
     * Ensures the state topic and readies the store; the state group then hands this instance its partitions ({@link
     * #take}). Retried while the destination is unreachable.
     */
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
                    secrets(),
                    Infrastructure.getDefaultWorkerPool());
            statePartitions = partitions;
            commit.reset(CoordinatorState.EMPTY);
            status = CoordinatorStatus.loading("joining the state group");
            listener.ready();
        } catch (StateFormatException | IOException e) {
            refuse(e);
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

    private void refuse(Exception e) {
        status = CoordinatorStatus.loading(e.getMessage());
        LOGGER.errorf("Refusing to start: %s", e.getMessage());
        Quarkus.asyncExit(1);
    }

    /**
     * Takes over state partitions the group assigned: fences their earlier writer, replays them, adds what they hold to
     * the state and starts it. While the destination does not let it, tried again after the back-off (the partitions
     * stay assigned: requests for their mirrors are answered 503 meanwhile). Coordinator thread.
     */
    void take(Set<Integer> partitions) {
        assigned.addAll(partitions);
        Set<Integer> missing = new TreeSet<>(assigned);
        missing.removeAll(store.owned());
        missing.retainAll(partitions);
        if (missing.isEmpty()) {
            if (store.owned().containsAll(assigned)) { // a member with nothing (new) to take is active too
                status = CoordinatorStatus.active();
            }
            return;
        }
        flushPending();
        CoordinatorState part;
        try {
            part = CoordinatorState.of(store.take(missing));
        } catch (StateFormatException e) {
            refuse(e);
            return;
        } catch (RuntimeException e) {
            status = CoordinatorStatus.loading("taking over state partitions " + missing + ": " + e);
            LOGGER.warnf(
                    "Cannot take over state partitions %s yet (%s); retrying in %d ms",
                    missing, e, config.destination().retryBackoffMs());
            thread.schedule("take over", config.destination().retryBackoffMs(), () -> take(assigned));
            return;
        }
        commit.reset(commit.state().merge(part));
        held = store.owned();
        status = CoordinatorStatus.active();
        LOGGER.infof(
                "Took over %d state partition(s) %s: %d mirror(s); %d mirror(s) on this instance",
                missing.size(),
                missing,
                part.mirrors().size(),
                commit.state().mirrors().size());
        listener.taken(part);
    }

    /**
     * Gives up state partitions: their mirrors leave the state and stop, and their writers close. Coordinator thread.
     *
     * @return done once the mirrors stopped
     */
    CompletableFuture<Void> giveUp(Set<Integer> partitions) {
        flushPending();
        assigned.removeAll(partitions);
        int count = statePartitions;
        Set<String> leaving = new TreeSet<>();
        commit.state().mirrors().keySet().forEach(name -> {
            if (partitions.contains(MirrorStateStore.partitionFor(name, count))) {
                leaving.add(name);
            }
        });
        if (store != null) { // stop holding first: a reader that sees the mirrors gone must see the partition gone too
            store.release(partitions);
            held = store.owned();
        }
        commit.reset(commit.state().withoutMirrors(leaving));
        LOGGER.infof(
                "Gave up %d state partition(s) %s with %d mirror(s): %s",
                partitions.size(), partitions, leaving.size(), leaving);
        return listener.givenUp(leaving);
    }

    /**
     * The service settings as the owner of their state partition wrote them, when this instance does not own it;
     * empty when it does (its own state holds them), the state is not loaded or its store is closing. Blocking, any
     * thread.
     */
    Optional<Map<String, String>> readServiceConfigs(IntPredicate ownedHere) {
        MirrorStateStore current = store;
        if (current == null || !status.isActive() || ownedHere.test(current.serviceConfigPartition())) {
            return Optional.empty();
        }
        return current.readServiceConfigs();
    }

    /**
     * The partitions of every mirror, whichever instance runs it: this instance's from its state, the others' as their
     * state partitions hold them committed now (read with a consumer of its own). Empty, without a read, while this
     * instance holds every state partition. A partition taken over or given up meanwhile is in one of the two: it is
     * read from the topic unless it was held both before and after the state was looked at (a take merges its mirrors
     * before it holds the partition, a give-up stops holding before it drops them). Blocking, any thread.
     */
    Optional<Map<String, Map<MirrorPartition, PartitionStatus>>> readEveryMirrorsPartitions() {
        MirrorStateStore current = store;
        Set<Integer> before = held;
        Map<String, Map<MirrorPartition, PartitionStatus>> local = state().partitions();
        Set<Integer> unread = new TreeSet<>();
        for (int p = 0; p < statePartitions; p++) {
            if (!before.contains(p) || !held.contains(p)) {
                unread.add(p);
            }
        }
        if (current == null || unread.isEmpty()) {
            return Optional.empty();
        }
        Map<String, Map<MirrorPartition, PartitionStatus>> every = new HashMap<>(current.readPartitions(unread));
        every.putAll(local);
        return Optional.of(every);
    }

    /** Adopts the service settings another instance wrote; whether they changed. Coordinator thread. */
    boolean adoptServiceConfigs(Map<String, String> configs) {
        if (store == null
                || assigned.contains(store.serviceConfigPartition())
                || configs.equals(commit.state().serviceConfigs())) {
            return false;
        }
        commit.adopt(s -> s.withServiceConfigs(configs));
        return true;
    }

    /** How many mirrors each state partition this instance holds has (any thread). */
    Map<Integer, Integer> mirrorsPerPartition() {
        int partitions = statePartitions;
        Map<Integer, Integer> counts = new HashMap<>();
        if (partitions > 0) {
            state().mirrors()
                    .keySet()
                    .forEach(name -> counts.merge(MirrorStateStore.partitionFor(name, partitions), 1, Integer::sum));
        }
        return counts;
    }

    /**
     * Whether this instance holds the state partition now (taken over and replayed): only then does the state's
     * silence about a mirror of it mean the mirror does not exist. Any thread.
     */
    boolean holds(int partition) {
        return held.contains(partition);
    }

    /** The state partitions this instance holds now (any thread). */
    Set<Integer> held() {
        return held;
    }

    /** The state partitions the group assigned to this instance (coordinator thread). */
    Set<Integer> assigned() {
        return Set.copyOf(assigned);
    }

    /** Writes what the tick has pending before the state partitions change hands; a failure was answered already. */
    private void flushPending() {
        try {
            commit.flush();
        } catch (MirrorException e) {
            // answered to the changes' callers, and handled in writeFailed
        }
    }

    /**
     * The state encryption keys configured (the first seals), with the config rules' idea of what is secret: read once,
     * not on every retry of the load.
     */
    private StateSecrets secrets() throws IOException {
        if (secrets == null) {
            secrets = readSecrets();
        }
        return secrets;
    }

    private StateSecrets readSecrets() throws IOException {
        List<String> keys = new ArrayList<>(config.state().encryption().keys().orElse(List.of()));
        if (config.state().encryption().keyFile().isPresent()) {
            String file = config.state().encryption().keyFile().get();
            try {
                keys.addAll(Files.readAllLines(Path.of(file)));
            } catch (IOException e) {
                throw new IOException("mirror.state.encryption.key.file " + file + " cannot be read: " + e, e);
            }
        }
        try {
            return new StateSecrets(SecretCipher.of(keys), rules::isSensitive);
        } catch (IllegalArgumentException e) {
            throw new IOException("mirror.state.encryption.keys: " + e.getMessage(), e);
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
     * A topic recreated for diverging: the partition statuses, what it held (null: nothing preserved), and the end of
     * what verifications confirmed of it (its destination log is a new one: a verification {@code "from": "last"} of
     * it starts from its log start again), in one write, with the tick's others; {@code then} runs once it committed.
     */
    void queueRecreated(
            String mirror,
            String topic,
            TopicDivergence divergence,
            Map<MirrorPartition, PartitionStatus> changed,
            String what,
            Runnable then) {
        List<MirrorPartition> rewritten = state().verified(mirror).keySet().stream()
                .filter(p -> p.topic().equals(topic))
                .toList();
        queue(
                c -> {
                    c.partitions(mirror, changed).forgetVerified(mirror, rewritten);
                    if (divergence != null) {
                        c.divergence(mirror, divergence);
                    }
                },
                s -> {
                    CoordinatorState next = s.withPartitions(mirror, changed).withoutVerified(mirror, rewritten);
                    return divergence == null ? next : next.withDivergence(mirror, divergence);
                },
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
            // another instance took the partition over: the group tells this one so too; its mirrors stop here now
            LOGGER.error(e.getMessage() + "; stopping the mirrors of that partition on this instance");
            giveUp(Set.of(e.partition()));
            return new MirrorException(MirrorError.COORDINATOR_NOT_AVAILABLE, e.getMessage());
        }
        if (failure instanceof MirrorStateStore.NotOwnedException e) {
            return new MirrorException(
                    MirrorError.COORDINATOR_NOT_AVAILABLE,
                    e.getMessage() + " (the state group is moving it): retry, any instance forwards it to its owner");
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
            CoordinatorState state = CoordinatorState.of(store.take(assigned));
            commit.reset(state);
            status = CoordinatorStatus.active();
            listener.loaded(state);
        } catch (RuntimeException reopen) {
            status = CoordinatorStatus.loading("re-reading state after a failed write: " + reopen);
            thread.schedule("re-read state", config.destination().retryBackoffMs(), this::reopen);
        }
    }
}
