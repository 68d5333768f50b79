package io.clustermirror.sync.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class ShareOffsetReadBackTest {

    private static final TopicPartition T0 = new TopicPartition("t", 0);
    private static final TopicPartition T1 = new TopicPartition("t", 1);

    @Test
    void offsetsThatReadBackAsWrittenAreApplied() {
        assertThat(ShareOffsetReadBack.unapplied(Map.of(T0, 20L, T1, 5L), Map.of(T0, 20L, T1, 5L)))
                .isEmpty();
        assertThatCode(() -> ShareOffsetReadBack.verify(Map.of(T0, 20L), Map.of(T0, 20L)))
                .doesNotThrowAnyException();
    }

    @Test
    void anOffsetLeftWhereItWasOrMissingIsNamed() {
        Map<TopicPartition, Long> readBack = new HashMap<>();
        readBack.put(T0, 0L); // a 4.1.2 broker: the old start offset stays
        readBack.put(T1, null); // a group the 4.1.2 broker did not know: nothing at all
        assertThat(ShareOffsetReadBack.unapplied(Map.of(T0, 20L, T1, 5L), readBack))
                .containsEntry(T0, "wanted 20, destination shows 0")
                .containsEntry(T1, "wanted 5, destination shows none");
        assertThatThrownBy(() -> ShareOffsetReadBack.verify(Map.of(T0, 20L), readBack))
                .isInstanceOf(ShareOffsetReadBack.NotAppliedException.class)
                .hasMessageContaining("t-0=wanted 20, destination shows 0")
                .hasMessageContaining("4.2.0 or newer destination");
    }

    @Test
    void partitionsNotWrittenAreNotJudged() {
        assertThat(ShareOffsetReadBack.unapplied(Map.of(T0, 3L), Map.of(T0, 3L, T1, 99L)))
                .isEmpty();
    }
}
