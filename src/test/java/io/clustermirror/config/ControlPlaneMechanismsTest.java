package io.clustermirror.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.smallrye.config.EnvConfigSource;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ControlPlaneMechanismsTest {

    private static SmallRyeConfig config(
            Map<String, String> properties, Map<String, String> env, Map<String, String> defaults) {
        SmallRyeConfigBuilder builder = new SmallRyeConfigBuilder()
                .withSources(new PropertiesConfigSource(properties, "application.properties", 250))
                .withSources(new EnvConfigSource(env, 300));
        defaults.forEach(builder::withDefaultValue);
        return builder.build();
    }

    @Test
    void eachMechanismShouldBeFoundFromPropertiesOrEnvironmentVariables() {
        assertThat(ControlPlaneMechanisms.configured(config(
                        Map.of(
                                "quarkus.security.users.embedded.users.alice", "pw",
                                "quarkus.http.auth.certificate-role-properties", "roles.properties"),
                        Map.of("MP_JWT_VERIFY_PUBLICKEY_LOCATION", "https://idp/certs"),
                        Map.of())))
                .containsExactly("basic", "jwt", "mtls");
        assertThat(ControlPlaneMechanisms.configured(
                        config(Map.of(), Map.of("QUARKUS_SECURITY_USERS_EMBEDDED_USERS_BOB", "pw"), Map.of())))
                .containsExactly("basic");
    }

    @Test
    void defaultsShouldNotCountAsConfiguration() {
        // dev mode generates a JWT key pair and gives it as default values: that configures nothing
        assertThat(ControlPlaneMechanisms.configured(config(
                        Map.of("quarkus.security.users.embedded.plain-text", "true"),
                        Map.of(),
                        Map.of("mp.jwt.verify.publickey", "MIIBIjAN...", "smallrye.jwt.sign.key", "MIIEv..."))))
                .isEmpty();
    }
}
