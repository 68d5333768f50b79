package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.testbed.ServiceProcess;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Issue 12: the packaged service (prod profile) does not serve an open control plane unless told to in so many words. */
class SecureByDefaultIT extends ServiceIT {

    @Test
    void withoutAMechanismTheServiceShouldRefuseToStartNamingTheFix() {
        ServiceProcess service = bed.newService(
                        "no-auth",
                        Map.of(
                                "mirror.http.auth.disabled", "false",
                                "mirror.state.topic.name", "__mirror_state_no_auth",
                                "mirror.state.topic.num.partitions", "1"))
                .launch();
        try {
            assertThat(service.waitFor(Duration.ofSeconds(90))).as("exit code").isEqualTo(1);
            String log = service.log();
            assertThat(log.lines().filter(l -> l.contains(" ERROR ")))
                    .singleElement()
                    .asString()
                    .contains("No authentication is configured for the REST control plane")
                    .contains("mirror.http.auth.disabled=true")
                    .contains("quarkus.security.users.embedded.users.");
        } finally {
            service.stop();
        }
    }

    @Test
    void explicitlyDisabledTheServiceShouldStartOpenAndSaySo() {
        // the shared test bed's service runs with mirror.http.auth.disabled=true
        assertThat(bed.service().log())
                .contains("WARN")
                .contains("The REST control plane runs WITHOUT authentication (mirror.http.auth.disabled=true)");
        api().get("/v1/mirrors").then().statusCode(200);
        api().get("/q/health/ready")
                .then()
                .statusCode(200)
                .body(
                        "checks.find { it.name == 'control-plane' }.data.authentication",
                        org.hamcrest.Matchers.equalTo("disabled"));
    }
}
