package io.clustermirror.mirror;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class RegexListTest {

    @Test
    void anUnchangedListShouldBeCompiledOnce() {
        List<String> regexes = List.of("orders\\..*", "payments-" + System.nanoTime());
        long before = RegexList.compilations();

        var first = RegexList.compile(regexes);
        var second = RegexList.compile(List.copyOf(regexes));

        assertThat(second).isSameAs(first);
        assertThat(RegexList.compilations()).isEqualTo(before + 1);
        assertThat(first.get(0).matcher("orders.eu").matches()).isTrue();
    }

    @Test
    void aPatternLongerThanTheLimitShouldBeRefusedBeforeCompiling() {
        assertThatThrownBy(() -> RegexList.compile(List.of("a".repeat(RegexList.MAX_PATTERN_LENGTH + 1))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1001 characters")
                .hasMessageContaining("1000 accepted");
        assertThat(RegexList.compile(List.of("a".repeat(RegexList.MAX_PATTERN_LENGTH))))
                .hasSize(1);
    }

    @Test
    void moreThanTheLimitOfPatternsShouldBeRefused() {
        assertThatThrownBy(() -> RegexList.compile(Collections.nCopies(RegexList.MAX_PATTERNS + 1, "x")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("101 patterns");
    }

    @Test
    void anInvalidPatternShouldBeNamedShortly() {
        assertThatThrownBy(() -> RegexList.compile(List.of("(" + "b".repeat(500))))
                .isInstanceOf(IllegalArgumentException.class)
                .satisfies(e -> assertThat(e.getMessage())
                        .contains("not a valid regular expression")
                        .hasSizeLessThan(200));
    }
}
