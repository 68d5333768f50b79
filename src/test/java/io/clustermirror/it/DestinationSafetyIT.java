package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import io.clustermirror.testbed.ServiceProcess;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;
import org.junit.jupiter.api.Test;

/**
 * What a start must never do to the destination: mirror into the service's own state topic or Kafka's internal
 * topics, take over a topic it did not create, or prepare one topic twice at once.
 */
class DestinationSafetyIT extends ServiceIT {

    @Test
    void theStateTopicAndKafkaInternalTopicsShouldNeverBeMirrored() throws Exception {
        // Given a source holding a topic named like the service's state topic, set up to be wiped within seconds
        try (Admin admin = bed.sourceAdmin()) {
            try {
                Kafka.createTopic(
                        admin,
                        STATE_TOPIC,
                        3,
                        Map.of("cleanup.policy", "delete", "retention.ms", "1000", "segment.ms", "1000"));
            } catch (ExecutionException e) {
                assertThat(e).hasCauseInstanceOf(TopicExistsException.class);
            }
        }
        Map<String, String> stateConfigsBefore = dynamicConfigs(STATE_TOPIC);
        String mirror = uniqueName("attacker");
        createMirror(mirror);

        // When it is named, with Kafka's internal topics, and even with the exclude override
        JsonPath named = api().body(Map.of(
                        "topics",
                        List.of(
                                STATE_TOPIC,
                                "__consumer_offsets",
                                "__transaction_state",
                                "__share_group_state",
                                "__cluster_metadata"),
                        "overrideExclude",
                        true))
                .post("/v1/mirrors/" + mirror + "/topics:start")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();
        // and when a pattern matches it, with the mirror's exclude list emptied
        api().body(Map.of("set", Map.of("mirror.topics.exclude", "nothing-is-excluded")))
                .patch("/v1/mirrors/" + mirror + "/config")
                .then()
                .statusCode(200);
        JsonPath matched = api().body(Map.of("include", List.of("__mirror_stat[e]")))
                .post("/v1/mirrors/" + mirror + "/topics:start")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();

        // Then each is refused for itself with INVALID_TOPIC_EXCEPTION, and nothing of the state topic changed
        assertThat(named.getList("topics.errorCode")).hasSize(5).containsOnly("INVALID_TOPIC_EXCEPTION");
        assertThat(named.getString("topics.find { it.topic == '__mirror_state' }.error"))
                .contains("state topic");
        assertThat(matched.getList("topics.topic")).containsExactly(STATE_TOPIC);
        assertThat(matched.getList("topics.errorCode")).containsExactly("INVALID_TOPIC_EXCEPTION");
        api().get("/v1/mirrors/" + mirror + "/topics/" + STATE_TOPIC)
                .then()
                .statusCode(404)
                .body("errorCode", equalTo("TOPIC_NOT_IN_CLUSTER_MIRROR"));
        assertThat(dynamicConfigs(STATE_TOPIC))
                .isEqualTo(stateConfigsBefore)
                .containsEntry("cleanup.policy", "compact");
        api().delete("/v1/mirrors/" + mirror).then().statusCode(204);
    }

    @Test
    void anotherInstancesStateTopicShouldNeverBeMirroredWhateverTheOverrides() throws Exception {
        // Given a topic named like another instance's state topic on the source and on the destination
        String other = "__mirror_state_" + uniqueName("b");
        String mirror = uniqueName("other-state");
        createMirrorAndSourceTopic(mirror, other, 2, Map.of());
        try (Admin admin = bed.destinationAdmin()) {
            Kafka.createTopic(admin, other, 2, Map.of("cleanup.policy", "compact"));
        }

        // When a start names it with every override, then it is refused as a state topic, and the mirror holds nothing
        assertStartRefusedAsStateTopic(mirror, other);
        api().delete("/v1/mirrors/" + mirror).then().statusCode(204);
    }

    @Test
    void anotherInstancesStateTopicShouldBeRecognisedByItsRecordsWhateverItsName() throws Exception {
        // Given another instance on the same destination whose state topic has a name of its own, holding one mirror
        String stateTopic = uniqueName("cm-state");
        ServiceProcess other = bed.newService(
                        "other-instance",
                        Map.of("mirror.state.topic.name", stateTopic, "mirror.state.topic.num.partitions", "3"))
                .start();
        try {
            RestAssured.given()
                    .baseUri(other.baseUri().toString())
                    .contentType(ContentType.JSON)
                    .body(createBody(uniqueName("theirs"), sourceConfig()))
                    .post("/v1/mirrors")
                    .then()
                    .statusCode(201);
        } finally {
            other.stop();
        }
        // and a source topic of that name, so that only the destination's records can tell
        String mirror = uniqueName("their-state");
        createMirrorAndSourceTopic(mirror, stateTopic, 3, Map.of());
        Map<String, String> configsBefore = dynamicConfigs(stateTopic);

        // When this instance is asked to start it with every override, then it is refused as a state topic, naming it,
        // and neither the mirror nor the topic changed
        assertStartRefusedAsStateTopic(mirror, stateTopic);
        assertThat(dynamicConfigs(stateTopic)).isEqualTo(configsBefore);
        api().delete("/v1/mirrors/" + mirror).then().statusCode(204);
    }

    @Test
    void aNamedTopicThatTheExcludeListMatchesShouldNeedTheOverride() throws Exception {
        String mirror = uniqueName("excluded");
        String topic = "__" + uniqueName("app");
        createMirrorAndSourceTopic(mirror, topic, 1, Map.of());

        api().body(Map.of("topics", List.of(topic)))
                .post("/v1/mirrors/" + mirror + "/topics:start")
                .then()
                .statusCode(200)
                .body("topics[0].errorCode", equalTo("INVALID_REQUEST"))
                .body("topics[0].error", containsString("mirror.topics.exclude"));
        api().get("/v1/mirrors/" + mirror + "/topics/" + topic).then().statusCode(404);

        api().body(Map.of("topics", List.of(topic), "overrideExclude", true))
                .post("/v1/mirrors/" + mirror + "/topics:start")
                .then()
                .statusCode(200)
                .body("topics[0].result", equalTo("STARTED"));
        awaitConverged(mirror, topic);
    }

    @Test
    void anExistingDestinationTopicShouldBeLeftUntouchedUnlessAdopted() throws Exception {
        // Given a destination topic of the same name that holds someone else's records, and a mirror that recreates on
        // divergence
        String mirror = uniqueName("foreign");
        String topic = uniqueName("foreign");
        createMirror(mirror, "mirror.truncation.policy", "recreate");
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, topic, 1, Map.of());
        }
        Kafka.produce(bed.source().bootstrapServers(), topic, 10, "none", "source");
        try (Admin admin = bed.destinationAdmin()) {
            Kafka.createTopic(admin, topic, 1, Map.of());
        }
        Kafka.produce(bed.destination().bootstrapServers(), topic, 5, "none", "theirs");
        Map<String, String> configsBefore = dynamicConfigs(topic);

        // When it is started: refused for that topic, naming the conflict and the way to adopt it
        api().body(Map.of("topics", List.of(topic)))
                .post("/v1/mirrors/" + mirror + "/topics:start")
                .then()
                .statusCode(200)
                .body("topics[0].errorCode", equalTo("TOPIC_ALREADY_EXISTS"))
                .body("topics[0].error", containsString("adoptExisting"));

        // Then the topic is untouched: its records, its configs, not in the mirror
        api().get("/v1/mirrors/" + mirror + "/topics/" + topic).then().statusCode(404);
        assertThat(Kafka.readAll(bed.destination().bootstrapServers(), topic))
                .hasSize(5)
                .allSatisfy(r -> assertThat(r.value()).contains("theirs"));
        assertThat(dynamicConfigs(topic)).isEqualTo(configsBefore);

        // When it is adopted explicitly, the truncation policy may recreate it: it becomes the source's copy
        api().body(Map.of("topics", List.of(topic), "adoptExisting", true))
                .post("/v1/mirrors/" + mirror + "/topics:start")
                .then()
                .statusCode(200)
                .body("topics[0].result", equalTo("STARTED"));
        awaitConverged(mirror, topic);
        assertThat(Kafka.readAll(bed.destination().bootstrapServers(), topic))
                .hasSize(10)
                .allSatisfy(r -> assertThat(r.value()).contains("source"));

        // A topic this mirror tracks needs no flag to start again after a stop
        topicVerb(mirror, "stop", topic);
        awaitAllPartitions(mirror, topic, "STOPPED");
        api().body(Map.of("topics", List.of(topic)))
                .post("/v1/mirrors/" + mirror + "/topics:start")
                .then()
                .statusCode(200)
                .body("topics[0].result", equalTo("STARTED"));
        awaitConverged(mirror, topic);
    }

    @Test
    void overlappingStartsOfOneTopicShouldHaveOneWinner() throws Exception {
        String mirror = uniqueName("overlap");
        String topic = uniqueName("overlap");
        mirrorConverged(mirror, topic, 3, 100, "none", "o");
        topicVerb(mirror, "stop", topic);
        awaitAllPartitions(mirror, topic, "STOPPED");

        // When four starts of the stopped topic arrive together
        List<CompletableFuture<JsonPath>> starts = new ArrayList<>();
        IntStream.range(0, 4)
                .forEach(i ->
                        starts.add(CompletableFuture.supplyAsync(() -> api().body(Map.of("topics", List.of(topic)))
                                .post("/v1/mirrors/" + mirror + "/topics:start")
                                .then()
                                .statusCode(200)
                                .extract()
                                .jsonPath())));
        List<String> results = starts.stream()
                .map(CompletableFuture::join)
                .map(outcome -> outcome.getString("topics[0].result") + outcome.getString("topics[0].errorCode"))
                .toList();

        // Then exactly one starts it; the others are told it is taken
        assertThat(results)
                .as(results.toString())
                .containsOnlyOnce("STARTEDnull")
                .filteredOn(r -> !r.equals("STARTEDnull"))
                .containsOnly("nullTOPIC_ALREADY_IN_CLUSTER_MIRROR");
        awaitConverged(mirror, topic);
    }

    private static Map<String, String> dynamicConfigs(String topic) throws Exception {
        try (Admin admin = bed.destinationAdmin()) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            Config config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
            Map<String, String> dynamic = new TreeMap<>();
            for (ConfigEntry entry : config.entries()) {
                if (entry.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG) {
                    dynamic.put(entry.name(), entry.value());
                }
            }
            return dynamic;
        }
    }

    /** A start of {@code topic} with every override is refused as a state topic, and the mirror holds nothing of it. */
    private static void assertStartRefusedAsStateTopic(String mirror, String topic) {
        JsonPath started = api().body(Map.of("topics", List.of(topic), "overrideExclude", true, "adoptExisting", true))
                .post("/v1/mirrors/" + mirror + "/topics:start")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();
        assertThat(started.getList("topics.errorCode")).containsExactly("INVALID_TOPIC_EXCEPTION");
        assertThat(started.getString("topics[0].error")).contains(topic).contains("state topic");
        api().get("/v1/mirrors/" + mirror + "/topics/" + topic)
                .then()
                .statusCode(404)
                .body("errorCode", equalTo("TOPIC_NOT_IN_CLUSTER_MIRROR"));
    }
}
