package io.clustermirror.it;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.clustermirror.embedded.KafkaBrokerProcess;
import io.clustermirror.testbed.ServiceProcess;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.specification.RequestSpecification;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Failback after an unplanned failover, with two services: the test bed's shared one (destination B, the test bed's
 * destination) runs {@code a-to-b}; a second one, whose destination is A (the test bed's source), runs the reverse
 * mirror {@code b-to-a}. A's topics predate that service, so they are started with {@code adoptExisting}.
 */
class FailbackIT extends ServiceIT {

    private static ServiceProcess serviceA;

    @BeforeAll
    static void startTheServiceOfA() {
        serviceA = bed.newPlainService(
                        "failback-a",
                        bed.source(),
                        Map.of(
                                "mirror.metadata.refresh.interval.ms", "1000",
                                "mirror.state.topic.name", "__mirror_state_failback",
                                "mirror.state.topic.num.partitions", "1"))
                .start();
    }

    @AfterAll
    static void stopIt() {
        serviceA.stop();
    }

    @Test
    void aDivergentTailOnTheOldPrimaryShouldBePreservedAndReportedAndTheTopicMadeIdentical() throws Exception {
        // Given a-to-b mirrored 100 records, then an unplanned failover: the topic stopped on B, which took 20 more,
        // while A, back, holds 30 records B never received
        String topic = uniqueName("failback");
        String aToB = uniqueName("a-to-b");
        String bToA = uniqueName("b-to-a");
        failover(aToB, topic);
        produce(bed.destination().bootstrapServers(), topic, 20, "b-new");
        produce(bed.source().bootstrapServers(), topic, 30, "a-diverged");

        // When A's service mirrors B back into A, recreating what diverged
        failBack(bToA, topic, "recreate");

        // Then A's 30 records are preserved, with their original offsets, and reported
        await().atMost(Duration.ofSeconds(60))
                .until(() -> describeOnA(bToA, topic).get("divergence") != null);
        JsonPath described = describeOnA(bToA, topic);
        assertThat(described.getString("divergence.preservedTo")).isEqualTo("__diverged." + topic);
        assertThat(described.getLong("divergence.partitions[0].fromOffset")).isEqualTo(100);
        assertThat(described.getLong("divergence.partitions[0].toOffset")).isEqualTo(130);
        assertThat(described.getLong("divergence.partitions[0].records")).isEqualTo(30);
        List<ConsumerRecord<byte[], byte[]>> preserved =
                readAll(bed.source().bootstrapServers(), "__diverged." + topic);
        assertThat(preserved)
                .hasSize(30)
                .allSatisfy(r -> assertThat(new String(r.value(), StandardCharsets.UTF_8))
                        .startsWith("a-diverged-"));
        assertThat(header(preserved.get(0), "cluster-mirror.original.offset")).isEqualTo("100");
        assertThat(header(preserved.get(29), "cluster-mirror.original.offset")).isEqualTo("129");
        assertThat(header(preserved.get(0), "cluster-mirror.original.partition"))
                .isEqualTo("0");
        assertThat(header(preserved.get(0), "origin"))
                .as("the record's own headers are kept")
                .isEqualTo("a-diverged");
        assertThat(onA().get("/q/metrics").then().extract().asString())
                .contains("cluster_mirror_diverged_records_total{mirror=\"" + bToA + "\"} 30.0");
        assertThat(serviceA.log())
                .contains("30 record(s) only the destination held were preserved into __diverged." + topic);
        // and it is still reported after A's service restarts (it is kept in the state topic)
        serviceA.stop();
        serviceA.start();
        assertThat(describeOnA(bToA, topic).getLong("divergence.partitions[0].records"))
                .isEqualTo(30);

        // and A ends identical to B, record for record
        awaitConvergedOnA(bToA, topic);
        assertThat(values(bed.source().bootstrapServers(), topic))
                .isEqualTo(values(bed.destination().bootstrapServers(), topic))
                .hasSize(120);
    }

    @Test
    void anOldPrimaryThatIsAPrefixShouldOnlyFetchWhatTheNewOneTookSince() throws Exception {
        // Given a failover after which B took 20 records and A none
        String topic = uniqueName("prefix");
        String aToB = uniqueName("a-to-b");
        String bToA = uniqueName("b-to-a");
        failover(aToB, topic);
        produce(bed.destination().bootstrapServers(), topic, 20, "b-new");

        // When A's service mirrors B back into A (the default policy: fail, nothing may be recreated)
        failBack(bToA, topic, "fail");

        // Then mirroring continues at A's end: exactly B's 20 new records travel
        awaitConvergedOnA(bToA, topic);
        assertThat(onA().get("/q/metrics").then().extract().asString())
                .contains("cluster_mirror_records_total{mirror=\"" + bToA + "\"} 20.0");
        assertThat(values(bed.source().bootstrapServers(), topic))
                .isEqualTo(values(bed.destination().bootstrapServers(), topic))
                .hasSize(120);
        assertThat(describeOnA(bToA, topic).getString("divergence")).isNull();
    }

    @Test
    void aTransactionalTopicShouldGoThroughFailoverAndFailbackWithEveryMarkerInPlace() throws Exception {
        // Given a transactional topic mirrored to B (a committed and an aborted transaction), an unplanned failover,
        // then transactions on B, and on A too (a committed and an aborted one B never sees)
        String topic = uniqueName("txn-failback");
        String aToB = uniqueName("a-to-b");
        String bToA = uniqueName("b-to-a");
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, topic, 1, Map.of());
        }
        transaction(bed.source().bootstrapServers(), topic, "a-committed", 20, true);
        transaction(bed.source().bootstrapServers(), topic, "a-aborted", 10, false);
        createMirror(aToB);
        startTopics(aToB, topic);
        awaitConverged(aToB, topic);
        topicVerb(aToB, "stop", topic);
        awaitAllPartitions(aToB, topic, "STOPPED");
        transaction(bed.destination().bootstrapServers(), topic, "b-committed", 15, true);
        transaction(bed.destination().bootstrapServers(), topic, "b-aborted", 5, false);
        transaction(bed.source().bootstrapServers(), topic, "a-diverged", 7, true);
        transaction(bed.source().bootstrapServers(), topic, "a-diverged-aborted", 3, false);

        // When A's service mirrors B back into A, recreating what diverged
        failBack(bToA, topic, "recreate");

        // Then the divergence starts after the 32 offsets both had (20 records, a marker, 10, a marker), and only A's
        // committed records are preserved: an aborted transaction was never data
        await().atMost(Duration.ofSeconds(60))
                .until(() -> describeOnA(bToA, topic).get("divergence") != null);
        JsonPath described = describeOnA(bToA, topic);
        assertThat(described.getLong("divergence.partitions[0].fromOffset")).isEqualTo(32);
        assertThat(described.getLong("divergence.partitions[0].toOffset")).isEqualTo(44);
        assertThat(described.getLong("divergence.partitions[0].records")).isEqualTo(7);
        assertThat(readAll(bed.source().bootstrapServers(), "__diverged." + topic))
                .hasSize(7)
                .allSatisfy(r -> assertThat(new String(r.value(), StandardCharsets.UTF_8))
                        .startsWith("a-diverged-"));
        // and A ends identical to B: every record and marker at its offset, the aborted transactions still aborted
        awaitConvergedOnA(bToA, topic);
        assertThat(Kafka.readAll(bed.source().bootstrapServers(), topic, "read_uncommitted"))
                .isEqualTo(Kafka.readAll(bed.destination().bootstrapServers(), topic, "read_uncommitted"))
                .hasSize(50);
        assertThat(Kafka.readAll(bed.source().bootstrapServers(), topic, "read_committed"))
                .isEqualTo(Kafka.readAll(bed.destination().bootstrapServers(), topic, "read_committed"))
                .hasSize(35)
                .noneSatisfy(r -> assertThat(r.value()).contains("aborted"));
        assertThat(layout(Kafka.batches(bed.source(), topic, 0, 0)))
                .isEqualTo(layout(Kafka.batches(bed.destination(), topic, 0, 0)));
    }

    @Test
    void aCleanedCompactedTopicShouldGoThroughFailoverFailbackAndSwitchBack() throws Exception {
        // Given a compacted topic on A that its cleaner has holed (so that B holds fillers), mirrored to B, then an
        // unplanned failover
        String topic = uniqueName("compact-cycle");
        String aToB = uniqueName("a-to-b");
        String bToA = uniqueName("b-to-a");
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, topic, 1, Compaction.CLEAN_AT_ONCE);
        }
        Kafka.produce(bed.source().bootstrapServers(), topic, 200, "lz4", "round");
        Kafka.produce(bed.source().bootstrapServers(), topic, 100, "lz4", "round");
        Compaction.awaitCleaned(bed.source(), topic, batches -> batches.stream().anyMatch(Compaction::hasHoles));
        createMirror(aToB);
        startTopics(aToB, topic);
        awaitConverged(aToB, topic);
        topicVerb(aToB, "stop", topic);
        awaitAllPartitions(aToB, topic, "STOPPED");
        long aEnd = end(bed.source(), topic);
        // and B, the primary now, takes writes and its cleaner removes records of the batch A ends with
        Kafka.produce(bed.destination().bootstrapServers(), topic, 100, "lz4", "round");
        Compaction.awaitCleaned(bed.destination(), topic, Compaction.cleanedAt(aEnd - 1));

        // When A's service mirrors B back into A, under the default policy (nothing may be recreated)
        failBack(bToA, topic, "fail");

        // Then A is found to be a prefix of B (what differs is only what either cleaner removed), and mirroring goes on
        // at A's end: nothing diverged, nothing copied again
        awaitConvergedOnA(bToA, topic);
        assertThat(describeOnA(bToA, topic).getString("divergence")).isNull();
        long bEnd = end(bed.destination(), topic);
        assertThat(end(bed.source(), topic)).isEqualTo(bEnd);
        assertThat(recordsMirrored(bToA)).isPositive().isLessThanOrEqualTo(bEnd - aEnd);
        assertSameLatestValues(topic);

        // When switching back: b-to-a promoted (A writable), A takes writes and cleans the batch B ends with, and
        // a-to-b starts the topic again on B
        onA().body(Map.of("topics", List.of(topic), "fenceSource", false))
                .post("/v1/mirrors/" + bToA + "/topics:promote")
                .then()
                .statusCode(200);
        Kafka.produce(bed.source().bootstrapServers(), topic, 100, "lz4", "round");
        Compaction.awaitCleaned(bed.source(), topic, Compaction.cleanedAt(bEnd - 1));
        startTopics(aToB, topic);

        // Then B is a prefix of A and continues from its end
        awaitConverged(aToB, topic);
        assertThat(describeTopic(aToB, topic).getString("divergence")).isNull();
        assertThat(end(bed.destination(), topic)).isEqualTo(end(bed.source(), topic));
        assertSameLatestValues(topic);
    }

    // ================================================================ helpers

    private static long end(KafkaBrokerProcess broker, String topic) throws Exception {
        return Kafka.offsetsOf(broker, topic).get(new TopicPartition(topic, 0));
    }

    /** What A's service counted as appended for the mirror. */
    private static long recordsMirrored(String bToA) {
        String metrics = onA().get("/q/metrics").then().extract().asString();
        Matcher value = Pattern.compile("cluster_mirror_records_total\\{mirror=\"" + bToA + "\"} ([0-9.E]+)")
                .matcher(metrics);
        assertThat(value.find()).as("records metric of " + bToA).isTrue();
        return (long) Double.parseDouble(value.group(1));
    }

    private static void assertSameLatestValues(String topic) {
        assertThat(Compaction.latestByKey(Kafka.readAll(bed.source().bootstrapServers(), topic)))
                .isEqualTo(
                        Compaction.latestByKey(Kafka.readAll(bed.destination().bootstrapServers(), topic)))
                .isNotEmpty();
    }

    /** On A's service: the reverse mirror b-to-a (with this truncation policy), starting the topic over A's own. */
    private static void failBack(String bToA, String topic, String truncationPolicy) {
        onA().body(createBody(
                        bToA,
                        Map.of(
                                "bootstrap.servers",
                                bed.destination().bootstrapServers(),
                                "mirror.truncation.policy",
                                truncationPolicy)))
                .post("/v1/mirrors")
                .then()
                .statusCode(201);
        onA().body(Map.of("topics", List.of(topic), "adoptExisting", true))
                .post("/v1/mirrors/" + bToA + "/topics:start")
                .then()
                .statusCode(200);
    }

    /** Waits until every partition of the topic is MIRRORING on A's service with lag 0. */
    private static void awaitConvergedOnA(String bToA, String topic) {
        await().atMost(Duration.ofSeconds(60))
                .until(() -> describeOnA(bToA, topic).getList("partitions", Map.class).stream()
                        .allMatch(p -> "MIRRORING".equals(p.get("state"))
                                && Integer.valueOf(0).equals(p.get("lag"))));
    }

    private static void transaction(String bootstrap, String topic, String tag, int count, boolean commit) {
        try (KafkaProducer<byte[], byte[]> producer =
                Kafka.producer(bootstrap, Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, uniqueName(tag)))) {
            producer.initTransactions();
            producer.beginTransaction();
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(
                        topic,
                        0,
                        ("k" + i).getBytes(StandardCharsets.UTF_8),
                        (tag + "-" + i).getBytes(StandardCharsets.UTF_8)));
            }
            if (commit) {
                producer.commitTransaction();
            } else {
                producer.flush();
                producer.abortTransaction();
            }
        }
    }

    private static List<String> layout(List<Kafka.Batch> batches) {
        return batches.stream()
                .map(b -> b.baseOffset() + ".." + b.lastOffset() + " x" + b.count() + (b.transactional() ? " txn" : "")
                        + (b.control() ? " marker" : ""))
                .toList();
    }

    /** a-to-b mirrors 100 records of a new topic on A, then the topic is stopped on B (unplanned failover). */
    private static void failover(String aToB, String topic) throws Exception {
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, topic, 1, Map.of());
        }
        produce(bed.source().bootstrapServers(), topic, 100, "a-before");
        createMirror(aToB);
        startTopics(aToB, topic);
        awaitConverged(aToB, topic);
        topicVerb(aToB, "stop", topic);
        awaitAllPartitions(aToB, topic, "STOPPED");
    }

    private static RequestSpecification onA() {
        return given().baseUri(serviceA.baseUri().toString()).contentType(ContentType.JSON);
    }

    private static JsonPath describeOnA(String mirror, String topic) {
        return onA().get("/v1/mirrors/" + mirror + "/topics/" + topic)
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();
    }

    private static void produce(String bootstrap, String topic, int count, String tag) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = Kafka.producer(bootstrap, Map.of())) {
            for (int i = 0; i < count; i++) {
                ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(
                        topic,
                        0,
                        ("k" + i).getBytes(StandardCharsets.UTF_8),
                        (tag + "-" + i).getBytes(StandardCharsets.UTF_8));
                record.headers().add("origin", tag.getBytes(StandardCharsets.UTF_8));
                producer.send(record).get();
            }
        }
    }

    private static List<ConsumerRecord<byte[], byte[]>> readAll(String bootstrap, String topic) throws Exception {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        List<ConsumerRecord<byte[], byte[]>> all = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            Kafka.readToEnd(consumer, Kafka.partitions(consumer, topic), Duration.ofSeconds(30), all::add);
        }
        all.sort(Comparator.comparingInt((ConsumerRecord<byte[], byte[]> r) -> r.partition())
                .thenComparingLong(ConsumerRecord::offset));
        return all;
    }

    /** The topic's records as "offset=value", in order. */
    private static List<String> values(String bootstrap, String topic) throws Exception {
        return readAll(bootstrap, topic).stream()
                .map(r -> r.offset() + "=" + new String(r.value(), StandardCharsets.UTF_8))
                .toList();
    }

    private static String header(ConsumerRecord<byte[], byte[]> record, String key) {
        var header = record.headers().lastHeader(key);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }
}
