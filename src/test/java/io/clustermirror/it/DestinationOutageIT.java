package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.clustermirror.embedded.KafkaBrokerProcess;
import io.clustermirror.testbed.ServiceProcess;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A write while the destination is down is answered 503 within seconds, with Retry-After, not after 90 s. */
class DestinationOutageIT extends ServiceIT {

    private static KafkaBrokerProcess destination;
    private static ServiceProcess service;

    @BeforeAll
    static void startAServiceOnItsOwnDestination() {
        destination = bed.newCluster("outage-destination");
        destination.start(Duration.ofSeconds(120));
        service = bed.newPlainService("outage-service", destination, Map.of()).start();
    }

    @AfterAll
    static void stopThem() {
        service.stop();
        destination.close();
    }

    private static RequestSpecification outageApi() {
        return RestAssured.given().baseUri(service.baseUri().toString()).contentType(ContentType.JSON);
    }

    @Test
    void writesWhileTheDestinationIsDownShouldBeAnswered503WithinSeconds() {
        // Given a service whose destination goes down
        outageApi()
                .body(createBody(uniqueName("before"), sourceConfig()))
                .post("/v1/mirrors")
                .then()
                .statusCode(201);
        destination.stop();

        // When a mirror is created (the first write meets the outage), then another
        long started = System.nanoTime();
        Response first = outageApi()
                .body(createBody(uniqueName("during"), sourceConfig()))
                .post("/v1/mirrors");
        Duration firstTook = Duration.ofNanos(System.nanoTime() - started);
        started = System.nanoTime();
        Response second = outageApi()
                .body(createBody(uniqueName("during"), sourceConfig()))
                .post("/v1/mirrors");
        Duration secondTook = Duration.ofNanos(System.nanoTime() - started);

        // Then both are 503 COORDINATOR_NOT_AVAILABLE with Retry-After, the first within the write timeout (10 s)
        // and some slack, the second at once (not queued behind the re-read of the state)
        for (Response response : new Response[] {first, second}) {
            assertThat(response.statusCode()).as(response.asString()).isEqualTo(503);
            assertThat(response.jsonPath().getString("errorCode")).isEqualTo("COORDINATOR_NOT_AVAILABLE");
            assertThat(response.header("Retry-After")).isEqualTo("5");
        }
        assertThat(firstTook).isLessThan(Duration.ofSeconds(25)); // was 90 s
        assertThat(secondTook).isLessThan(Duration.ofSeconds(5));

        // and once the destination is back, writes succeed again
        destination.start(Duration.ofSeconds(120));
        await("the service takes writes again")
                .atMost(Duration.ofMinutes(3))
                .pollInterval(Duration.ofSeconds(2))
                .until(() -> outageApi()
                                .body(createBody(uniqueName("after"), sourceConfig()))
                                .post("/v1/mirrors")
                                .statusCode()
                        == 201);
    }
}
