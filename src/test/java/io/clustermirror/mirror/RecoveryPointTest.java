package io.clustermirror.mirror;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.mirror.RecoveryPoint.Sighting;
import org.junit.jupiter.api.Test;

class RecoveryPointTest {

    private static final long NOW = 1_000_000;

    @Test
    void aDestinationAtTheSourcesEndShouldBeZeroEvenWhenTheLastRecordIsOld() {
        assertThat(RecoveryPoint.of(NOW, 500, 500, -1, null)).isEqualTo(RecoveryPoint.ZERO);
        assertThat(RecoveryPoint.of(NOW, 0, 0, -1, new Sighting(0, 0))).isEqualTo(RecoveryPoint.ZERO);
    }

    @Test
    void aDestinationBehindShouldBeTheAgeOfTheOldestRecordNotMirrored() {
        RecoveryPoint rpo = RecoveryPoint.of(NOW, 510, 500, NOW - 7_250, null);

        assertThat(rpo).isEqualTo(new RecoveryPoint(7_250, false));
        assertThat(rpo.seconds()).isEqualTo(7.25);
    }

    @Test
    void aRecordTimestampedInTheFutureShouldGiveZeroNotANegativeAge() {
        assertThat(RecoveryPoint.of(NOW, 510, 500, NOW + 3_000, null)).isEqualTo(new RecoveryPoint(0, false));
    }

    @Test
    void aDestinationBehindWhoseOldestRecordIsNotReadYetShouldBeUnknown() {
        assertThat(RecoveryPoint.of(NOW, 510, 500, -1, null)).isNull();
    }

    @Test
    void anUnknownDestinationEndShouldBeUnknown() {
        assertThat(RecoveryPoint.of(NOW, 510, -1, NOW - 5, null)).isNull();
    }

    @Test
    void anUnreachableSourceThatWasCaughtUpShouldBoundByTheTimeSinceItWasSeen() {
        RecoveryPoint rpo = RecoveryPoint.of(NOW, -1, 500, -1, new Sighting(500, NOW - 42_000));

        assertThat(rpo).isEqualTo(new RecoveryPoint(42_000, true));
    }

    @Test
    void anUnreachableSourceThatWasAheadShouldBoundByTheOlderOfTheSightingAndTheOldestRecord() {
        // the destination was 10 records behind when the source was last seen, 42 s ago; the first of them is 60 s old
        assertThat(RecoveryPoint.of(NOW, -1, 500, NOW - 60_000, new Sighting(510, NOW - 42_000)))
                .isEqualTo(new RecoveryPoint(60_000, true));
        // a record at the destination end that is younger than the sighting (a clock ahead) does not lower the bound
        assertThat(RecoveryPoint.of(NOW, -1, 500, NOW - 1_000, new Sighting(510, NOW - 42_000)))
                .isEqualTo(new RecoveryPoint(42_000, true));
        // a timestamp read before the destination caught up to the sighting is not the oldest not mirrored
        assertThat(RecoveryPoint.of(NOW, -1, 510, NOW - 60_000, new Sighting(510, NOW - 42_000)))
                .isEqualTo(new RecoveryPoint(42_000, true));
    }

    @Test
    void aSourceNeverSeenShouldBeUnknown() {
        assertThat(RecoveryPoint.of(NOW, -1, 500, NOW - 5_000, null)).isNull();
    }

    @Test
    void theLaterSightingShouldWin() {
        Sighting early = new Sighting(10, 100);
        Sighting late = new Sighting(5, 200);

        assertThat(Sighting.later(early, late)).isEqualTo(late);
        assertThat(Sighting.later(late, early)).isEqualTo(late);
        assertThat(Sighting.later(null, early)).isEqualTo(early);
        assertThat(Sighting.later(early, null)).isEqualTo(early);
    }
}
