package io.clustermirror.mirror;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

class MirrorNameTest {

    @ParameterizedTest
    @ValueSource(strings = {"a", "dr-east", "Mirror_1.prod", "..a", "a..", "-", "_"})
    void legalNamesShouldPass(String name) {
        assertThat(MirrorName.validate(name)).isEqualTo(name);
    }

    @Test
    void nameOf249CharactersShouldPassAnd250ShouldNot() {
        assertThat(MirrorName.validate("x".repeat(249))).hasSize(249);
        assertThatThrownBy(() -> MirrorName.validate("x".repeat(250)))
                .isInstanceOfSatisfying(
                        MirrorException.class,
                        e -> assertThat(e.error()).isEqualTo(MirrorError.INVALID_CLUSTER_MIRROR_NAME))
                .hasMessageContaining("250");
    }

    @ParameterizedTest
    @NullAndEmptySource
    @ValueSource(strings = {".", "..", "a b", "a/b", "a:b", "ümlaut", "tab\t", "a*"})
    void illegalNamesShouldBeRefusedNamingTheField(String name) {
        assertThatThrownBy(() -> MirrorName.validate(name)).isInstanceOfSatisfying(MirrorException.class, e -> {
            assertThat(e.error()).isEqualTo(MirrorError.INVALID_CLUSTER_MIRROR_NAME);
            assertThat(e.field()).isEqualTo("name");
        });
    }
}
