package io.clustermirror.mirror;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class MirrorProgressTest {

    private static MirrorProgress.Partition partition(int p, long lag, double recordsPerSecond, Double catchUp) {
        CatchUpWindow.Rates rates =
                new CatchUpWindow.Rates(recordsPerSecond * 100, recordsPerSecond, recordsPerSecond, catchUp, 30_000);
        return new MirrorProgress.Partition(
                new MirrorPartition("orders", p),
                PartitionProgress.of(MirrorPartitionState.MIRRORING, lag, null, rates));
    }

    @Test
    void theSummaryShouldAddUpAndTakeTheSlowestPartitionsEta() {
        MirrorProgress progress = MirrorProgress.of(
                List.of(
                        partition(0, 0, 10, 0.0), // caught up
                        partition(1, 10_000, 1_000, 500.0), // 20 s
                        partition(2, 90_000, 1_000, 1_000.0), // 90 s
                        partition(3, 20, 100, 0.0)), // in flight: caught up
                5);

        assertThat(progress.lag()).isEqualTo(100_020);
        assertThat(progress.recordsPerSecond()).isEqualTo(2_110.0);
        assertThat(progress.bytesPerSecond()).isEqualTo(211_000.0);
        assertThat(progress.etaSeconds()).isEqualTo(90);
        assertThat(progress.mirroringPartitions()).isEqualTo(4);
        assertThat(progress.slowest())
                .extracting(p -> p.partition().partition())
                .containsExactly(2, 1);
    }

    @Test
    void aPartitionNotCatchingUpShouldMakeTheMirrorsEtaUnknownAndComeFirst() {
        MirrorProgress progress = MirrorProgress.of(
                List.of(
                        partition(0, 90_000, 1_000, 1_000.0),
                        partition(1, 5_000, 10, -20.0),
                        partition(2, 8_000, 10, -20.0),
                        partition(3, 100, 10, 1.0)),
                3);

        assertThat(progress.etaSeconds()).isNull();
        assertThat(progress.slowest())
                .extracting(p -> p.partition().partition())
                .containsExactly(2, 1, 3);
    }

    @Test
    void aCaughtUpMirrorShouldHaveEtaZeroAndNoSlowPartitions() {
        MirrorProgress progress = MirrorProgress.of(List.of(partition(0, 0, 0, 0.0), partition(1, 0, 5, 0.0)), 5);

        assertThat(progress.etaSeconds()).isZero();
        assertThat(progress.slowest()).isEmpty();
    }

    @Test
    void aMirrorWithoutMirroringPartitionsShouldHaveNoEta() {
        MirrorProgress progress = MirrorProgress.of(List.of(), 5);

        assertThat(progress.etaSeconds()).isNull();
        assertThat(progress.lag()).isZero();
        assertThat(progress.slowest()).isEmpty();
    }
}
