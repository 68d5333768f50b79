package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;

import io.clustermirror.testbed.ServiceProcess;
import io.restassured.RestAssured;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Mirrors live in {@code __mirror_state}: a new service process, after a crash or a clean stop, shows the same mirrors. */
class ServiceRestartIT extends ServiceIT {

    @Test
    void mirrorsShouldSurviveKillNineAndCleanRestart() {
        // Given
        String kept = uniqueName("kept");
        String altered = uniqueName("altered");
        String deleted = uniqueName("deleted");
        createMirror(kept);
        createMirror(altered);
        createMirror(deleted);
        api().body(Map.of("set", Map.of("mirror.truncation.policy", "recreate", "sasl.jaas.config", "x")))
                .patch("/v1/mirrors/" + altered + "/config")
                .then()
                .statusCode(200);
        api().delete("/v1/mirrors/" + deleted).then().statusCode(204);
        var keptBefore =
                stored(api().get("/v1/mirrors/" + kept).then().extract().asString());
        var alteredBefore =
                stored(api().get("/v1/mirrors/" + altered).then().extract().asString());
        ServiceProcess service = bed.service();

        // When: a crash, then a new process
        service.kill();
        assertThat(service.isAlive()).isFalse();
        service.start();

        // Then
        assertThat(mirrorNames()).contains(kept, altered).doesNotContain(deleted);
        assertThat(stored(api().get("/v1/mirrors/" + kept)
                        .then()
                        .statusCode(200)
                        .extract()
                        .asString()))
                .isEqualTo(keptBefore);
        assertThat(stored(api().get("/v1/mirrors/" + altered)
                        .then()
                        .statusCode(200)
                        .body("config.'mirror.truncation.policy'", equalTo("recreate"))
                        .body("config.'sasl.jaas.config'", equalTo("[hidden]"))
                        .extract()
                        .asString()))
                .isEqualTo(alteredBefore);

        // When: a clean stop and start
        service.stop();
        service.start();

        // Then
        assertThat(stored(api().get("/v1/mirrors/" + kept)
                        .then()
                        .statusCode(200)
                        .extract()
                        .asString()))
                .isEqualTo(keptBefore);
        assertThat(stored(api().get("/v1/mirrors/" + altered)
                        .then()
                        .statusCode(200)
                        .extract()
                        .asString()))
                .isEqualTo(alteredBefore);
    }

    @Test
    void aSecondInstanceShouldFenceTheFirstInsteadOfBothWriting() {
        // Given
        String name = uniqueName("fence");
        createMirror(name);
        ServiceProcess first = bed.service();
        ServiceProcess second = bed.newService("second-instance", Map.of());

        try {
            // When: another instance takes over the same state topic
            second.start();

            // Then: it sees the same mirrors, and the first can no longer write
            RestAssured.given()
                    .baseUri(second.baseUri().toString())
                    .get("/v1/mirrors/" + name)
                    .then()
                    .statusCode(200);
            api().body(createBody(uniqueName("zombie"), sourceConfig()))
                    .post("/v1/mirrors")
                    .then()
                    .statusCode(503)
                    .body("errorCode", equalTo("COORDINATOR_NOT_AVAILABLE"));
            await().atMost(Duration.ofSeconds(10)).until(() -> first.readyStatus() == 503);
            assertThat(first.log()).contains("this one is fenced");
        } finally {
            second.stop();
            first.stop();
            first.start();
        }
        createMirror(uniqueName("after-fence"));
    }
}
