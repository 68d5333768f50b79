package io.clustermirror.it;

import static io.restassured.RestAssured.given;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.clustermirror.testbed.ServiceProcess;
import io.clustermirror.testbed.TestBed;
import io.restassured.http.ContentType;
import io.restassured.response.ValidatableResponse;
import io.restassured.specification.RequestSpecification;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.BeforeAll;

/** Base of the integration tests: the shared test bed, and helpers to talk to the service. */
abstract class ServiceIT {

    static final String STATE_TOPIC = "__mirror_state";
    static TestBed bed;

    @BeforeAll
    static void startTestBed() {
        bed = TestBed.get();
    }

    /** The service process the helpers talk to: the shared one, unless a test class points them at its own. */
    static ServiceProcess target;

    static RequestSpecification api() {
        return given().baseUri(
                        (target != null ? target : bed.service()).baseUri().toString())
                .contentType(ContentType.JSON);
    }

    /**
     * A fresh mirror name whose state partition the answering instance owns, from its {@code GET /v1/instances} answer
     * and the state topic's partition count.
     */
    static String nameOwnedBy(io.restassured.path.json.JsonPath instances, int statePartitions, String prefix) {
        String self = instances.getString("answeredBy");
        Set<Integer> owned = Set.copyOf(
                instances.getList("instances.find { it.id == '" + self + "' }.statePartitions", Integer.class));
        org.assertj.core.api.Assertions.assertThat(owned).isNotEmpty();
        while (true) {
            String name = uniqueName(prefix);
            int partition = Utils.toPositive(Utils.murmur2(name.getBytes(StandardCharsets.UTF_8))) % statePartitions;
            if (owned.contains(partition)) {
                return name;
            }
        }
    }

    static String uniqueName(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    static Map<String, Object> createBody(String name, Map<String, String> config) {
        Map<String, Object> body = new HashMap<>();
        body.put("name", name);
        body.put("config", config);
        return body;
    }

    static Map<String, String> sourceConfig() {
        return Map.of("bootstrap.servers", bed.source().bootstrapServers());
    }

    static ValidatableResponse createMirror(String name) {
        return api().body(createBody(name, sourceConfig()))
                .post("/v1/mirrors")
                .then()
                .statusCode(201);
    }

    /** A new mirror of the test bed's source with these further settings, as key, value, key, value... */
    static ValidatableResponse createMirror(String name, String... settings) {
        Map<String, String> config = new HashMap<>(sourceConfig());
        for (int i = 0; i < settings.length; i += 2) {
            config.put(settings[i], settings[i + 1]);
        }
        return api().body(createBody(name, config)).post("/v1/mirrors").then().statusCode(201);
    }

    static String sourceClusterId() throws Exception {
        try (Admin admin = bed.sourceAdmin()) {
            return admin.describeCluster().clusterId().get();
        }
    }

    /** The state topic's end offsets now: a mark to read what is written after it. */
    static Map<TopicPartition, Long> stateMark() throws Exception {
        try (Admin admin = bed.destinationAdmin()) {
            TopicDescription description = admin.describeTopics(List.of(STATE_TOPIC))
                    .allTopicNames()
                    .get()
                    .get(STATE_TOPIC);
            Map<TopicPartition, OffsetSpec> request = new HashMap<>();
            IntStream.range(0, description.partitions().size())
                    .forEach(p -> request.put(new TopicPartition(STATE_TOPIC, p), OffsetSpec.latest()));
            Map<TopicPartition, Long> mark = new HashMap<>();
            admin.listOffsets(request).all().get().forEach((tp, info) -> mark.put(tp, info.offset()));
            return mark;
        }
    }

    /**
     * How many records about {@code mirror} were written to the state topic since the mark, aborted ones
     * included (read_uncommitted): zero means the request persisted nothing, and attempted nothing either.
     */
    static long stateWritesFor(Map<TopicPartition, Long> mark, String mirror) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", bed.destination().bootstrapServers());
        props.put("isolation.level", "read_uncommitted");
        props.put("enable.auto.commit", false);
        AtomicLong count = new AtomicLong();
        ObjectMapper json = new ObjectMapper();
        try (var consumer =
                new KafkaConsumer<byte[], byte[]>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            // a count of a partial read would be wrong: the read fails the test when it cannot reach the end
            Kafka.readToEnd(consumer, mark, Duration.ofSeconds(30), record -> {
                if (mirror.equals(json.readTree(record.key()).path("mirror").asText(null))) {
                    count.incrementAndGet();
                }
            });
        }
        return count.get();
    }

    static void startTopics(String mirror, String... topics) {
        api().body(Map.of("topics", List.of(topics)))
                .post("/v1/mirrors/" + mirror + "/topics:start")
                .then()
                .statusCode(200);
    }

    /** Starts topics whose destination topics exist already, not created by the mirror (a test's diverged copy). */
    static void startTopicsAdopting(String mirror, String... topics) {
        api().body(Map.of("topics", List.of(topics), "adoptExisting", true))
                .post("/v1/mirrors/" + mirror + "/topics:start")
                .then()
                .statusCode(200)
                .body("topics.result", org.hamcrest.Matchers.everyItem(org.hamcrest.Matchers.equalTo("STARTED")));
    }

    /** {@code POST /v1/mirrors/{mirror}/topics:{verb}} for one topic, expecting 200. */
    static void topicVerb(String mirror, String verb, String topic) {
        api().body(Map.of("topics", List.of(topic)))
                .post("/v1/mirrors/" + mirror + "/topics:" + verb)
                .then()
                .statusCode(200);
    }

    /** Waits until every partition of the topic is in {@code state}. */
    static void awaitAllPartitions(String mirror, String topic, String state) {
        org.awaitility.Awaitility.await(topic + " all " + state)
                .atMost(Duration.ofSeconds(30))
                .until(() -> describeTopic(mirror, topic).getList("partitions.state").stream()
                        .allMatch(state::equals));
    }

    static io.restassured.path.json.JsonPath describeTopic(String mirror, String topic) {
        return api().get("/v1/mirrors/" + mirror + "/topics/" + topic)
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();
    }

    /** A new mirror of the test bed's source, and a new source topic (not started yet). */
    static void createMirrorAndSourceTopic(String mirror, String topic, int partitions, Map<String, String> configs)
            throws Exception {
        createMirror(mirror);
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, topic, partitions, configs);
        }
    }

    /** A new source topic with {@code records} records (keys, headers, {@code codec}), mirrored by a new mirror until converged. */
    static void mirrorConverged(String mirror, String topic, int partitions, int records, String codec, String tag)
            throws Exception {
        createMirrorAndSourceTopic(mirror, topic, partitions, Map.of());
        Kafka.produce(bed.source().bootstrapServers(), topic, records, codec, tag);
        startTopics(mirror, topic);
        awaitConverged(mirror, topic);
    }

    /** Waits until every partition of the topic is MIRRORING with the destination at the source's end. */
    static void awaitConverged(String mirror, String topic) {
        org.awaitility.Awaitility.await("mirror " + mirror + " topic " + topic + " converged")
                .atMost(Duration.ofSeconds(120))
                .pollInterval(Duration.ofMillis(500))
                .untilAsserted(() -> assertConverged(mirror, topic));
    }

    /** {@link #awaitConverged} of several mirrors, each of its one topic (mirror name to topic), in one wait. */
    static void awaitConverged(Map<String, String> topicOfMirror) {
        org.awaitility.Awaitility.await(topicOfMirror.size() + " mirrors converged")
                .atMost(Duration.ofSeconds(120))
                .pollInterval(Duration.ofMillis(500))
                .untilAsserted(() -> topicOfMirror.forEach(ServiceIT::assertConverged));
    }

    private static void assertConverged(String mirror, String topic) {
        var partitions = describeTopic(mirror, topic).getList("partitions", Map.class);
        org.assertj.core.api.Assertions.assertThat(partitions)
                .as("mirror %s topic %s", mirror, topic)
                .isNotEmpty()
                .allSatisfy(p -> {
                    org.assertj.core.api.Assertions.assertThat(p.get("state"))
                            .as(p.toString())
                            .isEqualTo("MIRRORING");
                    org.assertj.core.api.Assertions.assertThat(p.get("lag"))
                            .as(p.toString())
                            .isEqualTo(0);
                });
    }

    /** Waits until some partition of the topic is in {@code state}; returns that partition's description. */
    static Map<?, ?> awaitPartitionState(String mirror, String topic, String state) {
        return org.awaitility.Awaitility.await(topic + " " + state)
                .atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(300))
                .until(
                        () -> describeTopic(mirror, topic).getList("partitions", Map.class).stream()
                                .filter(p -> state.equals(p.get("state")))
                                .findFirst()
                                .orElse(null),
                        Objects::nonNull);
    }

    /**
     * A mirror's description as stored: without {@code metadataSync} and {@code progress}, the live status of the sync
     * cycles and of the data plane that run meanwhile.
     */
    static Map<String, Object> stored(String describeJson) {
        Map<String, Object> mirror = new HashMap<>(
                io.restassured.path.json.JsonPath.from(describeJson).getMap(""));
        mirror.remove("metadataSync");
        mirror.remove("progress");
        return mirror;
    }

    static List<String> mirrorNames() {
        return api().get("/v1/mirrors")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath()
                .getList("mirrors.name", String.class);
    }
}
