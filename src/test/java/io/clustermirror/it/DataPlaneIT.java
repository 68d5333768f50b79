package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;

/** The offset-preserving data plane on the two real clusters: DESIGN §4, issue 3's must-show list. */
class DataPlaneIT extends ServiceIT {

    private static final String THROTTLE = "/v1/config/mirror.replication.throttled.rate";

    @Test
    void backlogShouldLandAtIdenticalOffsetsInIdenticalBatches() throws Exception {
        // Given: 3 topics x 4 partitions, 108,000 keyed records with headers, written with every codec by idempotent
        // producers
        String mirror = uniqueName("fidelity");
        createMirror(mirror);
        List<String> topics = List.of(uniqueName("fid-a"), uniqueName("fid-b"), uniqueName("fid-c"));
        try (Admin admin = bed.sourceAdmin()) {
            for (String topic : topics) {
                Kafka.createTopic(admin, topic, 4, Map.of());
            }
        }
        for (String topic : topics) {
            for (String codec : List.of("none", "gzip", "lz4", "zstd")) {
                Kafka.produce(bed.source().bootstrapServers(), topic, 9_000, codec, codec);
            }
        }

        // When
        startTopics(mirror, topics.toArray(String[]::new));

        // Then
        long total = 0;
        for (String topic : topics) {
            awaitConverged(mirror, topic);
            total += assertIdentical(topic);
        }
        assertThat(total).isEqualTo(108_000);
    }

    @Test
    void sourceLogStartAboveZeroShouldBeTheDestinationLogStart() throws Exception {
        // Given: records deleted from the source's head, the new log start inside a batch
        String mirror = uniqueName("logstart");
        String topic = uniqueName("logstart");
        createMirror(mirror);
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, topic, 2, Map.of());
            Kafka.produce(bed.source().bootstrapServers(), topic, 5_000, "lz4", "ls");
            admin.deleteRecords(Map.of(
                            new TopicPartition(topic, 0),
                            RecordsToDelete.beforeOffset(1_234),
                            new TopicPartition(topic, 1),
                            RecordsToDelete.beforeOffset(2_001)))
                    .all()
                    .get();
        }

        // When
        startTopics(mirror, topic);
        awaitConverged(mirror, topic);

        // Then
        try (Admin source = bed.sourceAdmin();
                Admin destination = bed.destinationAdmin()) {
            Map<TopicPartition, Long> sourceStart = Kafka.offsets(source, topic, OffsetSpec.earliest());
            assertThat(sourceStart)
                    .containsEntry(new TopicPartition(topic, 0), 1_234L)
                    .containsEntry(new TopicPartition(topic, 1), 2_001L);
            assertThat(Kafka.offsets(destination, topic, OffsetSpec.earliest())).isEqualTo(sourceStart);
        }
        assertIdentical(topic);
    }

    @Test
    void liveTailShouldConvergeIdentical() throws Exception {
        String mirror = uniqueName("tail");
        String topic = uniqueName("tail");
        createMirror(mirror);
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, topic, 3, Map.of());
        }
        Kafka.produce(bed.source().bootstrapServers(), topic, 1_000, "lz4", "before");
        startTopics(mirror, topic);

        // When: producing while mirroring
        for (int round = 0; round < 10; round++) {
            Kafka.produce(
                    bed.source().bootstrapServers(), topic, 3_000, round % 2 == 0 ? "zstd" : "none", "live" + round);
        }

        // Then
        awaitConverged(mirror, topic);
        assertThat(assertIdentical(topic)).isEqualTo(31_000);
        // and each partition's lag is a metric (refreshed every 5 s)
        await().atMost(Duration.ofSeconds(15))
                .untilAsserted(() -> assertThat(
                                api().get("/q/metrics").then().extract().asString())
                        .contains("cluster_mirror_partition_lag{mirror=\"" + mirror + "\",partition=\"0\",topic=\""
                                + topic + "\"} 0.0")
                        .contains("cluster_mirror_partition_lag{mirror=\"" + mirror + "\",partition=\"2\",topic=\""
                                + topic + "\"} 0.0"));
    }

    @Test
    void pauseShouldStopTheFlowAndResumeShouldCatchUp() throws Exception {
        String mirror = uniqueName("pause");
        String topic = uniqueName("pause");
        mirrorConverged(mirror, topic, 2, 2_000, "lz4", "p1");

        // When paused
        topicVerb(mirror, "pause", topic);
        awaitAllPartitions(mirror, topic, "PAUSED");
        Map<TopicPartition, Long> pausedAt = Kafka.offsetsOf(bed.destination(), topic);
        Kafka.produce(bed.source().bootstrapServers(), topic, 2_000, "lz4", "p2");

        // Then nothing arrives (the ends only grow, so the wait's bound is slack for slow looks, never a second chance)
        await().during(Duration.ofSeconds(3))
                .atMost(Duration.ofSeconds(10))
                .until(() -> Kafka.offsetsOf(bed.destination(), topic).equals(pausedAt));
        topicVerb(mirror, "pause", topic);

        // When resumed, it catches up
        topicVerb(mirror, "resume", topic);
        awaitConverged(mirror, topic);
        assertThat(assertIdentical(topic)).isEqualTo(4_000);
    }

    @Test
    void stopShouldHandTheTopicBackWritableAndCopyNothingMore() throws Exception {
        String mirror = uniqueName("stop");
        String topic = uniqueName("stop");
        createMirror(mirror);
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, topic, 1, Map.of("retention.ms", "86400000", "compression.type", "gzip"));
        }
        Kafka.produce(bed.source().bootstrapServers(), topic, 1_000, "gzip", "s1");
        startTopics(mirror, topic);
        awaitConverged(mirror, topic);
        try (Admin destination = bed.destinationAdmin()) {
            Map<String, ConfigEntry> mirrored = configs(destination, topic);
            assertThat(mirrored.get("message.timestamp.after.max.ms").value())
                    .isEqualTo(String.valueOf(Long.MAX_VALUE));
            assertThat(mirrored.get("retention.ms").value()).isEqualTo("86400000");
            assertThat(mirrored.get("compression.type").value()).isEqualTo("producer");
        }

        // When
        topicVerb(mirror, "stop", topic);
        awaitAllPartitions(mirror, topic, "STOPPED");

        // Then the mirror-owned configs are back to the source's (the one it sets, the defaults of the others), and an
        // ordinary producer can write
        try (Admin destination = bed.destinationAdmin()) {
            Map<String, ConfigEntry> restored = configs(destination, topic);
            assertThat(restored.get("message.timestamp.after.max.ms").source())
                    .isNotEqualTo(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);
            assertThat(restored.get("compression.type").value()).isEqualTo("gzip");
        }
        long stoppedAt = Kafka.offsetsOf(bed.destination(), topic).get(new TopicPartition(topic, 0));
        try (KafkaProducer<byte[], byte[]> producer =
                Kafka.producer(bed.destination().bootstrapServers(), Map.of())) {
            long offset = producer.send(
                            new ProducerRecord<>(topic, 0, "local".getBytes(), "written after failover".getBytes()))
                    .get()
                    .offset();
            assertThat(offset).isEqualTo(stoppedAt);
        }
        Kafka.produce(bed.source().bootstrapServers(), topic, 500, "gzip", "s2");
        await().during(Duration.ofSeconds(3))
                .atMost(Duration.ofSeconds(10))
                .until(() ->
                        Kafka.offsetsOf(bed.destination(), topic).get(new TopicPartition(topic, 0)) == stoppedAt + 1);
    }

    @Test
    void killNineMidStreamShouldLoseAndDoubleNothing() throws Exception {
        String mirror = uniqueName("crash");
        String topic = uniqueName("crash");
        createMirror(mirror);
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, topic, 4, Map.of());
        }
        Kafka.produce(bed.source().bootstrapServers(), topic, 100_000, "lz4", "c1");
        AtomicBoolean producing = new AtomicBoolean(true);
        CompletableFuture<Void> producer = backgroundProducer(topic, producing, "c2");
        // the instance copies at 1 MiB/s until the kill, so that it is mid-stream however fast the data plane is
        api().body(Map.of("value", "1048576")).put(THROTTLE).then().statusCode(200);
        try {
            startTopics(mirror, topic);
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> Kafka.total(Kafka.offsetsOf(bed.destination(), topic)) > 10_000);

            // When: the service dies mid-stream and a new process takes over
            long destinationAtKill = Kafka.total(Kafka.offsetsOf(bed.destination(), topic));
            long sourceAtKill = Kafka.total(Kafka.offsetsOf(bed.source(), topic));
            bed.service().kill();
            bed.service().start();
            assertThat(destinationAtKill).as("killed mid-stream").isLessThan(sourceAtKill);
        } finally {
            api().delete(THROTTLE).then().statusCode(200); // the new process applied it from the state
        }
        producing.set(false);
        producer.join();

        // Then
        awaitConverged(mirror, topic);
        assertIdentical(topic);
    }

    @Test
    void destinationBrokerRestartMidStreamShouldConvergeIdentical() throws Exception {
        String mirror = uniqueName("dstrestart");
        String topic = uniqueName("dstrestart");
        createMirror(mirror);
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, topic, 2, Map.of());
        }
        Kafka.produce(bed.source().bootstrapServers(), topic, 20_000, "zstd", "d1");
        startTopics(mirror, topic);
        await().atMost(Duration.ofSeconds(60))
                .until(() -> Kafka.total(Kafka.offsetsOf(bed.destination(), topic)) > 1_000);
        AtomicBoolean producing = new AtomicBoolean(true);
        CompletableFuture<Void> producer = backgroundProducer(topic, producing, "d2");

        // When
        bed.destination().stop();
        bed.destination().start(Duration.ofSeconds(120));
        bed.awaitProducible(bed.destination());
        producing.set(false);
        producer.join();

        // Then
        bed.service().awaitReady(Duration.ofSeconds(90));
        awaitConverged(mirror, topic);
        assertIdentical(topic);
    }

    @Test
    void sourceBrokerRestartMidStreamShouldConvergeIdentical() throws Exception {
        String mirror = uniqueName("srcrestart");
        String topic = uniqueName("srcrestart");
        createMirror(mirror);
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, topic, 2, Map.of());
        }
        Kafka.produce(bed.source().bootstrapServers(), topic, 20_000, "lz4", "r1");
        startTopics(mirror, topic);
        await().atMost(Duration.ofSeconds(60))
                .until(() -> Kafka.total(Kafka.offsetsOf(bed.destination(), topic)) > 1_000);

        // When the source broker restarts under the fetcher
        bed.source().stop();
        bed.source().start(Duration.ofSeconds(120));
        bed.awaitProducible(bed.source());
        Kafka.produce(bed.source().bootstrapServers(), topic, 5_000, "zstd", "r2");

        // Then
        awaitConverged(mirror, topic);
        assertThat(assertIdentical(topic)).isEqualTo(25_000);
    }

    @Test
    void foreignWriteIntoAMirroredPartitionShouldFailNamingBothOffsets() throws Exception {
        String mirror = uniqueName("foreign");
        String topic = uniqueName("foreign");
        mirrorConverged(mirror, topic, 1, 300, "lz4", "f1");

        // When another producer writes into the mirrored destination partition, then the source moves on
        try (KafkaProducer<byte[], byte[]> producer =
                Kafka.producer(bed.destination().bootstrapServers(), Map.of())) {
            assertThat(producer.send(new ProducerRecord<>(topic, 0, "x".getBytes(), "foreign".getBytes()))
                            .get()
                            .offset())
                    .isEqualTo(300L);
        }
        Kafka.produce(bed.source().bootstrapServers(), topic, 10, "lz4", "f2");

        // Then
        Map<?, ?> failed = awaitPartitionState(mirror, topic, "FAILED");
        assertThat((String) failed.get("error")).contains("was appended at destination offset 301 instead of 300");
        assertThat(failed.get("retryAttempt")).isEqualTo(-1);
    }

    // ---------------------------------------------------------------- helpers

    /** Asserts that source and destination hold the same records at the same offsets in the same batches; returns the record count. */
    private static long assertIdentical(String topic) throws Exception {
        List<Kafka.Rec> source = Kafka.readAll(bed.source().bootstrapServers(), topic);
        List<Kafka.Rec> destination = Kafka.readAll(bed.destination().bootstrapServers(), topic);
        assertThat(destination).hasSameSizeAs(source);
        assertThat(destination).isEqualTo(source);
        try (Admin sourceAdmin = bed.sourceAdmin();
                Admin destinationAdmin = bed.destinationAdmin()) {
            Map<TopicPartition, Long> sourceStart = Kafka.offsets(sourceAdmin, topic, OffsetSpec.earliest());
            assertThat(Kafka.offsets(destinationAdmin, topic, OffsetSpec.earliest()))
                    .isEqualTo(sourceStart);
            for (TopicPartition tp : sourceStart.keySet()) {
                List<Kafka.Batch> sourceBatches =
                        Kafka.batches(bed.source(), topic, tp.partition(), sourceStart.get(tp));
                List<Kafka.Batch> destinationBatches =
                        Kafka.batches(bed.destination(), topic, tp.partition(), sourceStart.get(tp));
                assertThat(destinationBatches).as("batches of " + tp).isEqualTo(sourceBatches);
            }
        }
        return source.size();
    }

    private static Map<String, ConfigEntry> configs(Admin admin, String topic) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        Map<String, ConfigEntry> entries = new HashMap<>();
        admin.describeConfigs(List.of(resource))
                .all()
                .get()
                .get(resource)
                .entries()
                .forEach(e -> entries.put(e.name(), e));
        return entries;
    }

    private static CompletableFuture<Void> backgroundProducer(String topic, AtomicBoolean producing, String tag) {
        return CompletableFuture.runAsync(() -> {
            int round = 0;
            List<String> codecs = new ArrayList<>(List.of("lz4", "zstd", "none", "gzip"));
            while (producing.get()) {
                Kafka.produce(bed.source().bootstrapServers(), topic, 2_000, codecs.get(round % 4), tag + round++);
            }
        });
    }
}
