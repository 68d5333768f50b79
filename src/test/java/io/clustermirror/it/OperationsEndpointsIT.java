package io.clustermirror.it;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Health, metrics and Swagger UI as an operator meets them on the packaged service. */
class OperationsEndpointsIT extends ServiceIT {

    @Test
    void healthShouldBeUpWithTheDestinationClusterId() throws Exception {
        String destinationId;
        try (var admin = bed.destinationAdmin()) {
            destinationId = admin.describeCluster().clusterId().get();
        }
        given().baseUri(bed.service().baseUri().toString())
                .get("/q/health/live")
                .then()
                .statusCode(200)
                .body("status", equalTo("UP"));
        given().baseUri(bed.service().baseUri().toString())
                .get("/q/health/ready")
                .then()
                .statusCode(200)
                .body("status", equalTo("UP"))
                .body("checks.find { it.name == 'mirror-coordinator' }.data.phase", equalTo("ACTIVE"))
                .body(
                        "checks.find { it.name == 'mirror-coordinator' }.data.destinationClusterId",
                        equalTo(destinationId));
    }

    @Test
    void metricsShouldCountMirrorsStateWritesAndRefusals() {
        createMirror(uniqueName("metrics"));
        api().get("/v1/mirrors/" + uniqueName("absent")).then().statusCode(404);

        String metrics = given().baseUri(bed.service().baseUri().toString())
                .get("/q/metrics")
                .then()
                .statusCode(200)
                .extract()
                .asString();

        assertThat(metrics)
                .contains("cluster_mirror_mirrors ")
                .contains("cluster_mirror_coordinator_queued_tasks{when=\"due\"}")
                .contains("cluster_mirror_coordinator_queued_tasks{when=\"later\"}")
                .contains("cluster_mirror_state_writes_total{result=\"ok\"}")
                .contains("cluster_mirror_api_errors_total{errorCode=\"UNKNOWN_CLUSTER_MIRROR\"}");
    }

    @Test
    void swaggerUiShouldBeServedByThePackagedService() {
        given().baseUri(bed.service().baseUri().toString())
                .get("/q/swagger-ui/")
                .then()
                .statusCode(200)
                .body(containsString("swagger"));
    }

    @Test
    void readinessShouldFollowTheDestinationBrokerThroughARestart() {
        // When the destination broker goes away
        bed.destination().stop();
        try {
            // Then readiness goes DOWN, saying why
            await().atMost(Duration.ofSeconds(30)).until(() -> bed.service().readyStatus() == 503);
            given().baseUri(bed.service().baseUri().toString())
                    .get("/q/health/ready")
                    .then()
                    .statusCode(503)
                    .body(
                            "checks.find { it.name == 'mirror-coordinator' }.data.reason",
                            containsString("destination not reachable"));
        } finally {
            bed.destination().start(Duration.ofSeconds(120));
            bed.awaitProducible(bed.destination());
        }

        // and comes back UP, with writes working again
        bed.service().awaitReady(Duration.ofSeconds(90));
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofSeconds(1))
                .untilAsserted(() -> api().body(createBody(uniqueName("after-restart"), sourceConfig()))
                        .post("/v1/mirrors")
                        .then()
                        .statusCode(201));
    }
}
