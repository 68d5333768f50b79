package io.clustermirror.topics;

import io.clustermirror.mirror.OwnedTopicConfigs;
import io.clustermirror.topics.TopicPreparation.Conflict;
import io.clustermirror.topics.TopicPreparation.Failed;
import io.clustermirror.topics.TopicPreparation.Mismatch;
import io.clustermirror.topics.TopicPreparation.NotOnSource;
import io.clustermirror.topics.TopicPreparation.Prepared;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.function.ToIntFunction;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.SecurityDisabledException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * The rules of {@link DestinationTopics#prepareAll} and {@link DestinationTopics#restoreConfigs}, kept apart from their
 * Admin calls so that they are tested without a cluster: what a topic needs on the destination given what both
 * clusters said about it, what each per-topic error means, and how a batch's writes are cut into requests.
 */
final class DestinationTopicPlan {

    /**
     * Topics prepared together: each batch costs seven requests whatever its size. 500 keeps a batch's reads and writes
     * far below the broker's limits (see {@link #MAX_RECORDS_PER_REQUEST}) and its request timeouts, and bounds what one
     * failed request fails: a REST start of the default {@code mirror.http.max.topics.per.request} (1,000) is two
     * batches, a sync cycle that found 10,000 new topics twenty.
     */
    static final int MAX_TOPICS_PER_BATCH = 500;

    /**
     * Metadata records one write request may make the controller append: a KRaft controller refuses a request of more
     * than 10,000 (QuorumController.MAX_RECORDS_PER_USER_OP, a PolicyViolationException for the whole request). Half of
     * it leaves room for what this count leaves out. A CreateTopics costs one record per topic, per partition and per
     * config; a single topic above it goes alone, as it would without batching.
     */
    static final int MAX_RECORDS_PER_REQUEST = 5_000;

    private DestinationTopicPlan() {}

    /** What the source said about a topic: its partitions, the configs set on it, its max.message.bytes in effect. */
    record SourceTopic(int partitions, Map<String, String> dynamicConfigs, String maxMessageBytes) {
        SourceTopic {
            dynamicConfigs = Map.copyOf(dynamicConfigs);
        }

        /** @throws IllegalStateException when the source did not say max.message.bytes, which the owned configs need */
        static SourceTopic of(String topic, int partitions, Config config) {
            Map<String, String> dynamic = new HashMap<>();
            for (ConfigEntry entry : config.entries()) {
                if (entry.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG && entry.value() != null) {
                    dynamic.put(entry.name(), entry.value());
                }
            }
            ConfigEntry maxMessageBytes = config.get(TopicConfig.MAX_MESSAGE_BYTES_CONFIG);
            if (maxMessageBytes == null || maxMessageBytes.value() == null) {
                throw new IllegalStateException(
                        "the source did not report " + TopicConfig.MAX_MESSAGE_BYTES_CONFIG + " of topic " + topic);
            }
            return new SourceTopic(partitions, dynamic, maxMessageBytes.value());
        }
    }

    /** What a topic needs. */
    sealed interface Step {}

    /** The destination has no such topic: it is created like the source's, with the owned configs. */
    record Create(String topic, int partitions, Map<String, String> configs, boolean mayAdopt) implements Step {
        Create {
            configs = Map.copyOf(configs);
        }

        /** Records the controller appends: the topic, its partitions, its configs. */
        int records() {
            return 1 + partitions + configs.size();
        }
    }

    /** The destination has the topic and it may be adopted: it grows to the source's partitions, gets the owned configs. */
    record Align(String topic, int partitions, int existing, Map<String, String> owned) implements Step {
        Align {
            owned = Map.copyOf(owned);
        }

        boolean grows() {
            return existing < partitions;
        }

        int newPartitions() {
            return partitions - existing;
        }
    }

    /** Nothing is written for the topic: its outcome is known. */
    record Settled(TopicPreparation outcome) implements Step {}

    /** One topic's answer from a batched request: its value, or the exception a request for it alone would have thrown. */
    record Answer<T>(T value, Exception error) {}

    /**
     * What a topic needs, from what both clusters answered about it. A topic unknown to the source is not on the source,
     * one unknown to the destination is created; any other failed answer fails the topic.
     *
     * @param mayAdopt whether an existing destination topic may be aligned and guarded
     * @param excludedProperties source configs not copied ({@code mirror.topic.properties.exclude})
     */
    static Step plan(
            String topic,
            boolean mayAdopt,
            Answer<Integer> sourcePartitions,
            Answer<Config> sourceConfig,
            Answer<Integer> destinationPartitions,
            Collection<String> excludedProperties) {
        if (causedBy(sourcePartitions.error(), UnknownTopicOrPartitionException.class)) {
            return new Settled(new NotOnSource(topic));
        }
        Exception failed = sourcePartitions.error() != null ? sourcePartitions.error() : sourceConfig.error();
        boolean onDestination = destinationPartitions.error() == null;
        if (failed == null
                && !onDestination
                && !causedBy(destinationPartitions.error(), UnknownTopicOrPartitionException.class)) {
            failed = destinationPartitions.error();
        }
        if (failed != null) {
            return new Settled(new Failed(topic, failed));
        }
        SourceTopic onSource;
        try {
            onSource = SourceTopic.of(topic, sourcePartitions.value(), sourceConfig.value());
        } catch (IllegalStateException e) {
            return new Settled(new Failed(topic, e));
        }
        return plan(
                topic,
                mayAdopt,
                onSource,
                onDestination ? Optional.of(destinationPartitions.value()) : Optional.empty(),
                excludedProperties);
    }

    private static Step plan(
            String topic,
            boolean mayAdopt,
            SourceTopic source,
            Optional<Integer> destinationPartitions,
            Collection<String> excludedProperties) {
        int partitions = source.partitions();
        Map<String, String> owned = owned(source.maxMessageBytes());
        if (destinationPartitions.isEmpty()) {
            Map<String, String> configs = new HashMap<>();
            source.dynamicConfigs().forEach((name, value) -> {
                if (!excludedProperties.contains(name) && !OwnedTopicConfigs.NAMES.contains(name)) {
                    configs.put(name, value);
                }
            });
            configs.putAll(owned);
            return new Create(topic, partitions, configs, mayAdopt);
        }
        if (!mayAdopt) {
            return new Settled(new Conflict(topic));
        }
        int existing = destinationPartitions.get();
        if (existing > partitions) {
            return new Settled(new Mismatch(
                    topic,
                    "destination topic " + topic + " has " + existing + " partitions, the source only " + partitions));
        }
        return new Align(topic, partitions, existing, owned);
    }

    /**
     * The owned configs of a topic handed back, returned to the source's values: those the source sets on the topic,
     * the others deleted (the destination's defaults then).
     */
    record Restore(String topic, Map<String, String> set, Set<String> delete) {}

    /**
     * What handing a topic's owned configs back takes, from what both clusters answered about it: nothing once the
     * destination no longer has the topic; all of them deleted once the source no longer has it; else the source's
     * dynamic values of them, the others deleted. Any other failed answer fails the topic.
     */
    static Answer<Optional<Restore>> restore(
            String topic, Answer<?> onSource, Answer<Config> sourceConfig, Answer<?> onDestination) {
        if (causedBy(onDestination.error(), UnknownTopicOrPartitionException.class)) {
            return new Answer<>(Optional.empty(), null);
        }
        boolean gone = causedBy(onSource.error(), UnknownTopicOrPartitionException.class);
        Exception failed = onDestination.error() != null
                ? onDestination.error()
                : gone ? null : onSource.error() != null ? onSource.error() : sourceConfig.error();
        if (failed != null) {
            return new Answer<>(null, failed);
        }
        Map<String, String> set = new HashMap<>();
        Set<String> delete = new HashSet<>(OwnedTopicConfigs.NAMES);
        if (!gone) {
            for (ConfigEntry entry : sourceConfig.value().entries()) {
                if (OwnedTopicConfigs.NAMES.contains(entry.name())
                        && entry.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG) {
                    set.put(entry.name(), entry.value());
                    delete.remove(entry.name());
                }
            }
        }
        return new Answer<>(Optional.of(new Restore(topic, set, delete)), null);
    }

    /** The configs the mirror owns on a destination topic while it mirrors it (DESIGN §4.1). */
    static Map<String, String> owned(String maxMessageBytes) {
        Map<String, String> owned = new HashMap<>();
        owned.put(TopicConfig.COMPRESSION_TYPE_CONFIG, "producer");
        owned.put(TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG, "CreateTime");
        owned.put(TopicConfig.MESSAGE_TIMESTAMP_AFTER_MAX_MS_CONFIG, String.valueOf(Long.MAX_VALUE));
        owned.put(TopicConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS_CONFIG, String.valueOf(Long.MAX_VALUE));
        owned.put(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, maxMessageBytes);
        return owned;
    }

    /**
     * A creation that failed: empty when the topic goes on to its guard, as when someone else created it after it was
     * described and this mirror may adopt it (it keeps the configs it was created with then, as with a single topic).
     */
    static Optional<TopicPreparation> createFailed(Create create, Exception error) {
        if (!causedBy(error, TopicExistsException.class)) {
            return Optional.of(new Failed(create.topic(), error));
        }
        return create.mayAdopt() ? Optional.empty() : Optional.of(new Conflict(create.topic()));
    }

    /** A guard ACL that could not be created: a destination without an authorizer has no guard, the offset check stays. */
    static TopicPreparation guardFailed(String topic, int partitions, Exception error) {
        return causedBy(error, SecurityDisabledException.class)
                ? new Prepared(topic, partitions)
                : new Failed(topic, error);
    }

    /** Whether a per-topic answer failed with that Kafka error. */
    static boolean causedBy(Exception error, Class<? extends Exception> kafkaError) {
        return error instanceof ExecutionException && kafkaError.isInstance(error.getCause());
    }

    /**
     * The items cut into requests of at most {@link #MAX_TOPICS_PER_BATCH} items and {@link #MAX_RECORDS_PER_REQUEST}
     * records, in order; an item costlier than that alone goes alone.
     */
    static <T> List<List<T>> requests(List<T> items, ToIntFunction<T> records) {
        List<List<T>> requests = new ArrayList<>();
        List<T> current = new ArrayList<>();
        long cost = 0;
        for (T item : items) {
            int itemCost = records.applyAsInt(item);
            if (!current.isEmpty()
                    && (current.size() == MAX_TOPICS_PER_BATCH || cost + itemCost > MAX_RECORDS_PER_REQUEST)) {
                requests.add(current);
                current = new ArrayList<>();
                cost = 0;
            }
            current.add(item);
            cost += itemCost;
        }
        if (!current.isEmpty()) {
            requests.add(current);
        }
        return requests;
    }
}
