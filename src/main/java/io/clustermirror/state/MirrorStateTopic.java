package io.clustermirror.state;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.jboss.logging.Logger;

/**
 * Makes sure {@code __mirror_state} exists on the destination and is fit to hold state: created
 * compacted when missing, refused when it exists with a cleanup policy that would lose records.
 */
public final class MirrorStateTopic {

    private static final Logger LOGGER = Logger.getLogger(MirrorStateTopic.class);

    private MirrorStateTopic() {}

    /**
     * Ensures the topic and returns its partition count. Blocking: call on a worker thread.
     *
     * @throws StateFormatException when the topic exists but is not purely compacted
     */
    public static int ensure(Admin admin, String topic, int numPartitions, short replicationFactor, long timeoutMs)
            throws ExecutionException, InterruptedException, TimeoutException {
        TopicDescription description = describe(admin, topic, timeoutMs);
        if (description == null) {
            int brokers = admin.describeCluster()
                    .nodes()
                    .get(timeoutMs, TimeUnit.MILLISECONDS)
                    .size();
            short rf = replicationFactor;
            if (brokers < rf) {
                LOGGER.warnf(
                        "mirror.state.topic.replication.factor=%d but the destination has %d broker(s): creating %s with replication factor %d",
                        replicationFactor, brokers, topic, brokers);
                rf = (short) brokers;
            }
            NewTopic newTopic = new NewTopic(topic, numPartitions, rf)
                    .configs(Map.of(
                            TopicConfig.CLEANUP_POLICY_CONFIG,
                            TopicConfig.CLEANUP_POLICY_COMPACT,
                            TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG,
                            String.valueOf(Math.max(1, Math.min(2, rf - 1)))));
            try {
                admin.createTopics(List.of(newTopic)).all().get(timeoutMs, TimeUnit.MILLISECONDS);
                LOGGER.infof(
                        "Created state topic %s (%d partitions, replication factor %d, compacted)",
                        topic, numPartitions, rf);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw e;
                }
            }
            description = describe(admin, topic, timeoutMs);
            if (description == null) {
                throw new TimeoutException("State topic " + topic + " was created but is not yet visible");
            }
        }
        requireCompacted(admin, topic, timeoutMs);
        return description.partitions().size();
    }

    private static TopicDescription describe(Admin admin, String topic, long timeoutMs)
            throws ExecutionException, InterruptedException, TimeoutException {
        try {
            return admin.describeTopics(Set.of(topic))
                    .allTopicNames()
                    .get(timeoutMs, TimeUnit.MILLISECONDS)
                    .get(topic);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return null;
            }
            throw e;
        }
    }

    private static void requireCompacted(Admin admin, String topic, long timeoutMs)
            throws ExecutionException, InterruptedException, TimeoutException {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        Config config = admin.describeConfigs(Set.of(resource))
                .all()
                .get(timeoutMs, TimeUnit.MILLISECONDS)
                .get(resource);
        String policy = config.get(TopicConfig.CLEANUP_POLICY_CONFIG).value();
        if (!TopicConfig.CLEANUP_POLICY_COMPACT.equals(policy.replace(" ", ""))) {
            throw new StateFormatException("State topic " + topic + " exists with cleanup.policy=" + policy
                    + ", but it must be exactly 'compact': with 'delete' retention would erase mirrors and partition states. "
                    + "Fix: kafka-configs.sh --alter --entity-type topics --entity-name " + topic
                    + " --add-config cleanup.policy=compact (or delete the topic if it holds nothing of value)");
        }
    }
}
