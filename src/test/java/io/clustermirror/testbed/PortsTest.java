package io.clustermirror.testbed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class PortsTest {

    @Test
    void theForksShouldTakeDisjointSlicesBelowTheEphemeralRange() {
        assertThat(Ports.slice(1, 1)).containsExactly(20000, 32000);
        assertThat(Ports.slice(1, 2)).containsExactly(20000, 26000);
        assertThat(Ports.slice(2, 2)).containsExactly(26000, 32000);
        assertThat(Ports.slice(3, 3)[1]).isLessThanOrEqualTo(32768);
    }

    @Test
    void aForkOutsideTheCountShouldBeRefused() {
        assertThatThrownBy(() -> Ports.slice(3, 2)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Ports.slice(0, 2)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aForkNumberThatIsNoNumberShouldFailTheRunNotShareASlice() {
        assertThat(Ports.number("testbed.fork", null)).isEqualTo(1);
        assertThat(Ports.number("testbed.fork", "2")).isEqualTo(2);
        // a placeholder that reached the fork unreplaced, or empty, or a forkCount such as "1C"
        assertThatThrownBy(() -> Ports.number("testbed.fork", "${surefire.forkNumber}"))
                .hasMessageContaining("testbed.fork must be a number");
        assertThatThrownBy(() -> Ports.number("testbed.fork", "")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Ports.number("testbed.forks", "1C")).isInstanceOf(IllegalArgumentException.class);
    }
}
