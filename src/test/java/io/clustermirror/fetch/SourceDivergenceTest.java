package io.clustermirror.fetch;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SourceDivergenceTest {

    @Test
    void aDivergingEpochNamesBothEpochsAndOffsets() {
        assertThat(SourceDivergence.describe(3, 1_000, 3, 940))
                .isEqualTo(
                        "the source no longer holds what was fetched from it: the mirror fetched up to offset 1000 with source "
                                + "leader epoch 3, but on the source leader epoch 3 ends at offset 940 (unclean leader election on the source?)");
    }

    @Test
    void outOfRangeTellsRetentionFromLostRecords() {
        assertThat(SourceDivergence.outOfRange(10, 50, 900))
                .isEqualTo("source offset 10 is below the source log start 50: deleted by "
                        + "retention before it was mirrored");
        assertThat(SourceDivergence.outOfRange(1_000, 50, 940))
                .isEqualTo("source offset 1000 is beyond the source log end 940: the "
                        + "source lost records that were mirrored (unclean leader election on the source?)");
        assertThat(SourceDivergence.outOfRange(1_000, -1, -1)).contains("out of range on the source");
    }
}
