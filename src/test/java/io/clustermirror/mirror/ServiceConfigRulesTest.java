package io.clustermirror.mirror;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.clustermirror.mirror.ServiceConfigEntry.Source;
import io.clustermirror.mirror.ServiceConfigEntry.Synonym;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ServiceConfigRulesTest {

    private static final String RATE = ServiceConfigRules.REPLICATION_THROTTLED_RATE;
    private static final String UNLIMITED = Long.toString(Long.MAX_VALUE);

    @Test
    void aValueShouldResolveDynamicOverStaticOverDefaultNamingEveryLevel() {
        assertThat(ServiceConfigRules.resolve(RATE, Map.of(), Map.of()))
                .extracting(ServiceConfigEntry::value, ServiceConfigEntry::source, ServiceConfigEntry::synonyms)
                .containsExactly(UNLIMITED, Source.DEFAULT, List.of(new Synonym(Source.DEFAULT, UNLIMITED)));
        assertThat(ServiceConfigRules.resolve(RATE, Map.of(), Map.of(RATE, "5000000")))
                .extracting(ServiceConfigEntry::value, ServiceConfigEntry::source, ServiceConfigEntry::synonyms)
                .containsExactly(
                        "5000000",
                        Source.STATIC,
                        List.of(new Synonym(Source.STATIC, "5000000"), new Synonym(Source.DEFAULT, UNLIMITED)));
        assertThat(ServiceConfigRules.resolve(RATE, Map.of(RATE, "2097152"), Map.of(RATE, "5000000")))
                .extracting(ServiceConfigEntry::value, ServiceConfigEntry::source, ServiceConfigEntry::synonyms)
                .containsExactly(
                        "2097152",
                        Source.DYNAMIC,
                        List.of(
                                new Synonym(Source.DYNAMIC, "2097152"),
                                new Synonym(Source.STATIC, "5000000"),
                                new Synonym(Source.DEFAULT, UNLIMITED)));
        assertThat(ServiceConfigRules.describe(Map.of(), Map.of()))
                .extracting(ServiceConfigEntry::name)
                .containsExactly(RATE);
    }

    @Test
    void aRateShouldBeAPositiveWholeNumberOfBytesPerSecond() {
        assertThat(ServiceConfigRules.validate(RATE, " 2097152 ")).isEqualTo("2097152");
        assertThat(ServiceConfigRules.validate(RATE, "1")).isEqualTo("1");
        assertThat(ServiceConfigRules.validate(RATE, UNLIMITED)).isEqualTo(UNLIMITED);
        for (String bad : List.of("0", "-1", "2MB", "1.5", "", "9223372036854775808")) {
            assertThatThrownBy(() -> ServiceConfigRules.validate(RATE, bad))
                    .as(bad)
                    .isInstanceOfSatisfying(MirrorException.class, e -> {
                        assertThat(e.error()).isEqualTo(MirrorError.INVALID_CONFIG);
                        assertThat(e.field()).isEqualTo(RATE);
                    })
                    .hasMessageContaining(RATE)
                    .hasMessageContaining("'" + bad + "'");
        }
    }

    @Test
    void anUnknownKeyShouldBeRefusedNamingItAndTheKnownOnes() {
        assertThatThrownBy(() -> ServiceConfigRules.validate("mirror.replication.throttled.rat", "1"))
                .isInstanceOfSatisfying(
                        MirrorException.class, e -> assertThat(e.field()).isEqualTo("mirror.replication.throttled.rat"))
                .hasMessageContaining("Unknown service config 'mirror.replication.throttled.rat'")
                .hasMessageContaining(RATE);
        assertThatThrownBy(() -> ServiceConfigRules.requireKnown("linger.ms")).isInstanceOf(MirrorException.class);
        assertThatThrownBy(() -> ServiceConfigRules.resolve("linger.ms", Map.of(), Map.of()))
                .isInstanceOf(MirrorException.class);
    }
}
