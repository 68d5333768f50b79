package io.clustermirror.mirror;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class MirrorConfigRulesTest {

    private final MirrorConfigRules rules = new MirrorConfigRules(
            Set.of(
                    "sasl.mechanism",
                    "sasl.jaas.config",
                    "ssl.truststore.location",
                    "ssl.truststore.password",
                    "ssl.keystore.key",
                    "sasl.oauthbearer.client.credentials.client.secret"),
            Set.of("sasl.jaas.config", "ssl.truststore.password", "ssl.keystore.key"));

    @Test
    void validConfigShouldBeKeptSorted() {
        MirrorConfig config = rules.validate(Map.of(
                "mirror.topics.include",
                "a.*,b",
                "bootstrap.servers",
                "k1:9092,[::1]:9093",
                "security.protocol",
                "sasl_ssl",
                "mirror.acl.include",
                "TOPIC;orders.*;READ;ALLOW;User:*, *;.*;*;*;*"));

        assertThat(config.values().keySet())
                .containsExactly(
                        "bootstrap.servers", "mirror.acl.include", "mirror.topics.include", "security.protocol");
        assertThat(config.bootstrapServers()).isEqualTo("k1:9092,[::1]:9093");
    }

    @Test
    void unknownKeyShouldBeRefusedNamingIt() {
        assertThatThrownBy(() -> rules.validate(Map.of("bootstrap.servers", "k:1", "linger.ms", "5")))
                .isInstanceOfSatisfying(MirrorException.class, e -> {
                    assertThat(e.error()).isEqualTo(MirrorError.INVALID_CONFIG);
                    assertThat(e.field()).isEqualTo("config.linger.ms");
                    assertThat(e.getMessage()).contains("'linger.ms'");
                });
    }

    @Test
    void bootstrapServersShouldBeRequired() {
        assertThatThrownBy(() -> rules.validate(Map.of("mirror.truncation.policy", "fail")))
                .isInstanceOfSatisfying(
                        MirrorException.class, e -> assertThat(e.field()).isEqualTo("config.bootstrap.servers"));
    }

    @Test
    void sensitiveKeysShouldBePasswordsAndAnythingNamedLikeACredential() {
        assertThat(rules.isSensitive("sasl.jaas.config")).isTrue();
        assertThat(rules.isSensitive("ssl.truststore.password")).isTrue();
        assertThat(rules.isSensitive("ssl.keystore.key")).isTrue();
        assertThat(rules.isSensitive("sasl.oauthbearer.client.credentials.client.secret"))
                .isTrue();
        assertThat(rules.isSensitive("sasl.mechanism")).isFalse();
        assertThat(rules.isSensitive("bootstrap.servers")).isFalse();
    }

    @Test
    void maskedShouldHideSecretsOnly() {
        MirrorConfig config = rules.validate(
                Map.of("bootstrap.servers", "k:1", "sasl.jaas.config", "secret", "sasl.mechanism", "PLAIN"));

        assertThat(config.masked(rules::isSensitive))
                .containsExactlyInAnyOrderEntriesOf(
                        Map.of("bootstrap.servers", "k:1", "sasl.jaas.config", "[hidden]", "sasl.mechanism", "PLAIN"));
        assertThat(config.toString()).doesNotContain("secret");
    }

    @Test
    void redactShouldRemoveSecretValuesFromText() {
        MirrorConfig config = rules.validate(Map.of("bootstrap.servers", "k:1", "ssl.truststore.password", "hunter2"));

        assertThat(rules.redact("bad password hunter2 for k:1", config)).isEqualTo("bad password [hidden] for k:1");
    }

    @Test
    void alterShouldSetThenDeleteAndRevalidate() {
        MirrorConfig current = rules.validate(Map.of("bootstrap.servers", "k:1", "mirror.groups.exclude", "x"));

        MirrorConfig altered =
                rules.alter(current, Map.of("mirror.truncation.policy", "recreate"), Set.of("mirror.groups.exclude"));

        assertThat(altered.values())
                .isEqualTo(Map.of("bootstrap.servers", "k:1", "mirror.truncation.policy", "recreate"));
        assertThat(current.values()).containsKey("mirror.groups.exclude");
    }

    @Test
    void alterShouldRefuseDeletingBootstrapOrSettingAndDeletingOneKey() {
        MirrorConfig current = rules.validate(Map.of("bootstrap.servers", "k:1"));

        assertThatThrownBy(() -> rules.alter(current, Map.of(), Set.of("bootstrap.servers")))
                .isInstanceOfSatisfying(
                        MirrorException.class, e -> assertThat(e.error()).isEqualTo(MirrorError.INVALID_CONFIG));
        assertThatThrownBy(() -> rules.alter(
                        current, Map.of("mirror.truncation.policy", "fail"), Set.of("mirror.truncation.policy")))
                .isInstanceOfSatisfying(
                        MirrorException.class, e -> assertThat(e.error()).isEqualTo(MirrorError.INVALID_REQUEST));
        assertThatThrownBy(() -> rules.alter(current, Map.of("mirror.topics.include", "("), Set.of()))
                .isInstanceOfSatisfying(
                        MirrorException.class, e -> assertThat(e.field()).isEqualTo("set.mirror.topics.include"));
    }

    @Test
    void sourceConnectionShouldIgnoreMirrorPolicies() {
        MirrorConfig a = rules.validate(Map.of("bootstrap.servers", "k:1", "mirror.truncation.policy", "fail"));
        MirrorConfig b = rules.validate(Map.of("bootstrap.servers", "k:1", "mirror.truncation.policy", "recreate"));
        Map<String, String> other = new HashMap<>(b.values());
        other.put("bootstrap.servers", "k:2");

        assertThat(a.sameSourceConnection(b)).isTrue();
        assertThat(a.sameSourceConnection(new MirrorConfig(other))).isFalse();
        assertThat(a.sourceClientProperties()).containsOnlyKeys("bootstrap.servers");
    }
}
