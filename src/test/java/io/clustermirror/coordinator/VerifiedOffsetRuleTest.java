package io.clustermirror.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionStatus;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * What a verification confirmed is kept only of a partition still at the state epoch it began at: a recreate moves
 * the partition through several states and rewrites its log, so offsets of the old log must not be recorded after it.
 */
class VerifiedOffsetRuleTest {

    private static final Instant NOW = Instant.parse("2026-12-06T00:00:00Z");

    private final PartitionStatus mirroring = PartitionStatus.initial(NOW)
            .moveTo(MirrorPartitionState.LOG_TRUNCATION, null, NOW)
            .moveTo(MirrorPartitionState.MIRRORING, null, NOW);

    @Test
    void aPartitionThatDidNotMoveShouldKeepWhatWasVerified() {
        assertThat(Verifications.keeps(mirroring, mirroring.stateEpoch())).isTrue();
    }

    @Test
    void aPartitionRecreatedMeanwhileShouldNotKeepTheOldLogsOffsets() {
        int startedAt = mirroring.stateEpoch();
        // a recreate: FAILED, then LOG_TRUNCATION of the new topic, then MIRRORING again
        PartitionStatus recreated = mirroring
                .moveTo(MirrorPartitionState.FAILED, "diverged", NOW)
                .moveTo(MirrorPartitionState.LOG_TRUNCATION, null, NOW)
                .moveTo(MirrorPartitionState.MIRRORING, null, NOW);

        assertThat(recreated.state()).isEqualTo(mirroring.state());
        assertThat(Verifications.keeps(recreated, startedAt)).isFalse();
    }

    @Test
    void aPartitionGoneOrNeverSeenShouldKeepNothing() {
        assertThat(Verifications.keeps(null, mirroring.stateEpoch())).isFalse();
        assertThat(Verifications.keeps(mirroring, null)).isFalse();
    }
}
