package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** LOG_TRUNCATION on a destination that already holds data (DESIGN §4.3): prefix, divergence, retention gap. */
class LogTruncationIT extends ServiceIT {

    @Test
    void restartingAStoppedTopicShouldContinueAfterTheCommonPrefix() throws Exception {
        String mirror = uniqueName("prefix");
        String topic = uniqueName("prefix");
        mirrorConverged(mirror, topic, 2, 2_000, "lz4", "a");
        stop(mirror, topic);

        // When the source moves on and the topic is started again
        Kafka.produce(bed.source().bootstrapServers(), topic, 3_000, "zstd", "b");
        startTopics(mirror, topic);

        // Then it continues where the destination ends, checked by content
        awaitConverged(mirror, topic);
        assertThat(describeTopic(mirror, topic).getList("partitions.truncation", Map.class))
                .allSatisfy(t -> assertThat(List.of(t.get("step"), t.get("complete")))
                        .containsExactly("DIVERGENCE_CHECK", true));
        assertThat(Kafka.readAll(bed.destination().bootstrapServers(), topic))
                .isEqualTo(Kafka.readAll(bed.source().bootstrapServers(), topic))
                .hasSize(5_000);
    }

    @Test
    void divergedDestinationShouldFailNamingTheOffsets() throws Exception {
        String mirror = uniqueName("diverged");
        String topic = uniqueName("diverged");
        createMirror(mirror);
        divergentTopics(topic);

        startTopicsAdopting(mirror, topic);

        Map<?, ?> failed = awaitPartitionState(mirror, topic, "FAILED");
        assertThat((String) failed.get("error"))
                .contains("differs from the source at the same offsets")
                .contains("the destination holds 50 record offset(s) [0, 50) that the source does not have");
        assertThat(Kafka.readAll(bed.destination().bootstrapServers(), topic))
                .hasSize(50)
                .allSatisfy(r -> assertThat(r.value()).startsWith("other"));
    }

    @Test
    void divergedDestinationShouldBeRecreatedUnderPolicyRecreate() throws Exception {
        String mirror = uniqueName("recreate");
        String topic = uniqueName("recreate");
        createMirror(mirror, "mirror.truncation.policy", "recreate");
        divergentTopics(topic);

        startTopicsAdopting(mirror, topic);

        awaitConverged(mirror, topic);
        assertThat(Kafka.readAll(bed.destination().bootstrapServers(), topic))
                .isEqualTo(Kafka.readAll(bed.source().bootstrapServers(), topic))
                .hasSize(100);
        // and what only the destination held was preserved first, and reported
        assertThat(Kafka.readAll(bed.destination().bootstrapServers(), "__diverged." + topic))
                .hasSize(50)
                .allSatisfy(r -> assertThat(r.value()).startsWith("other"));
        assertThat(describeTopic(mirror, topic).getLong("divergence.partitions[0].records"))
                .isEqualTo(50);
    }

    @Test
    void offsetsDeletedOnTheSourceBeforeTheyWereMirroredShouldFail() throws Exception {
        String mirror = uniqueName("gap");
        String topic = uniqueName("gap");
        mirrorConverged(mirror, topic, 1, 100, "none", "g1");
        stop(mirror, topic);
        Kafka.produce(bed.source().bootstrapServers(), topic, 400, "none", "g2");
        try (Admin admin = bed.sourceAdmin()) {
            admin.deleteRecords(Map.of(new TopicPartition(topic, 0), RecordsToDelete.beforeOffset(300)))
                    .all()
                    .get();
        }

        startTopics(mirror, topic);

        Map<?, ?> failed = awaitPartitionState(mirror, topic, "FAILED");
        assertThat((String) failed.get("error"))
                .isEqualTo("source deleted offsets [100, 300) before they were mirrored");
    }

    @Test
    void aWriteWhilePausedShouldBeCaughtOnResume() throws Exception {
        String mirror = uniqueName("pausewrite");
        String topic = uniqueName("pausewrite");
        mirrorConverged(mirror, topic, 1, 100, "lz4", "p1");
        topicVerb(mirror, "pause", topic);
        awaitAllPartitions(mirror, topic, "PAUSED");

        // When someone writes into the paused destination partition, and the source moves on too
        try (var producer = Kafka.producer(bed.destination().bootstrapServers(), Map.of())) {
            producer.send(new ProducerRecord<>(topic, 0, "x".getBytes(), "foreign".getBytes()))
                    .get();
        }
        Kafka.produce(bed.source().bootstrapServers(), topic, 10, "lz4", "p2");
        topicVerb(mirror, "resume", topic);

        // Then resuming does not take the foreign record as mirrored data
        Map<?, ?> failed = awaitPartitionState(mirror, topic, "FAILED");
        assertThat((String) failed.get("error")).contains("differs from the source at the same offsets");
    }

    /** Source: 100 records; destination: the same topic with 50 other records. */
    private static void divergentTopics(String topic) throws Exception {
        try (Admin source = bed.sourceAdmin();
                Admin destination = bed.destinationAdmin()) {
            Kafka.createTopic(source, topic, 1, Map.of());
            Kafka.createTopic(destination, topic, 1, Map.of());
        }
        Kafka.produce(bed.source().bootstrapServers(), topic, 100, "lz4", "source");
        Kafka.produce(bed.destination().bootstrapServers(), topic, 50, "lz4", "other");
    }

    private static void stop(String mirror, String topic) {
        topicVerb(mirror, "stop", topic);
        awaitAllPartitions(mirror, topic, "STOPPED");
    }
}
