package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.clustermirror.testbed.ServiceProcess;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** FAILED retries itself with back-off up to mirror.failed.retry.max.attempts, then waits for recover. */
class FailedRetryIT extends ServiceIT {

    private static ServiceProcess retrying;

    @BeforeAll
    static void startARetryingService() {
        retrying = bed.newService(
                        "retrying",
                        Map.of(
                                "mirror.state.topic.name",
                                uniqueName("__mirror_state_retry"),
                                "mirror.failed.retry.initial.backoff.ms",
                                "50",
                                "mirror.failed.retry.max.backoff.ms",
                                "200",
                                "mirror.failed.retry.max.attempts",
                                "3"))
                .start();
    }

    @AfterAll
    static void stopIt() {
        retrying.stop();
    }

    private static RequestSpecification retryingApi() {
        return RestAssured.given().baseUri(retrying.baseUri().toString()).contentType(ContentType.JSON);
    }

    @Test
    void failedPartitionShouldRetryThenWaitForRecover() throws Exception {
        // Given a destination partition that diverged from the source: another record at offset 0
        String mirror = uniqueName("retry");
        String topic = uniqueName("retry");
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, topic, 1, Map.of());
        }
        try (Admin admin = bed.destinationAdmin()) {
            Kafka.createTopic(admin, topic, 1, Map.of());
        }
        Kafka.produce(bed.source().bootstrapServers(), topic, 1, "none", "source");
        Kafka.produce(bed.destination().bootstrapServers(), topic, 1, "none", "elsewhere");
        retryingApi()
                .body(createBody(mirror, sourceConfig()))
                .post("/v1/mirrors")
                .then()
                .statusCode(201);

        // When
        retryingApi()
                .body(Map.of("topics", List.of(topic), "adoptExisting", true))
                .post("/v1/mirrors/" + mirror + "/topics:start")
                .then()
                .statusCode(200)
                .body("topics[0].result", org.hamcrest.Matchers.equalTo("STARTED"));

        // Then: three automatic retries, then it waits with retryAttempt -1
        await().atMost(Duration.ofSeconds(60)).until(() -> retryAttempt(mirror, topic) == -1);
        assertThat(retrying.log())
                .contains(
                        "FAILED, retried automatically (attempt 2 of 3)",
                        "FAILED, retried automatically (attempt 3 of 3)",
                        "FAILED, no automatic retry left");

        // and recover starts over
        retryingApi()
                .body(Map.of("topics", List.of(topic)))
                .post("/v1/mirrors/" + mirror + "/topics:recover")
                .then()
                .statusCode(200);
        await().atMost(Duration.ofSeconds(60))
                .until(() -> retryAttempt(mirror, topic) == -1
                        && retrying.log().split("FAILED, no automatic retry left", -1).length > 2);
    }

    private static int retryAttempt(String mirror, String topic) {
        var partition = retryingApi()
                .get("/v1/mirrors/" + mirror + "/topics/" + topic)
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();
        return "FAILED".equals(partition.getString("partitions[0].state"))
                ? partition.getInt("partitions[0].retryAttempt")
                : 99;
    }
}
