package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Secret config values are never returned in any response body and never written to the service log. */
class SecretsIT extends ServiceIT {

    @Test
    void secretsShouldBeMaskedInEveryResponseAndAbsentFromTheLog() {
        // Given
        String name = uniqueName("secret");
        String jaasSecret = "jaas-" + UUID.randomUUID();
        String truststoreSecret = "ts-" + UUID.randomUUID();
        String keystoreSecret = "ks-" + UUID.randomUUID();
        String jaas = "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"mirror\" password=\""
                + jaasSecret + "\";";
        List<String> bodies = new ArrayList<>();

        // When
        bodies.add(api().body(createBody(
                        name,
                        Map.of(
                                "bootstrap.servers",
                                bed.source().bootstrapServers(),
                                "security.protocol",
                                "PLAINTEXT",
                                "sasl.mechanism",
                                "PLAIN",
                                "sasl.jaas.config",
                                jaas,
                                "ssl.truststore.password",
                                truststoreSecret)))
                .post("/v1/mirrors")
                .then()
                .statusCode(201)
                .body("config.'sasl.jaas.config'", equalTo("[hidden]"))
                .body("config.'ssl.truststore.password'", equalTo("[hidden]"))
                .body("config.'sasl.mechanism'", equalTo("PLAIN"))
                .extract()
                .asString());
        bodies.add(api().body(Map.of("set", Map.of("ssl.keystore.password", keystoreSecret)))
                .patch("/v1/mirrors/" + name + "/config")
                .then()
                .statusCode(200)
                .body("config.'ssl.keystore.password'", equalTo("[hidden]"))
                .extract()
                .asString());
        bodies.add(api().get("/v1/mirrors/" + name)
                .then()
                .statusCode(200)
                .extract()
                .asString());
        bodies.add(api().get("/v1/mirrors").then().statusCode(200).extract().asString());
        bodies.add(api().body(createBody(
                        name, Map.of("bootstrap.servers", bed.source().bootstrapServers(), "sasl.jaas.config", jaas)))
                .post("/v1/mirrors")
                .then()
                .statusCode(409)
                .extract()
                .asString());

        // Then
        for (String body : bodies) {
            assertThat(body).doesNotContain(jaasSecret, truststoreSecret, keystoreSecret);
        }
        assertThat(bed.service().log()).contains(name).doesNotContain(jaasSecret, truststoreSecret, keystoreSecret);
    }

    @Test
    void errorsFromTheSourceShouldNotEchoSecrets() {
        // a SASL client against a plaintext-only broker fails; whatever the client says must not carry the secret
        String secret = "pw-" + UUID.randomUUID();
        String name = uniqueName("secret-fail");

        String body = api().body(createBody(
                        name,
                        Map.of(
                                "bootstrap.servers",
                                bed.source().bootstrapServers(),
                                "security.protocol",
                                "SASL_PLAINTEXT",
                                "sasl.mechanism",
                                "PLAIN",
                                "sasl.jaas.config",
                                "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\""
                                        + secret + "\";")))
                .post("/v1/mirrors")
                .then()
                .statusCode(422)
                .body("errorCode", equalTo("SOURCE_METADATA_NOT_AVAILABLE"))
                .extract()
                .asString();

        assertThat(body).doesNotContain(secret);
        assertThat(bed.service().log()).doesNotContain(secret);
        assertThat(mirrorNames()).doesNotContain(name);
    }
}
