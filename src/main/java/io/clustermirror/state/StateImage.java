package io.clustermirror.state;

import io.clustermirror.mirror.AclEntry;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.PartitionStatus;
import io.clustermirror.mirror.TopicDivergence;
import io.clustermirror.mirror.TopicPromotion;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jboss.logging.Logger;

/**
 * What a run of {@code __mirror_state} records holds, folded as compaction leaves it: the last value of each key, a
 * tombstone removing the key. Only the kinds asked for are read ({@link StateKey}'s kinds); the others pass unparsed.
 * Pure: the store's reads feed it ({@link MirrorStateStore}, {@link ServiceConfigFollower}), and it is tested without a
 * broker. Not thread-safe.
 */
final class StateImage {

    private static final Logger LOGGER = Logger.getLogger(StateImage.class);

    /** Every kind this release writes. */
    static final Set<String> ALL = Set.of(
            StateKey.KIND_MIRROR,
            StateKey.KIND_PARTITION,
            StateKey.KIND_ACLS,
            StateKey.KIND_PROMOTION,
            StateKey.KIND_DIVERGENCE,
            StateKey.KIND_VERIFIED,
            StateKey.KIND_CONFIG);

    private final Set<String> kinds;

    /** The mirrors' records, secrets still sealed, by mirror. */
    final Map<String, MirrorRecord> mirrors = new HashMap<>();

    final Map<String, Map<MirrorPartition, PartitionStatus>> partitions = new HashMap<>();
    final Map<String, Set<AclEntry>> acls = new HashMap<>();
    final Map<String, Map<String, TopicPromotion>> promotions = new HashMap<>();
    final Map<String, Map<String, TopicDivergence>> divergences = new HashMap<>();
    final Map<String, String> configs = new HashMap<>();
    final Map<String, Map<MirrorPartition, Long>> verified = new HashMap<>();

    /** @param kinds the kinds of records to take up */
    StateImage(Set<String> kinds) {
        if (!ALL.containsAll(kinds)) {
            throw new IllegalArgumentException("not a kind of state record: " + kinds);
        }
        this.kinds = Set.copyOf(kinds);
    }

    /** Takes up one record, after those of its partition before it. */
    void apply(ConsumerRecord<byte[], byte[]> record) {
        if (record.key() == null) {
            throw new StateFormatException("__mirror_state record at " + record.topic() + "-" + record.partition() + "@"
                    + record.offset() + " has no key");
        }
        StateKey key = StateSerde.readKey(record.key());
        if (!kinds.contains(key.kind())) {
            if (!ALL.contains(key.kind())) {
                LOGGER.debugf(
                        "Skipping __mirror_state record of unknown kind %s for mirror %s", key.kind(), key.mirror());
            }
            return;
        }
        byte[] value = record.value();
        switch (key.kind()) {
            case StateKey.KIND_MIRROR -> put(mirrors, key.mirror(), value, StateSerde::readMirror);
            case StateKey.KIND_PARTITION ->
                put(
                        partitions.computeIfAbsent(key.mirror(), m -> new HashMap<>()),
                        new MirrorPartition(key.topic(), key.partition()),
                        value,
                        v -> StateSerde.readPartition(v).toStatus());
            case StateKey.KIND_ACLS ->
                put(
                        acls,
                        key.mirror(),
                        value,
                        v -> new TreeSet<>(StateSerde.readAcls(v).acls()));
            case StateKey.KIND_PROMOTION ->
                put(
                        promotions.computeIfAbsent(key.mirror(), m -> new HashMap<>()),
                        key.topic(),
                        value,
                        v -> StateSerde.readPromotion(v).promotion());
            case StateKey.KIND_DIVERGENCE ->
                put(
                        divergences.computeIfAbsent(key.mirror(), m -> new HashMap<>()),
                        key.topic(),
                        value,
                        v -> StateSerde.readDivergence(v).divergence());
            case StateKey.KIND_VERIFIED ->
                put(
                        verified.computeIfAbsent(key.mirror(), m -> new HashMap<>()),
                        new MirrorPartition(key.topic(), key.partition()),
                        value,
                        v -> StateSerde.readVerified(v).offset());
            case StateKey.KIND_CONFIG ->
                put(
                        configs,
                        key.name(),
                        value,
                        v -> StateSerde.readServiceConfig(v).value());
            default -> throw new IllegalStateException("kind " + key.kind() + " asked for but not read");
        }
    }

    /** A tombstone removes the key; any other value is read from its bytes and replaces the key's last. */
    private static <K, V> void put(Map<K, V> map, K key, byte[] value, Function<byte[], V> reader) {
        if (value == null) {
            map.remove(key);
        } else {
            map.put(key, reader.apply(value));
        }
    }
}
