package io.clustermirror.kafka;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import java.util.Map;
import java.util.Set;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SourceSettingsCheckTest {

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource({
        "ssl.engine.factory.class, java.lang.Runtime",
        "sasl.login.class, java.lang.ProcessBuilder",
        "sasl.login.callback.handler.class, java.lang.Object",
        "security.providers, java.lang.Runtime",
        "ssl.enabled.protocols, TLSv9",
        "ssl.protocol, TLSv9",
        "ssl.cipher.suites, TLS_NOT_A_SUITE",
        "ssl.keystore.type, BOGUS",
        "ssl.truststore.type, BOGUS",
        "ssl.trustmanager.algorithm, BOGUS",
        "sasl.login.connect.timeout.ms, -5",
        "sasl.login.retry.backoff.ms, -1",
    })
    void aValueTheClientWouldFailOnOrAClassItWouldInstantiateShouldBeInvalidConfigNamingTheSetting(
            String key, String value) {
        assertThatThrownBy(() ->
                        SourceSettingsCheck.check(Map.of("bootstrap.servers", "localhost:9092", key, value), Set.of()))
                .isInstanceOfSatisfying(MirrorException.class, e -> {
                    Assertions.assertThat(e.error()).isEqualTo(MirrorError.INVALID_CONFIG);
                    Assertions.assertThat(e.field()).isEqualTo("config." + key);
                });
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource({
        "ssl.enabled.protocols, 'TLSv1.2,TLSv1.3'",
        "ssl.protocol, TLSv1.3",
        "ssl.keystore.type, PKCS12",
        "ssl.truststore.type, PEM",
        "sasl.login.connect.timeout.ms, 5000",
    })
    void whatTheClientAcceptsShouldPass(String key, String value) {
        assertThatCode(() -> SourceSettingsCheck.check(Map.of(key, value), Set.of()))
                .doesNotThrowAnyException();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "sasl.login.callback.handler.class, org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
    })
    void aClassTheOperatorAllowsShouldPass(String key, String value) {
        assertThatCode(() -> SourceSettingsCheck.check(Map.of(key, value), Set.of(value)))
                .doesNotThrowAnyException();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "sasl.login.callback.handler.class, org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
        "sasl.login.class, org.apache.kafka.common.security.oauthbearer.internals.OAuthBearerRefreshingLogin"
    })
    void kafkaClientsOwnSecurityClassesShouldPassUnlisted(String key, String value) {
        // OAUTHBEARER against an OIDC provider needs the handler: stored mirrors using it keep working
        assertThatCode(() -> SourceSettingsCheck.check(Map.of(key, value), Set.of()))
                .doesNotThrowAnyException();
    }
}
