package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.clustermirror.embedded.KafkaBrokerProcess;
import io.clustermirror.testbed.ServiceProcess;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Share-group start offsets carried to the destination. A Kafka 4.1.2 broker answers AlterShareGroupOffsets with
 * success and applies nothing, so the carry-over runs against a destination on Kafka 4.2.0 (with its own service
 * process; the source is the test bed's 4.1.2), and the test bed's 4.1.2 destination shows how the mirror reports
 * a destination that did not apply them.
 */
class ShareGroupSyncIT extends ServiceIT {

    private static KafkaBrokerProcess destination42;
    private static ServiceProcess service42;

    @BeforeAll
    static void startKafka42Destination() {
        destination42 = bed.kafka42Cluster("destination-4.2");
        destination42.start(Duration.ofSeconds(120));
        service42 = bed.newPlainService(
                        "service-4.2",
                        destination42,
                        Map.of("mirror.metadata.refresh.interval.ms", "1000", "mirror.state.topic.num.partitions", "1"))
                .start();
    }

    @AfterAll
    static void stopIt() {
        service42.stop();
        destination42.stop();
    }

    @AfterEach
    void backToTheSharedService() {
        target = null;
    }

    @Test
    void shareGroupStartOffsetShouldBeCarriedOverAndServeTheSameRecordAfterFailover() throws Exception {
        target = service42;
        String mirror = uniqueName("share");
        String topic = uniqueName("share");
        String group = uniqueName("share-app");
        TopicPartition p0 = new TopicPartition(topic, 0);

        // Given a share group on the source that has consumed and acknowledged part of the topic
        long start = sourceGroupPartlyConsumed(mirror, topic, group);

        // When the topic is mirrored to the 4.2 destination
        startTopics(mirror, topic);
        awaitConverged(mirror, topic);

        // Then the destination's share group has the source's start offset
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(startOffset(destination42.bootstrapServers(), group, p0))
                        .isEqualTo(startOffset(bed.source().bootstrapServers(), group, p0)));
        assertThat(api().get("/v1/mirrors/" + mirror)
                        .then()
                        .extract()
                        .jsonPath()
                        .getList("metadataSync.errors", String.class))
                .isEmpty();

        // and after failover a share consumer of that group on the destination starts at the source's record there
        // (a group without offsets would start at the log end: share.auto.offset.reset is "latest" by default)
        topicVerb(mirror, "stop", topic);
        awaitAllPartitions(mirror, topic, "STOPPED");
        long carried = startOffset(destination42.bootstrapServers(), group, p0);
        Kafka.Rec expected = Kafka.readAll(bed.source().bootstrapServers(), topic).stream()
                .filter(r -> r.offset() == carried)
                .findFirst()
                .orElseThrow();
        try (KafkaShareConsumer<byte[], byte[]> consumer = shareConsumer(destination42.bootstrapServers(), group)) {
            consumer.subscribe(List.of(topic));
            ConsumerRecord<byte[], byte[]> first = await().atMost(Duration.ofSeconds(30))
                    .until(() -> consumer.poll(Duration.ofMillis(500)).iterator(), it -> it.hasNext())
                    .next();
            assertThat(first.offset()).isEqualTo(carried).isGreaterThanOrEqualTo(start);
            assertThat(new String(first.key())).isEqualTo(expected.key());
            assertThat(new String(first.value())).isEqualTo(expected.value());
        }
    }

    @Test
    void aDestinationThatDoesNotApplyTheOffsetsShouldBeReported() throws Exception {
        String mirror = uniqueName("share412");
        String topic = uniqueName("share412");
        String group = uniqueName("share-app");
        TopicPartition p0 = new TopicPartition(topic, 0);
        sourceGroupPartlyConsumed(mirror, topic, group);

        // When the topic is mirrored to the test bed's 4.1.2 destination
        startTopics(mirror, topic);
        awaitConverged(mirror, topic);

        // Then the sync says, per group, that the destination did not apply the offsets, and counts it
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(api().get("/v1/mirrors/" + mirror)
                                .then()
                                .extract()
                                .jsonPath()
                                .getList("metadataSync.errors", String.class))
                        .anySatisfy(e -> assertThat(e)
                                .startsWith("group " + group + ": ")
                                .contains("did not apply it")
                                .contains("4.2.0 or newer destination")));
        assertThat(api().get("/q/metrics").then().extract().asString())
                .contains("cluster_mirror_sync_errors_total{kind=\"ShareGroupOffsetSyncError\",mirror=\"" + mirror
                        + "\"}");
        assertThat(startOffset(bed.destination().bootstrapServers(), group, p0))
                .isNotEqualTo(startOffset(bed.source().bootstrapServers(), group, p0));
    }

    /**
     * A mirror and a one-partition source topic whose share group has acknowledged records, with more records after
     * them; returns the group's start offset on the source once it has moved (the broker persists a new start offset
     * with the acknowledgements that follow the move, so the group consumes in two rounds).
     */
    private static long sourceGroupPartlyConsumed(String mirror, String topic, String group) throws Exception {
        String source = bed.source().bootstrapServers();
        createMirrorAndSourceTopic(mirror, topic, 1, Map.of());
        try (Admin admin = bed.sourceAdmin()) {
            admin.incrementalAlterConfigs(Map.of(
                            new ConfigResource(ConfigResource.Type.GROUP, group),
                            List.of(new AlterConfigOp(
                                    new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET))))
                    .all()
                    .get();
        }
        Kafka.produce(source, topic, 20, "lz4", "s1");
        consumeAndAcknowledge(source, group, topic, 20);
        Kafka.produce(source, topic, 10, "lz4", "s2");
        consumeAndAcknowledge(source, group, topic, 10);
        Kafka.produce(source, topic, 10, "lz4", "s3");
        TopicPartition p0 = new TopicPartition(topic, 0);
        return await().atMost(Duration.ofSeconds(30))
                .until(() -> startOffset(source, group, p0), offset -> offset >= 20);
    }

    private static void consumeAndAcknowledge(String bootstrap, String group, String topic, int count) {
        try (KafkaShareConsumer<byte[], byte[]> consumer = shareConsumer(bootstrap, group)) {
            consumer.subscribe(List.of(topic));
            int[] seen = {0};
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                seen[0] += consumer.poll(Duration.ofMillis(500)).count();
                consumer.commitSync(); // acknowledges what the poll delivered
                return seen[0] >= count;
            });
        }
    }

    private static KafkaShareConsumer<byte[], byte[]> shareConsumer(String bootstrap, String group) {
        return new KafkaShareConsumer<>(
                Map.of("bootstrap.servers", bootstrap, "group.id", group),
                new ByteArrayDeserializer(),
                new ByteArrayDeserializer());
    }

    /** The group's start offset of the partition, -1 when it has none. */
    private static long startOffset(String bootstrap, String group, TopicPartition tp) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            OffsetAndMetadata offset = admin.listShareGroupOffsets(
                            Map.of(group, new ListShareGroupOffsetsSpec().topicPartitions(List.of(tp))))
                    .partitionsToOffsetAndMetadata(group)
                    .get()
                    .get(tp);
            return offset == null ? -1 : offset.offset();
        }
    }
}
