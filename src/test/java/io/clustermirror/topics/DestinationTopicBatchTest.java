package io.clustermirror.topics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.AlterConfigsOptions;
import org.apache.kafka.clients.admin.AlterConfigsResult;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.DescribeConfigsResult;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.DescribeTopicsResult;
import org.apache.kafka.clients.admin.MockAdminClient;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.internals.KafkaFutureImpl;
import org.junit.jupiter.api.Test;

/**
 * {@link DestinationTopicBatch#awaitServed}: how long a REST start waits between two looks at a new topic; and
 * {@link DestinationTopicBatch#restore}: the requests a stop's hand-back makes for all its topics.
 */
class DestinationTopicBatchTest {

    private static final Node BROKER = new Node(0, "localhost", 9092);

    @Test
    void aTopicNotShownYetShouldBeLookedAtAgainAfterTenMillisecondsThenAfterWaitsDoublingToAHundred() throws Exception {
        MockAdminClient destination = new MockAdminClient(List.of(BROKER), BROKER);
        List<Long> waits = new ArrayList<>();
        DestinationTopicBatch batch = new DestinationTopicBatch(destination, destination, 30_000, millis -> {
            waits.add(millis);
            if (waits.size() == 6) { // the broker shows it from the seventh look on
                destination.addTopic(false, "created", List.of(led(0)), Map.of());
            }
        });

        batch.awaitServed(Map.of("created", 1));

        assertThat(waits).hasSize(6);
        // kafka-clients' ExponentialBackoff(10, 2, 100, 0.2): 10, 20, 40, 80, then 100 ms, each ±20%, never past 100
        assertThat(waits.get(0)).isBetween(8L, 12L);
        assertThat(waits.get(1)).isBetween(16L, 24L);
        assertThat(waits.get(2)).isBetween(32L, 48L);
        assertThat(waits.get(3)).isBetween(64L, 96L);
        assertThat(waits.subList(4, 6)).allSatisfy(wait -> assertThat(wait).isBetween(80L, 100L));
    }

    @Test
    void topicsShownLedAtTheFirstLookShouldNotBeWaitedFor() throws Exception {
        MockAdminClient destination = new MockAdminClient(List.of(BROKER), BROKER);
        destination.addTopic(false, "served", List.of(led(0), led(1)), Map.of());
        List<Long> waits = new ArrayList<>();
        DestinationTopicBatch batch = new DestinationTopicBatch(destination, destination, 30_000, waits::add);

        batch.awaitServed(Map.of("served", 2));

        assertThat(waits).isEmpty();
    }

    @Test
    void topicsHandedBackShouldHaveTheirOwnedConfigsRestoredWithOneRequestOfEachKind() throws Exception {
        CountingAdmin source = new CountingAdmin();
        source.addTopic(false, "a", List.of(led(0)), Map.of("compression.type", "gzip"));
        source.addTopic(false, "b", List.of(led(0)), Map.of());
        source.dynamic.add("a"); // compression.type is set on the source topic a
        CountingAdmin destination = new CountingAdmin();
        Map<String, String> owned = DestinationTopicPlan.owned("1048588");
        Map<String, String> ownedAndMore = new HashMap<>(owned);
        ownedAndMore.put("retention.ms", "1000"); // not the mirror's: kept
        destination.addTopic(false, "a", List.of(led(0)), ownedAndMore);
        destination.addTopic(false, "b", List.of(led(0)), owned);
        destination.addTopic(false, "deleted-on-source", List.of(led(0)), owned);

        Map<String, Exception> failed = new DestinationTopicBatch(source, destination, 30_000)
                .restore(List.of("a", "b", "deleted-on-source", "gone-from-destination"));

        assertThat(failed).isEmpty();
        Map<String, String> restoredA = destination.configs("a");
        assertThat(restoredA).containsEntry("compression.type", "gzip").containsEntry("retention.ms", "1000");
        assertThat(restoredA).doesNotContainKeys("message.timestamp.type", "max.message.bytes");
        for (String topic : List.of("b", "deleted-on-source")) {
            assertThat(destination.configs(topic))
                    .doesNotContainKeys(owned.keySet().toArray(String[]::new));
        }
        assertThat(source.requests).containsExactly("describeTopics", "describeConfigs");
        assertThat(destination.requests).containsExactly("describeTopics", "incrementalAlterConfigs");
    }

    @Test
    void aHandBackOfMoreTopicsThanABatchShouldAskInRequestsOfABatchEach() throws Exception {
        CountingAdmin source = new CountingAdmin();
        CountingAdmin destination = new CountingAdmin();
        List<String> topics = new ArrayList<>();
        for (int i = 0; i <= DestinationTopicPlan.MAX_TOPICS_PER_BATCH; i++) {
            topics.add("t" + i);
            source.addTopic(false, "t" + i, List.of(led(0)), Map.of());
            destination.addTopic(false, "t" + i, List.of(led(0)), DestinationTopicPlan.owned("1048588"));
        }

        assertThat(new DestinationTopicBatch(source, destination, 30_000).restore(topics))
                .isEmpty();

        assertThat(source.requests)
                .containsExactly("describeTopics", "describeConfigs", "describeTopics", "describeConfigs");
        assertThat(destination.requests)
                .containsExactly(
                        "describeTopics", "describeTopics", "incrementalAlterConfigs", "incrementalAlterConfigs");
    }

    @Test
    void aSourceThatDoesNotAnswerShouldFailEveryTopicItWasAskedForAndChangeNothing() throws Exception {
        CountingAdmin source = new CountingAdmin();
        source.addTopic(false, "a", List.of(led(0)), Map.of());
        source.timeoutNextRequest(2); // the topics' description and the configs'
        CountingAdmin destination = new CountingAdmin();
        Map<String, String> owned = DestinationTopicPlan.owned("1048588");
        destination.addTopic(false, "a", List.of(led(0)), owned);
        destination.addTopic(false, "b", List.of(led(0)), owned);

        Map<String, Exception> failed =
                new DestinationTopicBatch(source, destination, 30_000).restore(List.of("a", "b"));

        assertThat(failed).containsOnlyKeys("a", "b");
        assertThat(failed.values())
                .allSatisfy(error ->
                        assertThat(error).hasCauseInstanceOf(org.apache.kafka.common.errors.TimeoutException.class));
        assertThat(destination.requests).containsExactly("describeTopics");
        assertThat(destination.configs("a")).containsAllEntriesOf(owned);
    }

    @Test
    void aSourceThatNeverAnswersShouldBeWaitedForOnceForAllTheTopicsAndNamedInEachError() throws Exception {
        CountingAdmin source = new CountingAdmin();
        source.silent = true;
        CountingAdmin destination = new CountingAdmin();
        List<String> topics = List.of("a", "b", "c", "d", "e");
        topics.forEach(t -> destination.addTopic(false, t, List.of(led(0)), DestinationTopicPlan.owned("1048588")));

        long started = System.nanoTime();
        Map<String, Exception> failed = new DestinationTopicBatch(source, destination, 300)
                .restore(List.of("a", "b", "c", "d", "e", "gone-from-destination"));
        long tookMs = (System.nanoTime() - started) / 1_000_000;

        assertThat(failed).containsOnlyKeys(topics); // a topic the destination no longer has needs nothing
        assertThat(failed.values())
                .allSatisfy(error -> assertThat(error)
                        .isInstanceOf(java.util.concurrent.TimeoutException.class)
                        .hasMessage("the source cluster gave no answer within 300 ms"));
        // one deadline for all: a wait per topic would take at least 5 x 300 ms
        assertThat(tookMs).isBetween(300L, 1_400L);
        assertThat(destination.requests).containsExactly("describeTopics");
    }

    /**
     * A MockAdminClient that records which requests it was asked for, in order, and describes the configs of the topics
     * in {@link #dynamic} as set on the topic (MockAdminClient gives every entry an unknown source).
     */
    private static final class CountingAdmin extends MockAdminClient {
        final List<String> requests = new ArrayList<>();
        final Set<String> dynamic = new HashSet<>();
        /** Whether it never answers a description (a cluster gone, its connections hanging). */
        boolean silent;

        CountingAdmin() {
            super(List.of(BROKER), BROKER);
        }

        @Override
        public synchronized DescribeTopicsResult describeTopics(TopicCollection topics, DescribeTopicsOptions options) {
            requests.add("describeTopics");
            if (silent) {
                Map<String, KafkaFuture<TopicDescription>> never = new HashMap<>();
                ((TopicCollection.TopicNameCollection) topics)
                        .topicNames()
                        .forEach(topic -> never.put(topic, new KafkaFutureImpl<>()));
                return new DescribeTopicsResult(null, never) {};
            }
            return super.describeTopics(topics, options);
        }

        @Override
        public synchronized DescribeConfigsResult describeConfigs(
                Collection<ConfigResource> resources, DescribeConfigsOptions options) {
            requests.add("describeConfigs");
            Map<ConfigResource, KafkaFuture<Config>> futures = new HashMap<>();
            if (silent) {
                resources.forEach(resource -> futures.put(resource, new KafkaFutureImpl<>()));
                return new DescribeConfigsResult(futures) {};
            }
            for (ConfigResource resource : resources) {
                KafkaFuture<Config> config = super.describeConfigs(List.of(resource), options)
                        .values()
                        .get(resource);
                futures.put(
                        resource,
                        dynamic.contains(resource.name())
                                ? config.thenApply(c -> new Config(c.entries().stream()
                                        .map(e -> new ConfigEntry(
                                                e.name(),
                                                e.value(),
                                                ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG,
                                                false,
                                                false,
                                                List.of(),
                                                ConfigEntry.ConfigType.STRING,
                                                null))
                                        .toList()))
                                : config);
            }
            return new DescribeConfigsResult(futures) {};
        }

        @Override
        public synchronized AlterConfigsResult incrementalAlterConfigs(
                Map<ConfigResource, Collection<AlterConfigOp>> configs, AlterConfigsOptions options) {
            requests.add("incrementalAlterConfigs");
            return super.incrementalAlterConfigs(configs, options);
        }

        Map<String, String> configs(String topic) throws Exception {
            Map<String, String> configs = new HashMap<>();
            ConfigResource resource = DestinationTopicBatch.resource(topic);
            super.describeConfigs(List.of(resource), new DescribeConfigsOptions())
                    .all()
                    .get()
                    .get(resource)
                    .entries()
                    .forEach(e -> configs.put(e.name(), e.value()));
            return configs;
        }
    }

    private static TopicPartitionInfo led(int partition) {
        return new TopicPartitionInfo(partition, BROKER, List.of(BROKER), List.of(BROKER));
    }
}
