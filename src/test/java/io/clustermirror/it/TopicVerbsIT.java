package io.clustermirror.it;

import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.Test;

/** The REST contract of the topic verbs: per-topic outcomes, illegal moves refused whole, delete guarded. */
class TopicVerbsIT extends ServiceIT {

    @Test
    void startShouldReportEachTopicOnItsOwn() throws Exception {
        String mirror = uniqueName("verbs");
        String topic = uniqueName("verbs");
        String missing = uniqueName("missing");
        createMirror(mirror);
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, topic, 2, Map.of());
        }

        api().body(Map.of("topics", List.of(topic, missing)))
                .post("/v1/mirrors/" + mirror + "/topics:start")
                .then()
                .statusCode(200)
                .body("topics.find { it.topic == '" + topic + "' }.result", equalTo("STARTED"))
                .body("topics.find { it.topic == '" + topic + "' }.partitions", equalTo(2))
                .body("topics.find { it.topic == '" + missing + "' }.errorCode", equalTo("UNKNOWN_TOPIC_OR_PARTITION"))
                .body("topics.find { it.topic == '" + missing + "' }.result", nullValue());
        awaitConverged(mirror, topic);
        // describe keeps the outcome of LOG_TRUNCATION: an empty destination at the source log start, nothing to fill
        org.assertj.core.api.Assertions.assertThat(
                        describeTopic(mirror, topic).getList("partitions.truncation", Map.class))
                .allSatisfy(t -> org.assertj.core.api.Assertions.assertThat(List.of(
                                t.get("step"), t.get("complete"), t.get("sourceLogStart"), t.get("offsetsTotal")))
                        .containsExactly("LOG_START_ALIGNMENT", true, 0, 0));

        // starting it again is an error for that topic
        api().body(Map.of("topics", List.of(topic)))
                .post("/v1/mirrors/" + mirror + "/topics:start")
                .then()
                .statusCode(200)
                .body("topics[0].errorCode", equalTo("TOPIC_ALREADY_IN_CLUSTER_MIRROR"));
        api().get("/v1/mirrors/" + mirror)
                .then()
                .statusCode(200)
                .body("topics[0].topic", equalTo(topic))
                .body("topics[0].states.MIRRORING", equalTo(2));
        api().get("/v1/mirrors").then().body("mirrors.find { it.name == '" + mirror + "' }.topicCount", equalTo(1));
    }

    @Test
    void illegalVerbsShouldBeRefusedWholeAndDeleteShouldWaitForStop() throws Exception {
        String mirror = uniqueName("illegal");
        String topic = uniqueName("illegal");
        createMirror(mirror);
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, topic, 1, Map.of());
        }
        startTopics(mirror, topic);
        awaitConverged(mirror, topic);

        // a mirror with a topic that is not stopped cannot be deleted
        api().delete("/v1/mirrors/" + mirror)
                .then()
                .statusCode(409)
                .body("errorCode", equalTo("CLUSTER_MIRROR_NOT_EMPTY"))
                .body("detail", containsString(topic + "-0 MIRRORING"));
        // resuming a mirroring topic changes nothing; recovering it neither
        api().body(Map.of("topics", List.of(topic)))
                .post("/v1/mirrors/" + mirror + "/topics:resume")
                .then()
                .statusCode(200)
                .body("topics[0].result", equalTo("UNCHANGED"));
        api().body(Map.of("topics", List.of(topic)))
                .post("/v1/mirrors/" + mirror + "/topics:recover")
                .then()
                .statusCode(200)
                .body("topics[0].result", equalTo("UNCHANGED"));
        // unknown topics and empty requests
        api().body(Map.of("topics", List.of("not-" + topic)))
                .post("/v1/mirrors/" + mirror + "/topics:pause")
                .then()
                .statusCode(404)
                .body("errorCode", equalTo("TOPIC_NOT_IN_CLUSTER_MIRROR"));
        api().body(Map.of("topics", List.of()))
                .post("/v1/mirrors/" + mirror + "/topics:pause")
                .then()
                .statusCode(400)
                .body("errorCode", equalTo("INVALID_REQUEST"));
        api().get("/v1/mirrors/" + mirror + "/topics/not-" + topic)
                .then()
                .statusCode(404)
                .body("errorCode", equalTo("TOPIC_NOT_IN_CLUSTER_MIRROR"));

        // stop, then pausing or stopping again is refused
        api().body(Map.of("topics", List.of(topic)))
                .post("/v1/mirrors/" + mirror + "/topics:stop")
                .then()
                .statusCode(200)
                .body("topics[0].result", equalTo("STOPPING"));
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(30))
                .until(() -> describeTopic(mirror, topic).getList("partitions.state").stream()
                        .allMatch("STOPPED"::equals));
        api().body(Map.of("topics", List.of(topic)))
                .post("/v1/mirrors/" + mirror + "/topics:pause")
                .then()
                .statusCode(409)
                .body("errorCode", equalTo("INVALID_MIRROR_PARTITION_STATE"))
                .body("detail", containsString(topic + "-0 is STOPPED"));
        api().body(Map.of("topics", List.of(topic)))
                .post("/v1/mirrors/" + mirror + "/topics:stop")
                .then()
                .statusCode(409)
                .body("errorCode", equalTo("MIRROR_TOPIC_ALREADY_STOPPED"));

        // now it can be deleted
        api().delete("/v1/mirrors/" + mirror).then().statusCode(204);
    }
}
