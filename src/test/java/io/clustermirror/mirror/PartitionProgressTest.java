package io.clustermirror.mirror;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.mirror.TruncationProgress.Step;
import org.junit.jupiter.api.Test;

class PartitionProgressTest {

    private static final CatchUpWindow.Rates CATCHING_UP =
            new CatchUpWindow.Rates(2.5 * 1024 * 1024, 2_560.04, 2_560, 2_000.0, 30_000);

    private static TruncationProgress alignment(long done, long total, boolean complete) {
        return new TruncationProgress(Step.LOG_START_ALIGNMENT, complete, 5_000, 7_000, 0, done, done, total);
    }

    @Test
    void aPartitionInLogTruncationShouldShowItsStepAndHowFar() {
        PartitionProgress progress = PartitionProgress.of(
                MirrorPartitionState.LOG_TRUNCATION, 7_000, alignment(3_000, 5_000, false), CATCHING_UP);

        assertThat(progress.truncation().step()).isEqualTo(Step.LOG_START_ALIGNMENT);
        assertThat(progress.sentence()).isEqualTo("aligning to the source log start 5000: 3000 of 5000 offsets filled");
        // rates and ETA belong to MIRRORING only
        assertThat(progress.bytesPerSecond()).isNull();
        assertThat(progress.etaSeconds()).isNull();
    }

    @Test
    void theTruncationSentencesShouldNameTheOutcome() {
        assertThat(alignment(5_000, 5_000, true).sentence())
                .isEqualTo("aligned to the source log start 5000 (5000 offsets filled)");
        assertThat(new TruncationProgress(Step.LOG_START_ALIGNMENT, true, 0, 10, 0, 0, 0, 0).sentence())
                .isEqualTo("destination is empty at the source log start 0: mirroring starts there");
        assertThat(new TruncationProgress(Step.DIVERGENCE_CHECK, false, 0, 10, 0, 5, -1, -1).sentence())
                .isEqualTo("checking that the destination [0, 5) is a prefix of the source [0, 10)");
        assertThat(new TruncationProgress(Step.DIVERGENCE_CHECK, true, 0, 10, 0, 5, -1, -1).sentence())
                .isEqualTo("destination is a prefix of the source up to 5");
        assertThat(new TruncationProgress(Step.DIVERGENCE_SEARCH, false, 0, 10, 0, 50, 32, 50).sentence())
                .isEqualTo(
                        "searching where the destination [0, 50) diverges from the source: 32 of 50 offsets settled");
    }

    @Test
    void aMirroringPartitionShouldShowItsRatesAndEta() {
        PartitionProgress progress = PartitionProgress.of(
                MirrorPartitionState.MIRRORING,
                100_000,
                new TruncationProgress(Step.DIVERGENCE_CHECK, true, 0, 10, 0, 5, -1, -1),
                CATCHING_UP);

        assertThat(progress.bytesPerSecond()).isEqualTo(2_621_440.0);
        assertThat(progress.recordsPerSecond()).isEqualTo(2_560.0);
        assertThat(progress.etaSeconds()).isEqualTo(50);
        assertThat(progress.sentence())
                .isEqualTo("mirroring 2,560 records/s, 2.5 MiB/s over the last 30 s; 100000 records behind, caught up "
                        + "in about 50 s");
    }

    @Test
    void aMirroringPartitionShouldSayWhenCaughtUpOrNotCatchingUp() {
        assertThat(PartitionProgress.of(MirrorPartitionState.MIRRORING, 0, null, CATCHING_UP)
                        .sentence())
                .endsWith("; caught up");
        assertThat(PartitionProgress.of(MirrorPartitionState.MIRRORING, 0, null, null)
                        .sentence())
                .isEqualTo("mirroring (rates not measured yet); caught up");
        CatchUpWindow.Rates falling = new CatchUpWindow.Rates(1_000, 10, 10, -5.0, 30_000);
        PartitionProgress behind = PartitionProgress.of(MirrorPartitionState.MIRRORING, 400, null, falling);
        assertThat(behind.etaSeconds()).isNull();
        assertThat(behind.sentence())
                .isEqualTo(
                        "mirroring 10.0 records/s, 1000 B/s over the last 30 s; 400 records behind and not catching up");
    }

    @Test
    void aResumeCheckWhileMirroringShouldShowTheCheck() {
        TruncationProgress check = new TruncationProgress(Step.DIVERGENCE_CHECK, false, 0, 10, 0, 5, -1, -1);
        assertThat(PartitionProgress.of(MirrorPartitionState.MIRRORING, 5, check, null)
                        .sentence())
                .isEqualTo(check.sentence());
    }

    @Test
    void otherStatesShouldShowTheLastCheckOrNothing() {
        assertThat(PartitionProgress.of(MirrorPartitionState.PAUSED, 10, alignment(5_000, 5_000, true), CATCHING_UP)
                        .sentence())
                .isEqualTo("aligned to the source log start 5000 (5000 offsets filled)");
        assertThat(PartitionProgress.of(MirrorPartitionState.UNKNOWN, -1, null, null)
                        .sentence())
                .isNull();
    }
}
