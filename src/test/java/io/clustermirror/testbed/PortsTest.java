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
}
