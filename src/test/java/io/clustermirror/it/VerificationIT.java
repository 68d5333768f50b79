package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;

/**
 * Issue 21 item 1, consistency verification on demand: nothing found on an identical mirror, the first wrong offset
 * found after a record is written straight into a destination partition, compacted topics cleaned on both sides and
 * transactional topics with aborts verified IDENTICAL, {@code "from": "last"}, bad input and unknown names.
 */
class VerificationIT extends ServiceIT {

    /** Starts a verification, expecting 202 with RUNNING and its Location; returns its id. */
    private static String startVerification(String mirror, Map<String, Object> body) {
        Response response = api().body(body).post("/v1/mirrors/" + mirror + "/verifications");
        response.then().statusCode(202).body("state", equalTo("RUNNING"));
        String id = response.jsonPath().getString("id");
        assertThat(response.header("Location")).endsWith("/v1/mirrors/" + mirror + "/verifications/" + id);
        return id;
    }

    /** Waits until the verification ended; its description. */
    private static JsonPath awaitEnded(String mirror, String id) {
        return await("verification " + id + " ended")
                .atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(300))
                .until(
                        () -> api().get("/v1/mirrors/" + mirror + "/verifications/" + id)
                                .then()
                                .statusCode(200)
                                .extract()
                                .jsonPath(),
                        json -> !"RUNNING".equals(json.getString("state")));
    }

    private static JsonPath verify(String mirror, Map<String, Object> body) {
        return awaitEnded(mirror, startVerification(mirror, body));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> partition(JsonPath verification, int partition) {
        return verification.getList("partitions", Map.class).stream()
                .filter(p -> ((Number) p.get("partition")).intValue() == partition)
                .findFirst()
                .orElseThrow();
    }

    @Test
    void anIdenticalMirrorShouldVerifyIdenticalAndARecordWrittenStraightIntoTheDestinationShouldBeFound()
            throws Exception {
        // Given a mirrored topic of 2 partitions, converged
        String mirror = uniqueName("verify");
        String topic = uniqueName("verify");
        mirrorConverged(mirror, topic, 2, 2_000, "lz4", "v");
        Map<TopicPartition, Long> ends = Kafka.offsetsOf(bed.source(), topic);

        // When it is verified
        JsonPath first = verify(mirror, Map.of("topics", List.of(topic)));

        // Then nothing differs: every partition compared from 0 to its end, records and bytes counted
        System.out.println("VerificationIT: " + first.prettify());
        assertThat(first.getString("state")).isEqualTo("DONE");
        assertThat(first.getString("verdict")).isEqualTo("IDENTICAL");
        assertThat(first.getLong("progress.bytesCompared")).isPositive();
        assertThat(first.getLong("progress.bytesTotal")).isEqualTo(first.getLong("progress.bytesCompared"));
        for (int p = 0; p < 2; p++) {
            Map<String, Object> part = partition(first, p);
            long end = ends.get(new TopicPartition(topic, p));
            assertThat(part).containsEntry("result", "IDENTICAL").containsEntry("from", 0);
            assertThat(((Number) part.get("to")).longValue()).isEqualTo(end);
            assertThat(((Number) part.get("records")).longValue()).isEqualTo(end);
            assertThat(part).doesNotContainKey("firstDifference");
        }
        // and how far each partition was verified is kept in __mirror_state, for from=last after a restart too
        await("verified records in " + STATE_TOPIC)
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(500))
                .untilAsserted(() -> assertThat(verifiedRecords(mirror))
                        .isEqualTo(Map.of(
                                topic + "-0", ends.get(new TopicPartition(topic, 0)),
                                topic + "-1", ends.get(new TopicPartition(topic, 1)))));
        // and it is listed, newest first, and counted
        api().get("/v1/mirrors/" + mirror + "/verifications")
                .then()
                .statusCode(200)
                .body("verifications[0].id", equalTo(first.getString("id")));
        assertThat(api().get("/q/metrics").then().extract().asString())
                .contains("cluster_mirror_verifications_total{mirror=\"" + mirror + "\",verdict=\"IDENTICAL\"} 1.0")
                .contains("cluster_mirror_partition_verified_offset{mirror=\"" + mirror + "\",partition=\"0\",topic=\""
                        + topic + "\"} " + ends.get(new TopicPartition(topic, 0)) + ".0");

        // When more is mirrored, a verification from the last one's end compares only the new tail
        Kafka.produce(bed.source().bootstrapServers(), topic, 300, "zstd", "tail");
        awaitConverged(mirror, topic);
        JsonPath tail = verify(mirror, Map.of("topics", List.of(topic), "from", "last"));
        assertThat(tail.getString("verdict")).isEqualTo("IDENTICAL");
        Map<TopicPartition, Long> newEnds = Kafka.offsetsOf(bed.source(), topic);
        for (int p = 0; p < 2; p++) {
            Map<String, Object> part = partition(tail, p);
            TopicPartition tp = new TopicPartition(topic, p);
            assertThat(((Number) part.get("from")).longValue())
                    .as(part.toString())
                    .isEqualTo(ends.get(tp));
            assertThat(((Number) part.get("to")).longValue())
                    .as(part.toString())
                    .isEqualTo(newEnds.get(tp));
            assertThat(((Number) part.get("records")).longValue())
                    .as(part.toString())
                    .isEqualTo(newEnds.get(tp) - ends.get(tp));
        }

        // When the topic is stopped (its destination becomes writable), a record is written straight into destination
        // partition 0, and the source takes more records at the same offsets
        topicVerb(mirror, "stop", topic);
        awaitAllPartitions(mirror, topic, "STOPPED");
        TopicPartition p0 = new TopicPartition(topic, 0);
        long written;
        try (KafkaProducer<byte[], byte[]> producer =
                Kafka.producer(bed.destination().bootstrapServers(), Map.of())) {
            written = producer.send(new ProducerRecord<>(topic, 0, "k".getBytes(), "written straight".getBytes()))
                    .get()
                    .offset();
        }
        assertThat(written).isEqualTo(newEnds.get(p0));
        try (KafkaProducer<byte[], byte[]> producer =
                Kafka.producer(bed.source().bootstrapServers(), Map.of())) {
            for (int i = 0; i < 5; i++) {
                producer.send(new ProducerRecord<>(topic, 0, "k".getBytes(), ("source " + i).getBytes()));
            }
            producer.flush();
        }

        // Then a verification of the STOPPED topic finds partition 0 different at exactly that offset, partition 1 not
        JsonPath different = verify(mirror, Map.of("include", List.of(topic.replace("-", "\\-"))));
        System.out.println("VerificationIT: " + different.prettify());
        assertThat(different.getString("state")).isEqualTo("DONE");
        assertThat(different.getString("verdict")).isEqualTo("DIFFERENT");
        Map<String, Object> diverged = partition(different, 0);
        assertThat(diverged).containsEntry("result", "DIFFERENT");
        assertThat(((Number) ((Map<?, ?>) diverged.get("firstDifference")).get("offset")).longValue())
                .isEqualTo(written);
        assertThat(partition(different, 1)).containsEntry("result", "IDENTICAL");
        assertThat(api().get("/q/metrics").then().extract().asString())
                .contains("cluster_mirror_verification_differences_total{mirror=\"" + mirror + "\"} 1.0");
    }

    /** The {@code verified} records of the mirror in the state topic, the newest per partition: topic-partition -> offset. */
    private static Map<String, Long> verifiedRecords(String mirror) throws Exception {
        Map<TopicPartition, Long> fromStart = new HashMap<>();
        stateMark().keySet().forEach(tp -> fromStart.put(tp, 0L));
        Properties props = new Properties();
        props.put("bootstrap.servers", bed.destination().bootstrapServers());
        props.put("enable.auto.commit", false);
        props.put("isolation.level", "read_committed");
        Map<String, Long> verified = new HashMap<>();
        ObjectMapper json = new ObjectMapper();
        try (var consumer =
                new KafkaConsumer<byte[], byte[]>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            Kafka.readToEnd(consumer, fromStart, Duration.ofSeconds(30), record -> {
                var key = json.readTree(record.key());
                if ("verified".equals(key.path("kind").asText())
                        && mirror.equals(key.path("mirror").asText())) {
                    String name = key.path("topic").asText() + "-"
                            + key.path("partition").asInt();
                    if (record.value() == null) {
                        verified.remove(name);
                    } else {
                        verified.put(
                                name,
                                json.readTree(record.value()).path("offset").asLong());
                    }
                }
            });
        }
        return verified;
    }

    @Test
    void aCompactedTopicCleanedOnBothSidesShouldVerifyIdentical() throws Exception {
        // Given a compacted topic mirrored while both clusters' cleaners remove overwritten keys
        String mirror = uniqueName("verify-compacted");
        String topic = uniqueName("verify-compacted");
        createMirrorAndSourceTopic(mirror, topic, 1, Compaction.CLEAN_AT_ONCE);
        startTopics(mirror, topic);
        awaitAllPartitions(mirror, topic, "MIRRORING");
        for (int round = 0; round < 4; round++) {
            Kafka.produce(bed.source().bootstrapServers(), topic, 100, "lz4", "round");
        }
        await(topic + " cleaned on both clusters")
                .atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> {
                    Kafka.produce(bed.source().bootstrapServers(), topic, 1, "none", "roll"); // rolls both logs
                    return cleaned(Kafka.batches(bed.source(), topic, 0, 0))
                            && cleaned(Kafka.batches(bed.destination(), topic, 0, 0));
                });
        awaitConverged(mirror, topic);
        // and, paused, the source's cleaner removes records the destination still holds (its active segment, which
        // takes no append while paused, is not cleaned): the two logs are cleaned differently
        topicVerb(mirror, "pause", topic);
        awaitAllPartitions(mirror, topic, "PAUSED");
        long mirroredEnd = Kafka.offsetsOf(bed.destination(), topic).get(new TopicPartition(topic, 0));
        Kafka.produce(bed.source().bootstrapServers(), topic, 100, "lz4", "round");
        Compaction.awaitCleaned(bed.source(), topic, Compaction.cleanedAt(mirroredEnd - 1));

        // When it is verified, Then it is IDENTICAL: what either cleaner removed is no difference
        JsonPath verification = verify(mirror, Map.of("topics", List.of(topic)));
        System.out.println("VerificationIT compacted: " + verification.prettify());
        assertThat(verification.getString("verdict")).isEqualTo("IDENTICAL");
        assertThat(partition(verification, 0))
                .containsEntry("result", "IDENTICAL")
                .containsEntry("to", (int) mirroredEnd);

        // and so once resumed and caught up
        topicVerb(mirror, "resume", topic);
        awaitConverged(mirror, topic);
        assertThat(verify(mirror, Map.of("topics", List.of(topic))).getString("verdict"))
                .isEqualTo("IDENTICAL");
    }

    /** Records the cleaner removed: a batch with holes, or offsets between batches. */
    private static boolean cleaned(List<Kafka.Batch> batches) {
        for (int i = 0; i < batches.size(); i++) {
            if (Compaction.hasHoles(batches.get(i))
                    || (i > 0
                            && batches.get(i).baseOffset() > batches.get(i - 1).lastOffset() + 1)) {
                return true;
            }
        }
        return !batches.isEmpty() && batches.get(0).baseOffset() > 0;
    }

    @Test
    void aTransactionalTopicWithAbortsShouldVerifyIdentical() throws Exception {
        // Given a topic written in transactions, every third one aborted, mirrored
        String mirror = uniqueName("verify-txn");
        String topic = uniqueName("verify-txn");
        createMirrorAndSourceTopic(mirror, topic, 1, Map.of());
        try (KafkaProducer<byte[], byte[]> producer = Kafka.producer(
                bed.source().bootstrapServers(), Map.of("transactional.id", uniqueName("verify-producer")))) {
            producer.initTransactions();
            for (int round = 0; round < 9; round++) {
                producer.beginTransaction();
                for (int i = 0; i < 20; i++) {
                    producer.send(new ProducerRecord<>(
                            topic, 0, ("key-" + i).getBytes(), ("round-" + round + "-" + i).getBytes()));
                }
                producer.flush();
                if (round % 3 == 1) {
                    producer.abortTransaction();
                } else {
                    producer.commitTransaction();
                }
            }
        }
        startTopics(mirror, topic);
        awaitConverged(mirror, topic);

        // When it is verified, Then data, aborted data and both kinds of markers are IDENTICAL
        JsonPath verification = verify(mirror, Map.of("topics", List.of(topic)));
        System.out.println("VerificationIT transactional: " + verification.prettify());
        assertThat(verification.getString("verdict")).isEqualTo("IDENTICAL");
        Map<String, Object> part = partition(verification, 0);
        assertThat(part).containsEntry("result", "IDENTICAL");
        // 9 transactions of 20 records, each with its marker (a batch of its own)
        assertThat(((Number) part.get("records")).longValue()).isEqualTo(9 * 21);
        assertThat(((Number) part.get("batches")).longValue()).isGreaterThanOrEqualTo(18);
    }

    @Test
    @SuppressWarnings("unchecked")
    void aTopicGoneFromTheDestinationShouldBeIncompleteWhileTheOthersAreVerified() throws Exception {
        // Given a mirror of two topics, one of them stopped and then deleted on the destination
        String mirror = uniqueName("verify-gone");
        String kept = uniqueName("verify-kept");
        String gone = uniqueName("verify-gone");
        mirrorConverged(mirror, kept, 1, 100, "none", "k");
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, gone, 1, Map.of());
        }
        Kafka.produce(bed.source().bootstrapServers(), gone, 100, "none", "g");
        startTopics(mirror, gone);
        awaitConverged(mirror, gone);
        topicVerb(mirror, "stop", gone);
        awaitAllPartitions(mirror, gone, "STOPPED");
        try (Admin admin = bed.destinationAdmin()) {
            admin.deleteTopics(List.of(gone)).all().get(30, TimeUnit.SECONDS);
        }

        // When both are verified
        JsonPath verification = verify(mirror, Map.of("topics", List.of(kept, gone)));

        // Then the one still there is compared to its end, and the one gone cannot be: INCOMPLETE, so the run FAILED
        List<Map<String, Object>> partitions = verification.getList("partitions");
        assertThat(partitions)
                .filteredOn(p -> kept.equals(p.get("topic")))
                .singleElement()
                .satisfies(p -> assertThat(p).containsEntry("result", "IDENTICAL"));
        assertThat(partitions)
                .filteredOn(p -> gone.equals(p.get("topic")))
                .singleElement()
                .satisfies(p -> assertThat(p).containsEntry("result", "INCOMPLETE"));
        assertThat(verification.getString("state")).isEqualTo("FAILED");
        assertThat(verification.getString("verdict")).isNull();
    }

    @Test
    void badInputShouldBe400AndUnknownNames404() {
        String mirror = uniqueName("verify-bad");
        createMirror(mirror);
        String path = "/v1/mirrors/" + mirror + "/verifications";
        api().body(Map.of())
                .post(path)
                .then()
                .statusCode(400)
                .contentType("application/problem+json")
                .body("errorCode", equalTo("INVALID_REQUEST"));
        api().body(Map.of("include", List.of("(")))
                .post(path)
                .then()
                .statusCode(400)
                .body("errorCode", equalTo("INVALID_REQUEST"));
        api().body(Map.of("include", List.of(".*"), "from", "yesterday"))
                .post(path)
                .then()
                .statusCode(400)
                .body("errorCode", equalTo("INVALID_REQUEST"));
        api().body(Map.of("topics", List.of("nope")))
                .post(path)
                .then()
                .statusCode(404)
                .body("errorCode", equalTo("TOPIC_NOT_IN_CLUSTER_MIRROR"));
        api().body(Map.of("include", List.of(".*")))
                .post(path)
                .then()
                .statusCode(400)
                .body("detail", startsWith("No topic of the mirror matches"));
        api().get(path + "/no-such-id")
                .then()
                .statusCode(404)
                .contentType("application/problem+json")
                .body("errorCode", equalTo("NOT_FOUND"));
        api().get(path).then().statusCode(200).body("verifications.size()", equalTo(0));
        api().options(path).then().statusCode(204).header("Allow", "GET, HEAD, OPTIONS, POST");
        api().options(path + "/some-id").then().statusCode(204).header("Allow", "GET, HEAD, OPTIONS");
        api().delete(path + "/some-id").then().statusCode(405).contentType("application/problem+json");

        String unknown = "/v1/mirrors/" + uniqueName("absent") + "/verifications";
        api().body(Map.of("include", List.of(".*")))
                .post(unknown)
                .then()
                .statusCode(404)
                .body("errorCode", equalTo("UNKNOWN_CLUSTER_MIRROR"));
        api().get(unknown).then().statusCode(404).body("errorCode", equalTo("UNKNOWN_CLUSTER_MIRROR"));
        api().get(unknown + "/x").then().statusCode(404).body("errorCode", equalTo("UNKNOWN_CLUSTER_MIRROR"));
    }
}
