package io.clustermirror.state;

import io.clustermirror.mirror.AclEntry;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.PartitionStatus;
import io.clustermirror.mirror.TopicDivergence;
import io.clustermirror.mirror.TopicPromotion;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.utils.Utils;
import org.jboss.logging.Logger;

/**
 * Reads and writes the partitions of {@code __mirror_state} this instance owns. Each is written through a
 * transactional producer whose id names the partition, so the instance that takes a partition over fences the one
 * that had it instead of both writing.
 * A mirror's records all go to its coordinator partition {@code toPositive(murmur2(name)) % partitions}
 * ({@link #partitionFor}).
 * Not thread-safe: the coordinator calls it from its single thread.
 */
public final class MirrorStateStore implements AutoCloseable {

    private static final Logger LOGGER = Logger.getLogger(MirrorStateStore.class);

    /** Builds the Kafka clients the store needs; implemented by {@code KafkaClients}. */
    public interface Clients {
        KafkaProducer<byte[], byte[]> stateProducer(String transactionalId);

        KafkaConsumer<byte[], byte[]> stateReader();
    }

    private final Clients clients;
    private final String topic;
    private final int partitions;
    private final long timeoutMs;
    private final long writeTimeoutMs;
    private final StateSecrets secrets;
    /** Where the writers of partitions taken over together start their transactions, side by side. */
    private final Executor initPool;
    /** The writer of each partition this instance owns. */
    private final Map<Integer, KafkaProducer<byte[], byte[]>> writers = new TreeMap<>();

    /** The partitions taken and not released: each has a writer unless a failed write closed it. */
    private final Set<Integer> owned = new TreeSet<>();

    private boolean singleWriterFenced;

    /** Reads the service settings for {@link #readServiceConfigs()}, with one consumer kept open. */
    private final ServiceConfigFollower serviceConfigs;

    /**
     * @param timeoutMs how long opening (taking over as the writer, replaying) waits for the destination
     * @param writeTimeoutMs how long a write waits for its records to be acknowledged before it gives up
     * @param initPool threads (blocking calls allowed) on which the writers of partitions taken over start
     */
    public MirrorStateStore(
            Clients clients,
            String topic,
            int partitions,
            long timeoutMs,
            long writeTimeoutMs,
            StateSecrets secrets,
            Executor initPool) {
        this.initPool = initPool;
        this.clients = clients;
        this.topic = topic;
        this.partitions = partitions;
        this.timeoutMs = timeoutMs;
        this.writeTimeoutMs = writeTimeoutMs;
        this.secrets = secrets;
        this.serviceConfigs =
                new ServiceConfigFollower(clients, new TopicPartition(topic, serviceConfigPartition()), timeoutMs);
    }

    /** The coordinator partition of a mirror. */
    /** The state topic's partitions. */
    public int partitions() {
        return partitions;
    }

    public static int partitionFor(String mirror, int partitions) {
        return Utils.toPositive(Utils.murmur2(mirror.getBytes(StandardCharsets.UTF_8))) % partitions;
    }

    /**
     * Takes over as the writer of every partition and replays them all: {@link #take} of the whole topic.
     */
    public StateSnapshot open() {
        return take(IntStream.range(0, partitions).boxed().collect(Collectors.toSet()));
    }

    /**
     * Takes over as the writer of these partitions (each through a transactional producer whose id names it, so that
     * any earlier writer of the partition is fenced and its open transaction aborted), then reads their committed
     * records, and writes again the mirrors whose secrets are in clear while a state encryption key is given, or sealed
     * with a key other than the first. The first take also fences the single writer of releases before 0.19, whose
     * transactional id named the topic. Blocking.
     *
     * @return what the partitions hold
     */
    public StateSnapshot take(Set<Integer> partitions) {
        fenceSingleWriter();
        Set<Integer> taken = new TreeSet<>();
        try {
            List<CompletableFuture<Void>> inits = new ArrayList<>();
            for (int p : new TreeSet<>(partitions)) {
                closeWriter(p, Duration.ZERO);
                KafkaProducer<byte[], byte[]> writer = clients.stateProducer(transactionalId(p));
                writers.put(p, writer);
                taken.add(p);
                owned.add(p);
                // side by side: one takes a round trip or two to the transaction coordinator, and a takeover of 25
                // partitions one after the other took 3-4 s (bench/takeover.sh)
                inits.add(CompletableFuture.runAsync(writer::initTransactions, initPool));
            }
            for (CompletableFuture<Void> init : inits) {
                try {
                    init.join();
                } catch (CompletionException e) {
                    throw e.getCause() instanceof RuntimeException r ? r : e;
                }
            }
            Set<String> stale = new TreeSet<>();
            StateSnapshot snapshot = replay(partitions, stale);
            if (!stale.isEmpty()) {
                write(stale.stream() // one transaction per partition for all of them
                        .map(name -> mirrorEntry(snapshot.mirrors().get(name)))
                        .toList());
                LOGGER.infof(
                        "Sealed the secrets of %d mirror(s) with state encryption key '%s': %s",
                        stale.size(), secrets.cipher().activeKeyId().orElseThrow(), stale);
            }
            return snapshot;
        } catch (RuntimeException e) {
            release(taken);
            throw e;
        }
    }

    /** Stops writing these partitions (another instance takes them over). */
    public void release(Set<Integer> given) {
        owned.removeAll(given);
        given.forEach(p -> closeWriter(p, Duration.ofSeconds(5)));
    }

    /** The partitions this store took and has not released. */
    public Set<Integer> owned() {
        return Set.copyOf(owned);
    }

    /** The transactional id of a partition's writer. */
    static String transactionalId(String topic, int partition) {
        return "cluster-mirror-" + topic + "-" + partition;
    }

    private String transactionalId(int partition) {
        return transactionalId(topic, partition);
    }

    /** Fences, once, the one writer of the whole topic that releases before 0.19 used: it must not write any more. */
    private void fenceSingleWriter() {
        if (singleWriterFenced) {
            return;
        }
        try (KafkaProducer<byte[], byte[]> single = clients.stateProducer("cluster-mirror-coordinator-" + topic)) {
            single.initTransactions();
        }
        singleWriterFenced = true;
    }

    /**
     * Reads the topic from the beginning to its current end, compaction semantics applied in memory; names the mirrors
     * whose records should be sealed again into {@code stale}.
     */
    private StateSnapshot replay(Set<Integer> owned, Set<String> stale) {
        StateImage image = new StateImage(StateImage.ALL);
        long started = System.nanoTime();
        int records = read(owned, image::apply);
        StateSnapshot snapshot = new StateSnapshot(
                open(image.mirrors, stale),
                image.partitions,
                image.acls,
                image.promotions,
                image.divergences,
                image.configs,
                image.verified);
        LOGGER.infof(
                "Replayed %d record(s) of %s in %d ms: %d mirror(s), %d partition(s)",
                records,
                topic,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started),
                image.mirrors.size(),
                snapshot.partitions().values().stream().mapToInt(Map::size).sum());
        return snapshot;
    }

    /**
     * The mirrors with their secrets opened; the stale records into {@code stale}. Refuses (naming every mirror it
     * cannot open, and why) rather than start with a mirror whose secrets it would have to guess.
     */
    private Map<String, Mirror> open(Map<String, MirrorRecord> records, Set<String> stale) {
        Map<String, Mirror> mirrors = new HashMap<>();
        Map<String, String> unreadable = new TreeMap<>();
        records.forEach((name, record) -> {
            try {
                mirrors.put(name, secrets.open(record));
                if (secrets.stale(record)) {
                    stale.add(name);
                }
            } catch (StateSecrets.Unreadable e) {
                unreadable.put(name, e.getMessage());
            }
        });
        if (!secrets.cipher().enabled()) {
            List<String> inClear = records.entrySet().stream()
                    .filter(e -> secrets.holdsClearSecrets(e.getValue()))
                    .map(Map.Entry::getKey)
                    .sorted()
                    .toList();
            if (!inClear.isEmpty()) {
                LOGGER.warnf(
                        "%d mirror(s) keep inline secrets in clear in %s: %s; give mirror.state.encryption.keys to seal "
                                + "them, or use config-provider references (README \"Security\")",
                        inClear.size(), topic, inClear);
            }
        }
        if (!unreadable.isEmpty()) {
            throw new StateFormatException("the secrets of " + unreadable.size() + " mirror(s) in " + topic
                    + " cannot be opened: " + unreadable
                    + "; give the keys in mirror.state.encryption.keys (or mirror.state.encryption.key.file)");
        }
        return mirrors;
    }

    /** Reads the partitions' committed records from their start to their current end. Blocking. */
    private int read(Set<Integer> owned, Consumer<ConsumerRecord<byte[], byte[]>> sink) {
        int records = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = clients.stateReader()) {
            List<TopicPartition> tps = owned.stream()
                    .sorted()
                    .map(p -> new TopicPartition(topic, p))
                    .toList();
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = consumer.endOffsets(tps, Duration.ofMillis(timeoutMs));
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            while (!caughtUp(consumer, end)) {
                if (System.nanoTime() > deadline) {
                    throw new org.apache.kafka.common.errors.TimeoutException("Replay of " + topic
                            + " did not reach the end offsets " + end + " within " + timeoutMs + " ms");
                }
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    sink.accept(record);
                    records++;
                }
            }
        }
        return records;
    }

    /** The state partition of the service settings changed at runtime. */
    public int serviceConfigPartition() {
        return partitionFor("", partitions);
    }

    /**
     * The service settings changed at runtime as their partition holds them now, for an instance that does not own it
     * (the owner writes them): what was written since the last read is taken up ({@link ServiceConfigFollower}); empty
     * once the store is closing.
     * Blocking; safe off the coordinator thread (it touches none of the store's writers), one caller at a time.
     */
    public Optional<Map<String, String>> readServiceConfigs() {
        return serviceConfigs.read();
    }

    /**
     * The partitions of the mirrors these state partitions hold, as committed now, for partitions another instance
     * writes: a start's check that no mirror of another instance mirrors its topics. Only mirrors that exist (their
     * mirror record) are answered. Blocking; safe off the coordinator thread (its own consumer, none of the writers).
     */
    public Map<String, Map<MirrorPartition, PartitionStatus>> readPartitions(Set<Integer> partitions) {
        StateImage image = new StateImage(Set.of(StateKey.KIND_MIRROR, StateKey.KIND_PARTITION));
        read(partitions, image::apply);
        image.partitions.keySet().retainAll(image.mirrors.keySet());
        return image.partitions;
    }

    private static boolean caughtUp(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, Long> end) {
        for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
            if (consumer.position(e.getKey()) < e.getValue()) {
                return false;
            }
        }
        return true;
    }

    public void putMirror(Mirror mirror) {
        write(new Changes().mirror(mirror));
    }

    /** Deletes a mirror and the records of its partitions and its topics' promotions, in one transaction. */
    public void deleteMirror(
            String name,
            Collection<MirrorPartition> partitions,
            Collection<String> promotedTopics,
            Collection<String> divergedTopics) {
        write(new Changes().deleteMirror(name, partitions, promotedTopics, divergedTopics));
    }

    /** Persists the set of ACLs a mirror has created on the destination. */
    public void putCreatedAcls(String mirror, Set<AclEntry> acls) {
        write(new Changes().createdAcls(mirror, acls));
    }

    /** Persists partition statuses of one mirror, all or none. */
    public void putPartitions(String mirror, Map<MirrorPartition, PartitionStatus> statuses) {
        write(new Changes().partitions(mirror, statuses));
    }

    /**
     * Persists partition statuses and topic promotions of one mirror, all or none; a null promotion deletes the
     * topic's record.
     */
    public void putPromotions(
            String mirror, Map<String, TopicPromotion> promotions, Map<MirrorPartition, PartitionStatus> statuses) {
        write(new Changes().partitions(mirror, statuses).promotions(mirror, promotions));
    }

    /** Persists what a topic held when it was recreated for diverging, with the partition statuses, all or none. */
    public void putDivergence(
            String mirror, TopicDivergence divergence, Map<MirrorPartition, PartitionStatus> statuses) {
        write(new Changes().partitions(mirror, statuses).divergence(mirror, divergence));
    }

    /** Persists a service setting changed at runtime; a null value deletes it (back to its configured value). */
    public void putServiceConfig(String name, String value) {
        write(new Changes().serviceConfig(name, value));
    }

    /** Writes every change in one transaction, all or none (see {@link #write(List)} for its deadline). */
    public void write(Changes changes) {
        List<Entry> entries = new ArrayList<>(changes.size());
        changes.values.forEach((key, value) -> entries.add(new Entry(key, value == null ? null : serialize(value))));
        write(entries);
    }

    private byte[] serialize(Object value) {
        if (value instanceof Mirror mirror) {
            return StateSerde.value(secrets.seal(mirror));
        }
        if (value instanceof PartitionStatus status) {
            return StateSerde.value(PartitionRecord.of(status));
        }
        if (value instanceof TopicPromotion promotion) {
            return StateSerde.value(new PromotionRecord(StateSerde.FORMAT_VERSION, promotion));
        }
        if (value instanceof TopicDivergence divergence) {
            return StateSerde.value(new DivergenceRecord(StateSerde.FORMAT_VERSION, divergence));
        }
        if (value instanceof AclsRecord acls) {
            return StateSerde.value(acls);
        }
        if (value instanceof VerifiedRecord verified) {
            return StateSerde.value(verified);
        }
        if (value instanceof ServiceConfigRecord config) {
            return StateSerde.value(config);
        }
        throw new IllegalArgumentException(
                "not a state value: " + value.getClass().getName());
    }

    private Entry mirrorEntry(Mirror mirror) {
        return new Entry(StateKey.mirror(mirror.name()), serialize(mirror));
    }

    /**
     * State records to write together, as values (sealed and serialised only when written), one per key: a key changed
     * twice keeps its last value, which is what a replay of both records would leave. A null value deletes the key's
     * record.
     */
    public static final class Changes {
        private final Map<StateKey, Object> values = new LinkedHashMap<>();

        public Changes mirror(Mirror mirror) {
            values.put(StateKey.mirror(mirror.name()), mirror);
            return this;
        }

        /** A mirror gone, with the records of its partitions, promotions, divergences and ACLs. */
        public Changes deleteMirror(
                String name,
                Collection<MirrorPartition> partitions,
                Collection<String> promotedTopics,
                Collection<String> divergedTopics) {
            partitions.forEach(p -> values.put(StateKey.partition(name, p.topic(), p.partition()), null));
            partitions.forEach(p -> values.put(StateKey.verified(name, p.topic(), p.partition()), null));
            promotedTopics.forEach(t -> values.put(StateKey.promotion(name, t), null));
            divergedTopics.forEach(t -> values.put(StateKey.divergence(name, t), null));
            values.put(StateKey.acls(name), null);
            values.put(StateKey.mirror(name), null);
            return this;
        }

        public Changes partitions(String mirror, Map<MirrorPartition, PartitionStatus> statuses) {
            statuses.forEach((p, status) -> values.put(StateKey.partition(mirror, p.topic(), p.partition()), status));
            return this;
        }

        /** A null promotion deletes the topic's record. */
        public Changes promotions(String mirror, Map<String, TopicPromotion> promotions) {
            promotions.forEach((topic, promotion) -> values.put(StateKey.promotion(mirror, topic), promotion));
            return this;
        }

        public Changes divergence(String mirror, TopicDivergence divergence) {
            values.put(StateKey.divergence(mirror, divergence.topic()), divergence);
            return this;
        }

        /** How far verifications confirmed these partitions identical (exclusive). */
        public Changes verified(String mirror, Map<MirrorPartition, Long> offsets) {
            offsets.forEach((p, offset) -> values.put(
                    StateKey.verified(mirror, p.topic(), p.partition()),
                    new VerifiedRecord(StateSerde.FORMAT_VERSION, offset)));
            return this;
        }

        /** What verifications confirmed of these partitions no longer holds (their destination log was rewritten). */
        public Changes forgetVerified(String mirror, Collection<MirrorPartition> partitions) {
            partitions.forEach(p -> values.put(StateKey.verified(mirror, p.topic(), p.partition()), null));
            return this;
        }

        public Changes createdAcls(String mirror, Set<AclEntry> acls) {
            values.put(StateKey.acls(mirror), new AclsRecord(StateSerde.FORMAT_VERSION, List.copyOf(acls)));
            return this;
        }

        /** A null value deletes the setting (back to its configured value). */
        public Changes serviceConfig(String name, String value) {
            values.put(
                    StateKey.config(name),
                    value == null ? null : new ServiceConfigRecord(StateSerde.FORMAT_VERSION, value));
            return this;
        }

        /** Adds the other's changes after these (its values win). */
        public Changes addAll(Changes other) {
            other.values.forEach((key, value) -> {
                values.remove(key); // re-inserted last: the order of the records is the order of the changes
                values.put(key, value);
            });
            return this;
        }

        /** Records to write. */
        public int size() {
            return values.size();
        }

        public boolean isEmpty() {
            return values.isEmpty();
        }
    }

    private record Entry(StateKey key, byte[] value) {}

    /**
     * Writes the records, one transaction per state partition, and waits for each commit, giving up after {@code
     * writeTimeoutMs} without an acknowledgement. On failure the partition's writer is closed at once (not aborted: an
     * abort waits as long again for a destination that does not answer) and the store must take the partition again,
     * which aborts the unfinished transaction.
     *
     * @throws CoordinatorFencedException when another instance has taken over one of the partitions
     * @throws NotOwnedException when a record belongs to a partition this instance does not own; nothing is written
     */
    private void write(List<Entry> entries) {
        Map<Integer, List<Entry>> byPartition = new TreeMap<>();
        for (Entry entry : entries) {
            byPartition
                    .computeIfAbsent(partitionFor(entry.key().mirror(), partitions), p -> new ArrayList<>())
                    .add(entry);
        }
        for (int p : byPartition.keySet()) {
            if (!owned.contains(p)) {
                throw new NotOwnedException(topic, p);
            }
            if (!writers.containsKey(p)) {
                throw new IllegalStateException("the writer of partition " + p + " is closed after a failed write");
            }
        }
        byPartition.forEach(this::write);
    }

    private void write(int partition, List<Entry> entries) {
        KafkaProducer<byte[], byte[]> producer = writers.get(partition);
        try {
            producer.beginTransaction();
            List<Future<?>> sends = new ArrayList<>();
            for (Entry entry : entries) {
                sends.add(producer.send(
                        new ProducerRecord<>(topic, partition, StateSerde.key(entry.key()), entry.value())));
            }
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(writeTimeoutMs);
            for (Future<?> send : sends) { // one deadline for the write, not one per record
                send.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
            producer.commitTransaction();
        } catch (ProducerFencedException | InvalidProducerEpochException e) {
            closeWriter(partition, Duration.ofSeconds(5));
            throw new CoordinatorFencedException(topic, partition, e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof ProducerFencedException
                    || e.getCause() instanceof InvalidProducerEpochException) {
                closeWriter(partition, Duration.ofSeconds(5));
                throw new CoordinatorFencedException(topic, partition, e.getCause());
            }
            closeWriter(partition, Duration.ZERO);
            throw new StateWriteException(topic, e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closeWriter(partition, Duration.ZERO);
            throw new StateWriteException(topic, e);
        } catch (TimeoutException e) {
            closeWriter(partition, Duration.ZERO);
            throw new StateWriteException(
                    topic,
                    new TimeoutException(
                            "the destination did not acknowledge the write within " + writeTimeoutMs + " ms"));
        } catch (RuntimeException e) {
            closeWriter(partition, Duration.ZERO);
            throw new StateWriteException(topic, e);
        }
    }

    /** Whether every partition taken still has its writer (a failed write closes one until it is taken again). */
    public boolean isOpen() {
        return writers.keySet().equals(owned);
    }

    private void closeWriter(int partition, Duration timeout) {
        KafkaProducer<byte[], byte[]> writer = writers.remove(partition);
        if (writer != null) {
            try {
                writer.close(timeout);
            } catch (RuntimeException e) {
                LOGGER.debugf("Closing state writer of partition %d: %s", partition, e.toString());
            }
        }
    }

    @Override
    public void close() {
        serviceConfigs.close();
        owned.clear();
        new ArrayList<>(writers.keySet()).forEach(p -> closeWriter(p, Duration.ofSeconds(5)));
    }

    /** A record for a state partition that another instance owns (or no one, during a rebalance). */
    public static final class NotOwnedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NotOwnedException(String topic, int partition) {
            super("partition " + partition + " of " + topic + " is not owned by this instance");
        }
    }

    /**
     * Thrown when a write to {@code __mirror_state} failed. After a commit timeout the outcome is unknown,
     * so the caller re-opens the store and takes the replayed state as the truth.
     */
    public static final class StateWriteException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        StateWriteException(String topic, Throwable cause) {
            super("Could not write to " + topic + ": " + cause, cause);
        }
    }

    /** Another instance now owns the state topic; this one must stop writing. */
    public static final class CoordinatorFencedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        private final int partition;

        CoordinatorFencedException(String topic, int partition, Throwable cause) {
            super(
                    "Another Cluster Mirror instance has taken over partition " + partition + " of " + topic
                            + " (this one is fenced): " + cause.getMessage(),
                    cause);
            this.partition = partition;
        }

        /** The state partition another instance took over. */
        public int partition() {
            return partition;
        }
    }
}
