package io.clustermirror.mirror;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class RegexListTest {

    @Test
    void aPatternThatBacktracksExponentiallyShouldMatchInLinearTime() {
        var pattern = RegexList.compile(List.of("(.*a){20}")).get(0);

        // java.util.regex backtracks on this name for 40 s here (each more "a" multiplies it); RE2 is linear
        assertTimeoutPreemptively(
                Duration.ofSeconds(2),
                () -> assertThat(pattern.matcher("a".repeat(30) + "-").matches())
                        .isFalse());
        assertThat(pattern.matcher("a".repeat(20)).matches()).isTrue();
    }

    @Test
    void whatALinearTimeEngineCannotExpressShouldBeRefusedNamingThePattern() {
        assertThatThrownBy(() -> RegexList.compile(List.of("(a)\\1")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'(a)\\1' is not a valid regular expression");
        assertThatThrownBy(() -> RegexList.compile(List.of("orders(?=-eu)")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'orders(?=-eu)' is not a valid regular expression");
    }

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
