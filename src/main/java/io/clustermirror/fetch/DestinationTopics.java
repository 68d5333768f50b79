package io.clustermirror.fetch;

import io.clustermirror.mirror.OwnedTopicConfigs;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * Destination topics of a mirror: created like the source's (same partitions, the source's non-default
 * configs, the destination's default replication factor) plus the mirror-owned configs that keep the
 * bytes as they come (DESIGN §4.1); restored to the source's values when the topic is stopped.
 * Blocking: call on a worker thread.
 */
public final class DestinationTopics {

    /** What the data plane needs to know about a prepared topic. */
    public record Prepared(String topic, int partitions) {}

    /** The topic cannot be mirrored as asked (e.g. the destination has more partitions than the source). */
    public static final class TopicMismatchException extends Exception {
        private static final long serialVersionUID = 1L;

        public TopicMismatchException(String message) {
            super(message);
        }
    }

    /**
     * The destination already has a topic of that name that this mirror did not create (nor adopt): it is left
     * untouched, no guard ACL, no config change, never recreated.
     */
    public static final class TopicConflictException extends Exception {
        private static final long serialVersionUID = 1L;

        public TopicConflictException(String topic) {
            super(
                    "destination topic " + topic
                            + " already exists and was not created by this mirror; it was left untouched. "
                            + "To mirror into it (it gets the read-only guard and the mirror-owned configs, and with "
                            + "mirror.truncation.policy=recreate it may be deleted and recreated), start it again with \"adoptExisting\": true");
        }
    }

    private final Admin source;
    private final Admin destination;
    private final long timeoutMs;

    public DestinationTopics(Admin source, Admin destination, long timeoutMs) {
        this.source = source;
        this.destination = destination;
        this.timeoutMs = timeoutMs;
    }

    /** Source topic names (internal ones included; callers filter). */
    public Set<String> sourceTopics() throws Exception {
        return source.listTopics(new org.apache.kafka.clients.admin.ListTopicsOptions().listInternal(true))
                .names()
                .get(timeoutMs, TimeUnit.MILLISECONDS);
    }

    /**
     * Creates or aligns the destination topic; empty when the source has no such topic.
     *
     * @param mayAdopt whether an existing destination topic may be aligned and guarded: the mirror created it (or
     *        adopted it before), or the operator said so; otherwise an existing topic is a {@link TopicConflictException}
     *        and nothing is changed on it
     */
    public Optional<Prepared> prepare(String topic, Collection<String> excludedProperties, boolean mayAdopt)
            throws Exception {
        Optional<TopicDescription> sourceTopic = describe(source, topic);
        if (sourceTopic.isEmpty()) {
            return Optional.empty();
        }
        int partitions = sourceTopic.get().partitions().size();
        Config sourceConfig = configs(source, topic);
        Map<String, String> copied = new HashMap<>();
        for (ConfigEntry entry : sourceConfig.entries()) {
            if (entry.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG
                    && !excludedProperties.contains(entry.name())
                    && !OwnedTopicConfigs.NAMES.contains(entry.name())) {
                copied.put(entry.name(), entry.value());
            }
        }
        Map<String, String> owned = owned(sourceConfig);
        Optional<TopicDescription> destinationTopic = describe(destination, topic);
        if (destinationTopic.isPresent() && !mayAdopt) {
            throw new TopicConflictException(topic);
        }
        if (destinationTopic.isEmpty()) {
            Map<String, String> all = new HashMap<>(copied);
            all.putAll(owned);
            try {
                destination
                        .createTopics(
                                List.of(new NewTopic(topic, Optional.of(partitions), Optional.empty()).configs(all)))
                        .all()
                        .get(timeoutMs, TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof org.apache.kafka.common.errors.TopicExistsException)) {
                    throw e;
                }
                if (!mayAdopt) {
                    throw new TopicConflictException(topic); // created by someone else since it was described
                }
            }
        } else {
            int existing = destinationTopic.get().partitions().size();
            if (existing > partitions) {
                throw new TopicMismatchException("destination topic " + topic + " has " + existing
                        + " partitions, the source only " + partitions);
            }
            if (existing < partitions) {
                destination
                        .createPartitions(Map.of(topic, NewPartitions.increaseTo(partitions)))
                        .all()
                        .get(timeoutMs, TimeUnit.MILLISECONDS);
            }
            alter(topic, owned, Set.of());
        }
        guard(topic, true);
        return Optional.of(new Prepared(topic, partitions));
    }

    /** Hands the topic back: the mirror-owned configs return to the source's values (or to defaults). */
    public void restore(String topic) throws Exception {
        Optional<TopicDescription> sourceTopic = describe(source, topic);
        Map<String, String> set = new HashMap<>();
        Set<String> delete = new java.util.HashSet<>(OwnedTopicConfigs.NAMES);
        if (sourceTopic.isPresent()) {
            for (ConfigEntry entry : configs(source, topic).entries()) {
                if (OwnedTopicConfigs.NAMES.contains(entry.name())
                        && entry.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG) {
                    set.put(entry.name(), entry.value());
                    delete.remove(entry.name());
                }
            }
        }
        if (describe(destination, topic).isPresent()) {
            alter(topic, set, delete);
        }
        guard(topic, false);
    }

    /**
     * Read-only enforcement (DESIGN §4.4): a DENY WRITE ACL for {@code User:*} on the topic while it is mirrored (the
     * service's principal is a super user, so its own writes pass). Returns false when the destination has no
     * authorizer, where enforcement cannot be had and the offset check is the only guard.
     */
    public boolean guard(String topic, boolean enforce) throws Exception {
        org.apache.kafka.common.acl.AclBinding binding = SourceFence.binding(topic);
        try {
            if (enforce) {
                destination.createAcls(List.of(binding)).all().get(timeoutMs, TimeUnit.MILLISECONDS);
            } else {
                destination.deleteAcls(List.of(binding.toFilter())).all().get(timeoutMs, TimeUnit.MILLISECONDS);
            }
            return true;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof org.apache.kafka.common.errors.SecurityDisabledException) {
                return false;
            }
            throw e;
        }
    }

    /** Deletes and recreates the destination topic (policy {@code recreate}). */
    public Prepared recreate(String topic, Collection<String> excludedProperties) throws Exception {
        try {
            destination.deleteTopics(List.of(topic)).all().get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                throw e;
            }
        }
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (true) {
            try {
                Optional<Prepared> prepared = prepare(topic, excludedProperties, true);
                if (prepared.isEmpty()) {
                    throw new TopicMismatchException("source topic " + topic + " no longer exists");
                }
                return prepared.get();
            } catch (ExecutionException e) {
                if (System.currentTimeMillis() > deadline) {
                    throw e;
                }
                Thread.sleep(200); // the deletion is still in progress
            }
        }
    }

    private static Map<String, String> owned(Config sourceConfig) {
        Map<String, String> owned = new HashMap<>();
        owned.put(TopicConfig.COMPRESSION_TYPE_CONFIG, "producer");
        owned.put(TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG, "CreateTime");
        owned.put(TopicConfig.MESSAGE_TIMESTAMP_AFTER_MAX_MS_CONFIG, String.valueOf(Long.MAX_VALUE));
        owned.put(TopicConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS_CONFIG, String.valueOf(Long.MAX_VALUE));
        owned.put(
                TopicConfig.MAX_MESSAGE_BYTES_CONFIG,
                sourceConfig.get(TopicConfig.MAX_MESSAGE_BYTES_CONFIG).value());
        return owned;
    }

    private void alter(String topic, Map<String, String> set, Set<String> delete) throws Exception {
        List<AlterConfigOp> ops = new ArrayList<>();
        set.forEach((k, v) -> ops.add(new AlterConfigOp(new ConfigEntry(k, v), AlterConfigOp.OpType.SET)));
        delete.forEach(k -> ops.add(new AlterConfigOp(new ConfigEntry(k, ""), AlterConfigOp.OpType.DELETE)));
        destination
                .incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, topic), ops))
                .all()
                .get(timeoutMs, TimeUnit.MILLISECONDS);
    }

    private Optional<TopicDescription> describe(Admin admin, String topic) throws Exception {
        try {
            return Optional.of(admin.describeTopics(List.of(topic))
                    .allTopicNames()
                    .get(timeoutMs, TimeUnit.MILLISECONDS)
                    .get(topic));
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return Optional.empty();
            }
            throw e;
        }
    }

    private Config configs(Admin admin, String topic) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        return admin.describeConfigs(List.of(resource))
                .all()
                .get(timeoutMs, TimeUnit.MILLISECONDS)
                .get(resource);
    }
}
