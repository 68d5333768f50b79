package io.clustermirror.it;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.clustermirror.testbed.ServiceProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The metadata manager (issue 4) on the real clusters, against its own service with a 1 s refresh interval. */
class MetadataSyncIT extends ServiceIT {

    private static ServiceProcess syncing;

    @BeforeAll
    static void startASyncingService() {
        syncing = bed.newService(
                        "syncing",
                        Map.of(
                                "mirror.state.topic.name",
                                uniqueName("__mirror_state_sync"),
                                "mirror.metadata.refresh.interval.ms",
                                "1000",
                                "mirror.failed.retry.max.attempts",
                                "0"))
                .start();
        target = syncing;
    }

    @AfterAll
    static void stopIt() {
        target = null;
        syncing.stop();
    }

    @Test
    void storedPatternsShouldBeCompiledOncePerConfigChangeNotEveryCycle() throws Exception {
        // Given a mirror with nearly the largest pattern list accepted (compiling it takes seconds)
        String mirror = uniqueName("compiled");
        String groups = String.join(",", Collections.nCopies(99, "g".repeat(990) + uniqueName("x")));
        createMirror(mirror, "mirror.groups.exclude", groups, "mirror.topics.include", uniqueName("none") + ".*");
        long cycle = awaitCycles(mirror, 2);
        double compiled = compilations();

        // When three more sync cycles run over them
        awaitCycles(mirror, cycle + 3);

        // Then nothing was compiled again
        assertThat(compilations()).isEqualTo(compiled);

        // When the list changes, it is compiled once more, and then again not every cycle
        api().body(Map.of("set", Map.of("mirror.groups.exclude", groups + ",other")))
                .patch("/v1/mirrors/" + mirror + "/config")
                .then()
                .statusCode(200);
        cycle = awaitCycles(mirror, awaitCycles(mirror, 0) + 2);
        double recompiled = compilations();
        assertThat(recompiled).isGreaterThan(compiled);
        awaitCycles(mirror, cycle + 3);
        assertThat(compilations()).isEqualTo(recompiled);
    }

    @Test
    void aPatternMatchingTheStateTopicShouldNeverStartIt() throws Exception {
        try (Admin admin = bed.sourceAdmin()) {
            if (!admin.listTopics().names().get().contains(STATE_TOPIC)) {
                Kafka.createTopic(admin, STATE_TOPIC, 1, Map.of());
            }
        }
        String mirror = uniqueName("no-state");
        String topic = uniqueName("no-state");
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, topic, 1, Map.of());
        }
        createMirror(
                mirror,
                "mirror.topics.exclude",
                "nothing",
                "mirror.topics.include",
                "__mirror_stat[e]," + topic.replace("-", "\\-"));

        // Then the sync cycles start the other topic, never the state topic, and report nothing about it
        await().atMost(Duration.ofSeconds(30))
                .until(() -> api().get("/v1/mirrors/" + mirror)
                        .then()
                        .extract()
                        .jsonPath()
                        .getList("topics.topic")
                        .contains(topic));
        long cycle = awaitCycles(mirror, 0);
        awaitCycles(mirror, cycle + 2);
        var description = api().get("/v1/mirrors/" + mirror).then().extract().jsonPath();
        assertThat(description.getList("topics.topic", String.class)).containsExactly(topic);
        assertThat(description.getList("metadataSync.errors", String.class)).noneMatch(e -> e.contains(STATE_TOPIC));
    }

    /** Waits until the mirror has run at least {@code cycles} sync cycles; the count then. */
    private static long awaitCycles(String mirror, long cycles) {
        return await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .until(
                        () -> {
                            Long count = api().get("/v1/mirrors/" + mirror)
                                    .then()
                                    .extract()
                                    .jsonPath()
                                    .getObject("metadataSync.cycles", Long.class);
                            return count == null ? 0L : count;
                        },
                        count -> count >= cycles);
    }

    private static double compilations() {
        String metrics = given().baseUri(syncing.baseUri().toString())
                .get("/q/metrics")
                .then()
                .statusCode(200)
                .extract()
                .asString();
        return metrics.lines()
                .filter(l -> l.startsWith("cluster_mirror_pattern_compilations_total "))
                .map(l -> Double.parseDouble(l.split(" ")[1]))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no cluster_mirror_pattern_compilations_total in /q/metrics"));
    }

    @Test
    void newSourceTopicMatchingTheIncludePatternShouldBeMirrored() throws Exception {
        String prefix = uniqueName("auto");
        String mirror = uniqueName("auto");
        createMirror(mirror, "mirror.topics.include", prefix.replace("-", "\\-") + "\\..*");

        // When topics appear on the source after the mirror exists
        String matching = prefix + ".orders";
        String other = uniqueName("other");
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, matching, 2, Map.of());
            Kafka.createTopic(admin, other, 1, Map.of());
        }
        Kafka.produce(bed.source().bootstrapServers(), matching, 500, "lz4", "auto");

        // Then the matching one is mirrored (within two refresh intervals plus the truncation), the other is not
        await().atMost(Duration.ofSeconds(30))
                .until(() -> api().get("/v1/mirrors/" + mirror)
                        .then()
                        .extract()
                        .jsonPath()
                        .getList("topics.topic")
                        .contains(matching));
        awaitConverged(mirror, matching);
        assertThat(api().get("/v1/mirrors/" + mirror)
                        .then()
                        .extract()
                        .jsonPath()
                        .getList("topics.topic", String.class))
                .containsExactly(matching);
        assertThat(Kafka.readAll(bed.destination().bootstrapServers(), matching))
                .isEqualTo(Kafka.readAll(bed.source().bootstrapServers(), matching));
    }

    @Test
    void partitionAddedOnTheSourceShouldBeMirrored() throws Exception {
        String mirror = uniqueName("grow");
        String topic = uniqueName("grow");
        mirrorConverged(mirror, topic, 2, 400, "lz4", "g1");

        try (Admin admin = bed.sourceAdmin()) {
            admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(4)))
                    .all()
                    .get();
            Kafka.awaitLeaders(admin, topic);
        }
        Kafka.produce(bed.source().bootstrapServers(), topic, 800, "zstd", "g2");

        await().atMost(Duration.ofSeconds(30))
                .until(() -> describeTopic(mirror, topic).getList("partitions").size() == 4);
        awaitConverged(mirror, topic);
        assertThat(api().get("/v1/mirrors/" + mirror)
                        .then()
                        .extract()
                        .jsonPath()
                        .getString("metadataSync.acls"))
                .isEqualTo("destination has no authorizer: ACL sync and read-only enforcement inactive");
        assertThat(Kafka.readAll(bed.destination().bootstrapServers(), topic))
                .isEqualTo(Kafka.readAll(bed.source().bootstrapServers(), topic))
                .hasSize(1_200);
    }

    @Test
    void aCompactedTopicThatGrowsAfterARestartShouldAlignItsNewPartitionWithoutDeleteRecords() throws Exception {
        // Given a mirrored topic whose destination copy is compacted only (the policy kept out of the sync, so the
        // source may use DeleteRecords), and a service restart
        String mirror = uniqueName("compact-grow");
        String topic = uniqueName("compact-grow");
        createMirror(mirror, "mirror.topic.properties.exclude", "cleanup.policy");
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, topic, 1, Map.of());
        }
        Kafka.produce(bed.source().bootstrapServers(), topic, 100, "none", "c1");
        startTopics(mirror, topic);
        awaitConverged(mirror, topic);
        try (Admin admin = bed.destinationAdmin()) {
            admin.incrementalAlterConfigs(Map.of(
                            new ConfigResource(ConfigResource.Type.TOPIC, topic),
                            List.of(new AlterConfigOp(
                                    new ConfigEntry("cleanup.policy", "compact"), AlterConfigOp.OpType.SET))))
                    .all()
                    .get();
        }
        syncing.stop();

        // When the source topic grows meanwhile, and its new partition's log starts above 0
        TopicPartition added = new TopicPartition(topic, 1);
        long logStart;
        try (Admin admin = bed.sourceAdmin()) {
            admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(2)))
                    .all()
                    .get();
            Kafka.awaitLeaders(admin, topic);
            Kafka.produce(bed.source().bootstrapServers(), topic, 400, "none", "c2");
            long end = Kafka.offsets(admin, topic, OffsetSpec.latest()).get(added);
            logStart = end / 2;
            admin.deleteRecords(Map.of(added, RecordsToDelete.beforeOffset(logStart)))
                    .all()
                    .get();
        }
        assertThat(logStart).isPositive();
        syncing.start();

        // Then the new partition is aligned with fillers the cleaner will remove (DeleteRecords is refused on a
        // compacted
        // topic) and mirrored: the mirror reads the destination's policy, it does not remember the one it saw at start
        await().atMost(Duration.ofSeconds(30))
                .until(() -> describeTopic(mirror, topic).getList("partitions").size() == 2);
        awaitConverged(mirror, topic);
        try (Admin admin = bed.destinationAdmin();
                Admin source = bed.sourceAdmin()) {
            assertThat(Kafka.offsets(admin, topic, OffsetSpec.latest()))
                    .isEqualTo(Kafka.offsets(source, topic, OffsetSpec.latest()));
        }
    }

    @Test
    void sourceConfigChangesShouldFollowWhileMirrorOwnedConfigsHold() throws Exception {
        String mirror = uniqueName("configs");
        String topic = uniqueName("configs");
        createMirror(mirror);
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, topic, 1, Map.of("retention.ms", "3600000"));
        }
        startTopics(mirror, topic);
        awaitConverged(mirror, topic);

        // When the source changes retention.ms and compression.type
        alter(
                topic,
                Map.of("retention.ms", "123456", "compression.type", "gzip", "min.insync.replicas", "1"),
                List.of());

        // Then retention.ms follows; compression.type (mirror-owned) and min.insync.replicas (excluded) do not
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            Map<String, ConfigEntry> configs = destinationConfigs(topic);
            assertThat(configs.get("retention.ms").value()).isEqualTo("123456");
            assertThat(configs.get("compression.type").value()).isEqualTo("producer");
            assertThat(configs.get("min.insync.replicas").source())
                    .isNotEqualTo(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);
        });

        // When the source resets retention.ms to its default, the destination does too
        alter(topic, Map.of(), List.of("retention.ms"));
        await().atMost(Duration.ofSeconds(20))
                .until(() -> destinationConfigs(topic).get("retention.ms").source()
                        != ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);
        assertThat(destinationConfigs(topic).get("compression.type").value()).isEqualTo("producer");
        // and a config change that was applied is no error (an alter's result used to be counted as one)
        assertThat(api().get("/q/metrics").then().extract().asString())
                .doesNotContain("cluster_mirror_sync_errors_total{kind=\"TopicConfigMetadataSyncError\",mirror=\""
                        + mirror + "\"}");
    }

    @Test
    void deletedSourceTopicShouldLeaveTheDestinationStoppedAndWritable() throws Exception {
        String mirror = uniqueName("gone");
        String topic = uniqueName("gone");
        mirrorConverged(mirror, topic, 2, 300, "lz4", "x");

        try (Admin admin = bed.sourceAdmin()) {
            admin.deleteTopics(List.of(topic)).all().get();
        }

        awaitAllPartitions(mirror, topic, "STOPPED");
        assertThat(describeTopic(mirror, topic).getList("partitions.error", String.class))
                .allSatisfy(e -> assertThat(e).contains("source topic deleted"));
        try (KafkaProducer<byte[], byte[]> producer =
                Kafka.producer(bed.destination().bootstrapServers(), Map.of())) {
            producer.send(new ProducerRecord<>(topic, 0, "k".getBytes(), "after the source is gone".getBytes()))
                    .get();
        }
        assertThat(Kafka.readAll(bed.destination().bootstrapServers(), topic)).hasSize(301);
    }

    @Test
    void committedGroupOffsetShouldBeCopiedAndServeTheSameRecordAfterFailover() throws Exception {
        String mirror = uniqueName("groups");
        String topic = uniqueName("groups");
        String group = uniqueName("app");
        mirrorConverged(mirror, topic, 2, 2_000, "lz4", "grp");

        // Given a group that committed offset X on the source
        TopicPartition p0 = new TopicPartition(topic, 0);
        long x = 321;
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(bed.source().bootstrapServers(), group)) {
            consumer.assign(List.of(p0));
            consumer.commitSync(Map.of(p0, new OffsetAndMetadata(x)));
        }

        // Then the destination group has X
        await().atMost(Duration.ofSeconds(20)).until(() -> committed(group, p0) == x);

        // and after failover a consumer of that group on the destination reads the record the source has at X
        topicVerb(mirror, "stop", topic);
        awaitAllPartitions(mirror, topic, "STOPPED");
        Kafka.Rec expected = Kafka.readAll(bed.source().bootstrapServers(), topic).stream()
                .filter(r -> r.partition() == 0 && r.offset() == x)
                .findFirst()
                .orElseThrow();
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(bed.destination().bootstrapServers(), group)) {
            consumer.assign(List.of(p0));
            ConsumerRecord<byte[], byte[]> first = await().atMost(Duration.ofSeconds(20))
                    .until(
                            () -> consumer.poll(Duration.ofMillis(500)).records(p0).stream()
                                    .findFirst()
                                    .orElse(null),
                            r -> r != null);
            assertThat(first.offset()).isEqualTo(x);
            assertThat(new String(first.key())).isEqualTo(expected.key());
            assertThat(new String(first.value())).isEqualTo(expected.value());
        }
    }

    @Test
    void groupActiveOnTheDestinationShouldBeSkippedAndCounted() throws Exception {
        String mirror = uniqueName("active");
        String topic = uniqueName("active");
        String group = uniqueName("busy");
        mirrorConverged(mirror, topic, 1, 100, "lz4", "busy");
        TopicPartition p0 = new TopicPartition(topic, 0);

        // Given the group has a live member on the destination
        AtomicBoolean active = new AtomicBoolean(true);
        CompletableFuture<Void> member = CompletableFuture.runAsync(() -> {
            try (KafkaConsumer<byte[], byte[]> consumer =
                    consumer(bed.destination().bootstrapServers(), group)) {
                consumer.subscribe(List.of(topic));
                while (active.get()) {
                    consumer.poll(Duration.ofMillis(200));
                }
            }
        });
        try {
            // (until the member's join reaches the coordinator, Kafka 4 answers that the group does not exist)
            await().atMost(Duration.ofSeconds(30))
                    .ignoreExceptionsMatching(e -> e.getCause() instanceof GroupIdNotFoundException)
                    .until(() -> {
                        try (Admin admin = bed.destinationAdmin()) {
                            return !admin.describeConsumerGroups(List.of(group))
                                    .all()
                                    .get()
                                    .get(group)
                                    .members()
                                    .isEmpty();
                        }
                    });

            // When the source group commits
            try (KafkaConsumer<byte[], byte[]> consumer = consumer(bed.source().bootstrapServers(), group)) {
                consumer.assign(List.of(p0));
                consumer.commitSync(Map.of(p0, new OffsetAndMetadata(42)));
            }

            // Then the sync skips it and says so
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> api().get("/v1/mirrors/" + mirror)
                            .then()
                            .extract()
                            .jsonPath()
                            .getList("metadataSync.groupsSkippedActive", String.class)
                            .contains(group));
            String metrics = api().get("/q/metrics").then().extract().asString();
            assertThat(metrics).contains("cluster_mirror_groups_skipped_active_total{mirror=\"" + mirror + "\"}");
        } finally {
            active.set(false);
            member.join();
        }
    }

    @Test
    void anotherClusterBehindTheSourceAddressShouldHaltTheMirrorUntilTheRightOneIsBack() throws Exception {
        String mirror = uniqueName("impostor");
        String topic = uniqueName("impostor");
        mirrorConverged(mirror, topic, 1, 200, "lz4", "i1");
        String clusterId = sourceClusterId();

        // When another cluster answers at the source's address
        var impostor = bed.impostor(bed.source());
        bed.source().stop();
        try {
            impostor.start(Duration.ofSeconds(120));
            bed.awaitProducible(impostor);
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", impostor.bootstrapServers()))) {
                Kafka.createTopic(admin, topic, 1, Map.of());
            }
            Kafka.produce(impostor.bootstrapServers(), topic, 50, "lz4", "wrong");

            // Then the mirror halts, naming both ids, and copies nothing from it
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> api().get("/v1/mirrors/" + mirror)
                                    .then()
                                    .extract()
                                    .jsonPath()
                                    .getString("halted")
                            != null);
            assertThat(api().get("/v1/mirrors/" + mirror)
                            .then()
                            .extract()
                            .jsonPath()
                            .getString("halted"))
                    .contains(clusterId);
            assertThat(api().get("/q/metrics").then().extract().asString())
                    .contains("cluster_mirror_halts_total{mirror=\"" + mirror + "\"}");
        } finally {
            impostor.stop();
            bed.source().start(Duration.ofSeconds(120));
            bed.awaitProducible(bed.source());
        }
        assertThat(Kafka.readAll(bed.destination().bootstrapServers(), topic))
                .hasSize(200)
                .allSatisfy(r -> assertThat(r.value()).startsWith("i1"));

        // When the right cluster is back, mirroring resumes by itself
        Kafka.produce(bed.source().bootstrapServers(), topic, 100, "lz4", "i2");
        await().atMost(Duration.ofSeconds(30))
                .until(() -> api().get("/v1/mirrors/" + mirror)
                                .then()
                                .extract()
                                .jsonPath()
                                .getString("halted")
                        == null);
        awaitConverged(mirror, topic);
        assertThat(Kafka.readAll(bed.destination().bootstrapServers(), topic))
                .isEqualTo(Kafka.readAll(bed.source().bootstrapServers(), topic))
                .hasSize(300);
    }

    private static KafkaConsumer<byte[], byte[]> consumer(String bootstrap, String group) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");
        return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    private static long committed(String group, TopicPartition tp) throws Exception {
        try (Admin admin = bed.destinationAdmin()) {
            OffsetAndMetadata offset = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata()
                    .get()
                    .get(tp);
            return offset == null ? -1 : offset.offset();
        }
    }

    private static void alter(String topic, Map<String, String> set, List<String> delete) throws Exception {
        List<AlterConfigOp> ops = new ArrayList<>();
        set.forEach((k, v) -> ops.add(new AlterConfigOp(new ConfigEntry(k, v), AlterConfigOp.OpType.SET)));
        delete.forEach(k -> ops.add(new AlterConfigOp(new ConfigEntry(k, ""), AlterConfigOp.OpType.DELETE)));
        try (Admin admin = bed.sourceAdmin()) {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, topic), ops))
                    .all()
                    .get();
        }
    }

    private static Map<String, ConfigEntry> destinationConfigs(String topic) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        Map<String, ConfigEntry> entries = new HashMap<>();
        try (Admin admin = bed.destinationAdmin()) {
            admin.describeConfigs(List.of(resource))
                    .all()
                    .get()
                    .get(resource)
                    .entries()
                    .forEach(e -> entries.put(e.name(), e));
        }
        return entries;
    }
}
