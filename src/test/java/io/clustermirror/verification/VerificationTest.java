package io.clustermirror.verification;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.clustermirror.kafka.WireClient;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.VerificationReport;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.apache.kafka.clients.MockClient;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.Test;

/** {@link Verification}'s bookkeeping without clusters: a verification whose round was dropped does not run forever. */
class VerificationTest {

    /** A clock the test moves. */
    private static final class TestClock extends Clock {
        private long millis = 1_800_000_000_000L;

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(millis);
        }
    }

    @Test
    void aVerificationWhoseTasksWereDroppedShouldEndFailedOnceItsRoundIsLongOverdue() {
        // Given a verification whose first step the mirror's workers dropped (its runtime was closed)
        TestClock clock = new TestClock();
        List<Runnable> dropped = new ArrayList<>();
        List<VerificationReport> finished = new CopyOnWriteArrayList<>();
        List<Thread> toldOn = new CopyOnWriteArrayList<>();
        Verification verification = new Verification(
                "v1",
                "m",
                List.of(new MirrorPartition("orders", 0)),
                Map.of(),
                new Verification.Clusters(null, null, null, null, 1_000),
                dropped::add,
                () -> Long.MAX_VALUE,
                toldOf(report -> {
                    finished.add(report);
                    toldOn.add(Thread.currentThread());
                }),
                clock);
        verification.start();
        assertThat(dropped).hasSize(1);

        // When it is read up to the limit, Then it is still RUNNING
        clock.millis += Verification.STALLED_AFTER_MS;
        assertThat(verification.report().state()).isEqualTo(VerificationReport.State.RUNNING);
        assertThat(finished).isEmpty();

        // When it is read past it, Then it ended FAILED, its partition INCOMPLETE, and its owner was told once
        clock.millis += 1;
        VerificationReport report = verification.report();
        assertThat(report.state()).isEqualTo(VerificationReport.State.FAILED);
        assertThat(report.verdict()).isNull();
        assertThat(report.failure()).contains("did not start within 600 s");
        assertThat(report.finishedAt()).isEqualTo(clock.instant());
        assertThat(report.partitions())
                .singleElement()
                .satisfies(p -> assertThat(p.result()).isEqualTo(VerificationReport.Result.INCOMPLETE));
        assertThat(verification.report().state()).isEqualTo(VerificationReport.State.FAILED);
        // told off the reader's thread (an HTTP event loop): its clients close there too
        await().atMost(Duration.ofSeconds(10)).until(() -> finished.size() == 1);
        assertThat(finished.get(0).state()).isEqualTo(VerificationReport.State.FAILED);
        assertThat(finished.get(0).finishedAt()).isEqualTo(report.finishedAt());
        assertThat(toldOn).doesNotContain(Thread.currentThread());
    }

    @Test
    void aCancelledVerificationShouldEndFailedWithItsReasonAndCloseTheClientsALateStepMakes() {
        // Given a verification whose first step is queued, not run yet
        TestClock clock = new TestClock();
        MockClient sourceWire = new MockClient(Time.SYSTEM);
        MockClient destinationWire = new MockClient(Time.SYSTEM);
        List<Runnable> queued = new ArrayList<>();
        List<VerificationReport> finished = new CopyOnWriteArrayList<>();
        Verification verification = new Verification(
                "v2",
                "m",
                List.of(new MirrorPartition("orders", 0)),
                Map.of(),
                new Verification.Clusters(
                        null,
                        null,
                        () -> WireClient.over("source", sourceWire, 1_000),
                        () -> WireClient.over("destination", destinationWire, 1_000),
                        1_000),
                queued::add,
                () -> Long.MAX_VALUE,
                toldOf(finished::add),
                clock);
        verification.start();

        // When its mirror is deleted, and then the queued step runs after all (it makes the clients)
        verification.cancel("the mirror was deleted, or moved to another instance");
        await().atMost(Duration.ofSeconds(10)).until(() -> finished.size() == 1);
        queued.forEach(Runnable::run);

        // Then it ended FAILED with that reason, its owner was told once, and the clients the late step made are closed
        assertThat(verification.report().state()).isEqualTo(VerificationReport.State.FAILED);
        assertThat(verification.report().failure()).isEqualTo("the mirror was deleted, or moved to another instance");
        assertThat(finished).hasSize(1);
        assertThat(sourceWire.active()).isFalse();
        assertThat(destinationWire.active()).isFalse();
    }

    @Test
    void aDifferenceFoundShouldStandAsTheVerdictAlsoWhenTheRunFailedAfterIt() {
        var different = partition(VerificationReport.Result.DIFFERENT);
        var identical = partition(VerificationReport.Result.IDENTICAL);
        var incomplete = partition(VerificationReport.Result.INCOMPLETE);

        assertThat(Verification.verdict(VerificationReport.State.RUNNING, List.of(different)))
                .isNull();
        assertThat(Verification.verdict(VerificationReport.State.FAILED, List.of(different, incomplete)))
                .isEqualTo(VerificationReport.Verdict.DIFFERENT);
        assertThat(Verification.verdict(VerificationReport.State.FAILED, List.of(identical, incomplete)))
                .isNull();
        assertThat(Verification.verdict(VerificationReport.State.DONE, List.of(identical)))
                .isEqualTo(VerificationReport.Verdict.IDENTICAL);
        assertThat(Verification.verdict(VerificationReport.State.DONE, List.of(identical, different)))
                .isEqualTo(VerificationReport.Verdict.DIFFERENT);
    }

    /** A listener that hears only of the end. */
    private static Verification.Listener toldOf(Consumer<VerificationReport> finished) {
        return new Verification.Listener() {
            @Override
            public void verified(MirrorPartition partition, long upTo) {}

            @Override
            public void differed(MirrorPartition partition) {}

            @Override
            public void finished(VerificationReport report) {
                finished.accept(report);
            }
        };
    }

    private static VerificationReport.Partition partition(VerificationReport.Result result) {
        return new VerificationReport.Partition(new MirrorPartition("orders", 0), 0, 10, 10, 1, 10, result, -1, null);
    }
}
