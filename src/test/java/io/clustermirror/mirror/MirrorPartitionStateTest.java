package io.clustermirror.mirror;

import static io.clustermirror.mirror.MirrorPartitionState.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every pair of states, legal and illegal, against DESIGN §3. */
class MirrorPartitionStateTest {

    /** DESIGN §3, written out independently of the production table. */
    private static final Map<MirrorPartitionState, Set<MirrorPartitionState>> EXPECTED_TARGETS = Map.of(
            UNKNOWN, EnumSet.of(LOG_TRUNCATION, FAILED),
            LOG_TRUNCATION, EnumSet.of(MIRRORING, STOPPING, FAILED),
            MIRRORING, EnumSet.of(EPOCH_FENCING, PAUSING, STOPPING, FAILED),
            EPOCH_FENCING, EnumSet.of(MIRRORING, STOPPING, FAILED),
            PAUSING, EnumSet.of(PAUSED, STOPPING, FAILED),
            PAUSED, EnumSet.of(MIRRORING, STOPPING, FAILED),
            STOPPING, EnumSet.of(STOPPED, FAILED),
            STOPPED, EnumSet.of(LOG_TRUNCATION, FAILED),
            FAILED, EnumSet.of(LOG_TRUNCATION, MIRRORING, STOPPING));

    static Stream<Arguments> everyPair() {
        List<Arguments> pairs = new ArrayList<>();
        for (MirrorPartitionState from : values()) {
            for (MirrorPartitionState to : values()) {
                boolean legal = from == to || EXPECTED_TARGETS.get(from).contains(to);
                pairs.add(Arguments.of(from, to, legal));
            }
        }
        return pairs.stream();
    }

    @ParameterizedTest(name = "{0} -> {1}: legal={2}")
    @MethodSource("everyPair")
    void transitionTableShouldMatchTheDesign(MirrorPartitionState from, MirrorPartitionState to, boolean legal) {
        assertThat(from.canMoveTo(to)).isEqualTo(legal);
    }

    @Test
    void moveShouldCountTheStateEpochAndKeepThePreviousState() {
        Instant now = Instant.parse("2026-01-01T00:00:00Z");
        PartitionStatus status =
                PartitionStatus.initial(now).moveTo(LOG_TRUNCATION, null, now).moveTo(MIRRORING, null, now);

        assertThat(status.state()).isEqualTo(MIRRORING);
        assertThat(status.previousState()).isEqualTo(LOG_TRUNCATION);
        assertThat(status.stateEpoch()).isEqualTo(2);
    }

    @Test
    void illegalMoveShouldBeInvalidMirrorPartitionState() {
        PartitionStatus stopped = new PartitionStatus(STOPPED, STOPPING, 5, 0, -1, null, Instant.EPOCH, null, null);

        assertThatThrownBy(() -> stopped.moveTo(PAUSING, null, Instant.EPOCH))
                .isInstanceOfSatisfying(
                        MirrorException.class,
                        e -> assertThat(e.error()).isEqualTo(MirrorError.INVALID_MIRROR_PARTITION_STATE))
                .hasMessageContaining("STOPPED")
                .hasMessageContaining("PAUSING");
    }

    @Test
    void retriesShouldSurviveMovesUntilResetExplicitly() {
        PartitionStatus failed = new PartitionStatus(FAILED, MIRRORING, 3, 4, 7, "boom", Instant.EPOCH, null, null);

        PartitionStatus retried = failed.moveTo(LOG_TRUNCATION, null, Instant.EPOCH);
        PartitionStatus mirroring = retried.moveTo(MIRRORING, null, Instant.EPOCH);

        assertThat(retried.retryAttempt()).isEqualTo(4);
        assertThat(mirroring.retryAttempt()).isEqualTo(4);
        assertThat(mirroring.withRetryAttempt(0).retryAttempt()).isZero();
        assertThat(mirroring.lastMirroredEpoch()).isEqualTo(7);
        assertThat(mirroring.error()).isNull();
    }

    @Test
    void kipCodesShouldBeStable() {
        assertThat(Stream.of(values()).map(MirrorPartitionState::code)).containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8);
    }
}
