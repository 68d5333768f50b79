package io.clustermirror.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.fetch.DataPlane;
import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.LossReport;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionStatus;
import io.clustermirror.mirror.PreservedTail;
import io.clustermirror.mirror.TopicDivergence;
import io.clustermirror.mirror.TruncationProgress;
import io.clustermirror.truncation.LogTruncation;
import io.clustermirror.truncation.PrefixCheck;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.jboss.logmanager.formatters.PatternFormatter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The partition lifecycle's transitions, driven through fakes of the coordinator's state ({@link PartitionLifecycle.Host})
 * and of a mirror's running parts ({@link MirrorParts}): no cluster, no Quarkus, milliseconds. The coordinator thread is
 * the real one; blocking steps run inline on it (the fakes never block).
 */
class PartitionLifecycleTest {

    private static final Instant NOW = Instant.parse("2026-12-01T00:00:00Z");
    private static final MirrorPartition T0 = new MirrorPartition("t", 0);
    private static final MirrorPartition T1 = new MirrorPartition("t", 1);
    private static final MirrorPartition U0 = new MirrorPartition("u", 0);
    private static final Duration FLOW_DEADLINE = Duration.ofMillis(200);

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final CoordinatorThread thread = new CoordinatorThread();
    private final FakeHost host = new FakeHost();
    private final FakeParts parts = new FakeParts();
    /** No automatic retries unless a test asks for them: a FAILED partition stays as it is. */
    private PartitionLifecycle lifecycle = lifecycle(0);

    @AfterEach
    void stopThread() {
        thread.shutdown(() -> {});
    }

    @Test
    void aPrefixShouldStartMirroringAtTheDestinationsEnd() {
        host.put(T0, truncating());
        parts.answer(T0, new LogTruncation.Ready(42, 7, -1));

        lifecycle.truncate("m", T0);
        drain();

        assertThat(host.state(T0)).isEqualTo(MirrorPartitionState.MIRRORING);
        assertThat(parts.data.calls).containsExactly("add t-0 at 42 epoch 7");
    }

    @Test
    void thePartitionShouldJoinTheDataPlaneWithTheSourceEndItsCheckRead() {
        host.put(T0, truncating());
        parts.answer(T0, new LogTruncation.Ready(42, 7, 1000));

        lifecycle.truncate("m", T0);
        drain();

        assertThat(parts.data.calls).containsExactly("add t-0 at 42 epoch 7 source end 1000");
    }

    @Test
    void aPartitionItsDestinationDoesNotServeYetShouldBeCheckedAgainNotFailed() {
        // just created: the destination broker has not applied the topic yet
        Instant entered = Instant.now();
        host.put(T0, PartitionStatus.initial(entered).moveTo(MirrorPartitionState.LOG_TRUNCATION, null, entered));
        parts.answer(T0, new LogTruncation.Ready(0, -1, -1));
        AtomicInteger calls = new AtomicInteger();
        parts.beforeAnswer = () -> {
            if (calls.getAndIncrement() < 2) {
                throw new IllegalStateException(
                        new UnknownTopicOrPartitionException("This server does not host this topic-partition."));
            }
        };

        lifecycle.truncate("m", T0);
        until(() -> host.state(T0) == MirrorPartitionState.MIRRORING);

        assertThat(host.history(T0)).containsExactly(MirrorPartitionState.MIRRORING);
        assertThat(parts.checks).hasSize(3);
        assertThat(parts.data.calls).containsExactly("add t-0 at 0 epoch -1");
        assertThat(registry.find("cluster.mirror.partition.failures").counter())
                .satisfiesAnyOf(
                        c -> assertThat(c).isNull(), c -> assertThat(c.count()).isZero());
    }

    @Test
    void aPartitionStillNotServedAfterTheGraceShouldFailWithTheReason() {
        host.put(T0, truncating()); // entered LOG_TRUNCATION long ago
        parts.failing = new IllegalStateException(
                new UnknownTopicOrPartitionException("This server does not host this topic-partition."));

        lifecycle.truncate("m", T0);
        drain();

        assertThat(host.state(T0)).isEqualTo(MirrorPartitionState.FAILED);
        assertThat(host.status(T0).error())
                .startsWith("log truncation could not complete: ")
                .contains("does not host this topic-partition");
        assertThat(parts.checks).hasSize(1);
    }

    @Test
    void aCheckThatAnswersAfterAReloadResumedThePartitionShouldGiveWayToTheResumedCheck() {
        host.put(T0, truncating());
        parts.answer(T0, new LogTruncation.Ready(42, 7, -1));
        AtomicInteger calls = new AtomicInteger();
        parts.beforeAnswer = () -> {
            if (calls.getAndIncrement() == 0) {
                // the state is replayed while this check runs (its runtime closed under it): the reload resumes the
                // partition from its state, LOG_TRUNCATION at the same state epoch, with a check of its own
                lifecycle.resume("m");
                throw new IllegalStateException("interrupted: the mirror's runtime was closed");
            }
        };

        lifecycle.truncate("m", T0);
        drain();

        assertThat(host.history(T0)).doesNotContain(MirrorPartitionState.FAILED);
        assertThat(host.state(T0)).isEqualTo(MirrorPartitionState.MIRRORING);
        assertThat(parts.checks).hasSize(2);
        assertThat(parts.data.calls).containsExactly("add t-0 at 42 epoch 7");
    }

    @Test
    void aDivergedDestinationUnderPolicyFailShouldFailWithTheReasonAndRetryUntilTheAttemptsAreUsedUp() {
        lifecycle = lifecycle(2);
        host.put(T0, truncating());
        parts.answer(T0, new LogTruncation.Diverged("offset 3 differs"));

        lifecycle.truncate("m", T0);
        // attempts 0, 1 and 2 (RetryPolicy max 2) each fail again; then the partition waits for an operator
        until(() -> host.status(T0).retryAttempt() == -1);

        PartitionStatus failed = host.status(T0);
        assertThat(failed.state()).isEqualTo(MirrorPartitionState.FAILED);
        assertThat(failed.error()).isEqualTo("offset 3 differs");
        assertThat(parts.checks).hasSize(3);
        assertThat(parts.data.calls).doesNotContain("add t-0 at 0 epoch -1");
        assertThat(registry.get("cluster.mirror.partition.failures").counter().count())
                .isEqualTo(3);
        assertThat(parts.recreated).isEmpty();
    }

    @Test
    void aFailureThatWillBeRetriedShouldBeAWarningAndOnlyTheLastOneAnError() {
        lifecycle = lifecycle(2);
        host.put(T0, truncating());
        parts.answer(T0, new LogTruncation.Unsupported("source unreachable"));

        try (LogCapture log = new LogCapture()) {
            lifecycle.truncate("m", T0);
            until(() -> host.status(T0).retryAttempt() == -1);

            assertThat(log.lines())
                    .containsExactly(
                            "WARN Mirror m: t-0 FAILED, retried automatically (attempt 1 of 2): source unreachable",
                            "WARN Mirror m: t-0 FAILED, retried automatically (attempt 2 of 2): source unreachable",
                            "ERROR Mirror m: t-0 FAILED, no automatic retry left (topics:recover starts it again): "
                                    + "source unreachable");
        }
    }

    @Test
    void aFailureWithoutAutomaticRetriesShouldBeAnError() {
        host.put(T0, truncating());
        parts.answer(T0, new LogTruncation.Unsupported("source unreachable"));

        try (LogCapture log = new LogCapture()) {
            lifecycle.truncate("m", T0);
            drain();

            assertThat(log.lines())
                    .containsExactly("ERROR Mirror m: t-0 FAILED, no automatic retry left (topics:recover starts it "
                            + "again): source unreachable");
        }
    }

    @Test
    void aFailedPartitionThatMirrorsAgainShouldStartItsRetriesFromZero() {
        lifecycle = lifecycle(2);
        host.put(T0, truncating());
        parts.answer(T0, new LogTruncation.Unsupported("source unreachable"), new LogTruncation.Ready(5, 0, -1));

        lifecycle.truncate("m", T0);
        until(() -> host.state(T0) == MirrorPartitionState.MIRRORING);
        lifecycle.listener("m").onAppended(T0, 1, 100);
        drain();

        assertThat(host.status(T0).retryAttempt()).isZero();
        assertThat(parts.data.calls).containsExactly("remove t-0 keeping", "add t-0 at 5 epoch 0");
    }

    @Test
    void aCheckThatThrowsShouldFailThePartitionWithTheCause() {
        host.put(T0, truncating());
        parts.failing = new IllegalStateException("broker gone");

        lifecycle.truncate("m", T0);
        drain();

        assertThat(host.status(T0).error())
                .isEqualTo("log truncation could not complete: java.lang.IllegalStateException: broker gone");
    }

    @Test
    void aPolicyRecreateShouldTakeTheWholeTopicOutRecreateItAndStartEveryPartitionAgain() {
        host.mirror = mirrorWith(Map.of(MirrorConfig.TRUNCATION_POLICY, "recreate"));
        host.put(T0, truncating());
        host.put(T1, mirroring());
        host.put(U0, mirroring());
        parts.answer(T0, new LogTruncation.Diverged("offset 3 differs"), new LogTruncation.Ready(0, -1, -1));
        parts.answer(T1, new LogTruncation.Ready(0, -1, -1));

        lifecycle.truncate("m", T0);
        until(() ->
                host.state(T0) == MirrorPartitionState.MIRRORING && host.state(T1) == MirrorPartitionState.MIRRORING);

        assertThat(parts.recreated).containsExactly("t");
        // written as recreated, with nothing preserved: what verifications confirmed of its old log goes with it
        assertThat(host.recreatedTopics).containsExactly("t");
        assertThat(host.divergences).isEmpty();
        assertThat(parts.data.calls)
                .contains(
                        "remove t-0 aborting", "remove t-1 aborting", "add t-0 at 0 epoch -1", "add t-1 at 0 epoch -1");
        assertThat(host.history(T1))
                .containsSubsequence(
                        MirrorPartitionState.FAILED,
                        MirrorPartitionState.LOG_TRUNCATION,
                        MirrorPartitionState.MIRRORING);
        assertThat(host.history(U0)).isEmpty(); // another topic is not touched
    }

    @Test
    void aRecreateShouldFirstPreserveWhatOnlyTheDestinationHoldsAndReportIt() {
        host.mirror = mirrorWith(Map.of(MirrorConfig.TRUNCATION_POLICY, "recreate"));
        host.put(T0, truncating());
        host.put(T1, mirroring());
        parts.answer(T0, new LogTruncation.Diverged("offset 3 differs"), new LogTruncation.Ready(0, -1, -1));
        parts.answer(T1, new LogTruncation.Ready(0, -1, -1));
        parts.tails.put(T0, new PreservedTail("t", 0, 3, 7, 4, "__diverged.t"));

        lifecycle.truncate("m", T0);
        until(() ->
                host.state(T0) == MirrorPartitionState.MIRRORING && host.state(T1) == MirrorPartitionState.MIRRORING);

        assertThat(parts.preservations).containsExactly(T0, T1); // every partition, before the topic goes
        assertThat(parts.recreated).containsExactly("t");
        assertThat(host.divergences).singleElement().satisfies(d -> {
            assertThat(d.topic()).isEqualTo("t");
            assertThat(d.partitions()).containsExactly(new PreservedTail("t", 0, 3, 7, 4, "__diverged.t"));
        });
        assertThat(registry.get("cluster.mirror.diverged.records").counter().count())
                .isEqualTo(4);
    }

    @Test
    void aTailThatCannotBePreservedShouldKeepTheTopicAndFailNamingWhy() {
        host.mirror = mirrorWith(Map.of(MirrorConfig.TRUNCATION_POLICY, "recreate"));
        host.put(T0, truncating());
        parts.answer(T0, new LogTruncation.Diverged("offset 3 differs"));
        parts.preservationFailure = new IllegalStateException("not authorized to create __diverged.t");

        lifecycle.truncate("m", T0);
        until(() -> host.status(T0).error() != null && host.status(T0).error().startsWith("the records"));

        assertThat(host.status(T0).error())
                .isEqualTo(
                        "the records only the destination holds could not be preserved, "
                                + "so topic t was not recreated: java.lang.IllegalStateException: not authorized to create __diverged.t");
        assertThat(parts.recreated).isEmpty();
    }

    @Test
    void aRecreateThatFailsShouldLeaveThePartitionsFailedNamingIt() {
        host.mirror = mirrorWith(Map.of(MirrorConfig.TRUNCATION_POLICY, "recreate"));
        host.put(T0, truncating());
        parts.answer(T0, new LogTruncation.Diverged("offset 3 differs"));
        parts.recreateFailure = new IllegalStateException("not authorized");

        lifecycle.truncate("m", T0);
        until(() -> host.status(T0).error() != null && host.status(T0).error().startsWith("recreating"));

        assertThat(host.state(T0)).isEqualTo(MirrorPartitionState.FAILED);
        assertThat(host.status(T0).error())
                .isEqualTo("recreating destination topic t failed: java.lang.IllegalStateException: not authorized");
    }

    @Test
    void aRecreateWhosePartitionsCannotLeaveTheDataPlaneShouldKeepTheTopicAndFailNamingWhy() {
        host.mirror = mirrorWith(Map.of(MirrorConfig.TRUNCATION_POLICY, "recreate"));
        host.put(T0, truncating());
        parts.answer(T0, new LogTruncation.Diverged("offset 3 differs"));
        parts.data.removalFailure = new IllegalStateException("the data plane of m died: stuck");

        lifecycle.truncate("m", T0);
        until(() -> host.status(T0).error() != null && host.status(T0).error().startsWith("topic t was not"));

        assertThat(host.state(T0)).isEqualTo(MirrorPartitionState.FAILED);
        assertThat(host.status(T0).error())
                .isEqualTo("topic t was not recreated: its partitions did not leave the data plane: "
                        + "java.lang.IllegalStateException: the data plane of m died: stuck");
        assertThat(parts.recreated).isEmpty();
    }

    @Test
    void aDataPlaneFailureShouldFailAMirroringPartitionButKeepAStoppingOneStopping() {
        host.put(T0, mirroring());
        host.put(T1, mirroring().moveTo(MirrorPartitionState.STOPPING, null, NOW));

        lifecycle.listener("m").onFailed(T0, "record at 9 landed at 10");
        lifecycle.listener("m").onFailed(T1, "produce failed");
        drain();

        assertThat(host.status(T0).state()).isEqualTo(MirrorPartitionState.FAILED);
        assertThat(host.status(T0).error()).isEqualTo("record at 9 landed at 10");
        assertThat(parts.data.calls).contains("remove t-0 keeping");
        assertThat(host.status(T1).state()).isEqualTo(MirrorPartitionState.STOPPING);
        assertThat(host.status(T1).error()).isEqualTo("produce failed");
    }

    @Test
    void epochFencingShouldCheckAgainstTheEpochsEndAndMirrorOnWhenTheDestinationIsStillAPrefix() {
        host.put(T0, mirroring());
        parts.data.add(T0, 10, 3, -1);
        parts.fencedOutcome = new LogTruncation.Ready(20, 4, -1);

        lifecycle.listener("m").onEpochFenced(T0, "epoch 3 ends at 20 on the source", 20);
        drain();

        assertThat(host.history(T0))
                .containsExactly(MirrorPartitionState.EPOCH_FENCING, MirrorPartitionState.MIRRORING);
        assertThat(parts.fencingEnds).containsExactly(20L);
        assertThat(parts.data.calls)
                .containsExactly("add t-0 at 10 epoch 3", "remove t-0 keeping", "add t-0 at 20 epoch 4");
        assertThat(registry.get("cluster.mirror.partition.epoch.fencings")
                        .counter()
                        .count())
                .isEqualTo(1);
    }

    @Test
    void epochFencingShouldFailThePartitionWhenTheDestinationHoldsWhatTheSourceLost() {
        host.put(T0, mirroring());
        parts.fencedOutcome =
                new LogTruncation.Diverged("the destination holds offsets [20, 25) that the source no longer has");

        lifecycle.listener("m").onEpochFenced(T0, "unclean election", 20);
        drain();

        assertThat(host.state(T0)).isEqualTo(MirrorPartitionState.FAILED);
        assertThat(host.status(T0).error())
                .startsWith("epoch fencing (unclean election): the destination holds offsets [20, 25)");
    }

    @Test
    void pauseShouldKeepTheLastMirroredEpochAndResumeShouldCheckBeforeMirroringOn() {
        host.put(T0, mirroring().moveTo(MirrorPartitionState.PAUSING, null, NOW));
        parts.data.lastProgress = new DataPlane.Progress(50, 40, 6, List.of());

        lifecycle.act("m", TopicVerb.PAUSE, T0);
        drain();
        assertThat(host.status(T0).state()).isEqualTo(MirrorPartitionState.PAUSED);
        assertThat(host.status(T0).lastMirroredEpoch()).isEqualTo(6);
        assertThat(parts.data.calls).containsExactly("remove t-0 keeping");

        host.put(T0, host.status(T0).moveTo(MirrorPartitionState.MIRRORING, null, NOW));
        parts.answer(T0, new LogTruncation.Ready(40, 6, -1));
        lifecycle.act("m", TopicVerb.RESUME, T0);
        drain();

        assertThat(parts.checks).containsExactly(T0);
        assertThat(parts.data.calls).containsExactly("remove t-0 keeping", "add t-0 at 40 epoch 6");
        // and the data plane was told the partition is coming back before its check, so its lanes are free for it
        assertThat(parts.data.joinings).containsExactly(1);
    }

    @Test
    void aStopShouldRestoreTheTopicOnceItsLastPartitionIsOutAndSettleStopped() {
        host.put(T0, mirroring().moveTo(MirrorPartitionState.STOPPING, null, NOW));
        host.put(T1, mirroring());

        lifecycle.stopPartitions("m", List.of(T0));
        drain();
        assertThat(host.state(T0)).isEqualTo(MirrorPartitionState.STOPPED);
        assertThat(parts.handedBack).isEmpty(); // t-1 still mirrors: the topic keeps its guard

        host.put(T1, host.status(T1).moveTo(MirrorPartitionState.STOPPING, null, NOW));
        parts.restoreFailure = new IllegalStateException("configs not writable");
        lifecycle.stopPartitions("m", List.of(T1));
        drain();

        // writable first, whatever the configs do: an unplanned failover's source cannot be read for them
        assertThat(parts.handedBack).containsExactly("guard t", "configs t");
        assertThat(host.state(T1)).isEqualTo(MirrorPartitionState.STOPPED);
        assertThat(host.status(T1).error())
                .isEqualTo(
                        "mirror-owned configs of the destination topic could not be restored: java.lang.IllegalStateException: configs not writable");
        assertThat(parts.data.calls).containsExactly("remove t-0 aborting", "remove t-1 aborting");
    }

    @Test
    void aRestartDuringAStopShouldHandTheTopicBackOnceAllItsPartitionsAreOut() {
        // both partitions of t were STOPPING when the service went down
        host.put(T0, mirroring().moveTo(MirrorPartitionState.STOPPING, null, NOW));
        host.put(T1, mirroring().moveTo(MirrorPartitionState.STOPPING, null, NOW));

        thread.run("resume", () -> lifecycle.resume("m"));
        drain();

        // stopped one by one, each saw the other still STOPPING and neither handed t back: read-only for good
        assertThat(host.state(T0)).isEqualTo(MirrorPartitionState.STOPPED);
        assertThat(host.state(T1)).isEqualTo(MirrorPartitionState.STOPPED);
        assertThat(parts.handedBack).containsExactly("guard t", "configs t");
    }

    @Test
    void aStopOfSeveralTopicsShouldReadTheSourceOnceAndMakeEveryTopicWritableBeforeAnyConfigIsRestored() {
        host.put(T0, mirroring().moveTo(MirrorPartitionState.STOPPING, null, NOW));
        host.put(T1, mirroring().moveTo(MirrorPartitionState.STOPPING, null, NOW));
        host.put(U0, mirroring().moveTo(MirrorPartitionState.STOPPING, null, NOW));

        lifecycle.stopPartitions("m", List.of(T0, T1, U0));
        drain();

        // one read for the loss reports of all (with the source gone, one timeout), then the guards, then the configs
        assertThat(host.lossReads).containsExactly(Set.of(T0, T1, U0));
        assertThat(parts.handedBack).containsExactly("guard t", "guard u", "configs t", "configs u");
        assertThat(List.of(host.state(T0), host.state(T1), host.state(U0))).containsOnly(MirrorPartitionState.STOPPED);
        assertThat(host.status(U0).error()).isNull();
    }

    @Test
    void aStopWhoseConfigsTimeOutShouldMakeEveryTopicWritableAndWaitOutTheSourceOnceForAllTheirConfigs() {
        host.put(T0, mirroring().moveTo(MirrorPartitionState.STOPPING, null, NOW));
        host.put(U0, mirroring().moveTo(MirrorPartitionState.STOPPING, null, NOW));
        host.loss = SOURCE_GONE;
        parts.restoreFailure =
                new ExecutionException(new org.apache.kafka.common.errors.TimeoutException("describeTopics timed out"));

        lifecycle.stopPartitions("m", List.of(T0, U0));
        drain();

        // the source gone: every topic writable, and one call for the configs of both (one timeout, not one each)
        assertThat(parts.handedBack).containsExactly("guard t", "guard u", "configs t", "configs u");
        assertThat(parts.restoreCalls).containsExactly(List.of("t", "u"));
        assertThat(host.status(T0).lossAtStop()).isEqualTo(SOURCE_GONE);
        assertThat(List.of(host.status(T0).error(), host.status(U0).error()))
                .containsOnly("mirror-owned configs of the destination topic could not be restored: "
                        + "org.apache.kafka.common.errors.TimeoutException: describeTopics timed out");
    }

    @Test
    void aStopWhoseConfigsCannotBeAskedForShouldSaySoForEachTopic() {
        host.put(T0, mirroring().moveTo(MirrorPartitionState.STOPPING, null, NOW));
        host.put(U0, mirroring().moveTo(MirrorPartitionState.STOPPING, null, NOW));
        parts.restoreThrown = new IllegalStateException("admin closed");

        lifecycle.stopPartitions("m", List.of(T0, U0));
        drain();

        assertThat(List.of(host.state(T0), host.state(U0))).containsOnly(MirrorPartitionState.STOPPED);
        assertThat(List.of(host.status(T0).error(), host.status(U0).error()))
                .containsOnly("mirror-owned configs of the destination topic could not be restored: "
                        + "java.lang.IllegalStateException: admin closed");
    }

    @Test
    void aPromotedTopicWhoseGuardCannotBeLiftedShouldSaySoFirstAndKeepThePromoteAsItsReason() {
        host.put(T0, mirroring().moveTo(MirrorPartitionState.STOPPING, TopicPromotes.PROMOTED, NOW));
        parts.guardFailure = new IllegalStateException("ACLs not writable");

        lifecycle.stopPartitions("m", List.of(T0));
        drain();

        // the reason says the topic is writable here, which the failed lift makes untrue: what is true comes first
        assertThat(host.state(T0)).isEqualTo(MirrorPartitionState.STOPPED);
        assertThat(host.status(T0).error())
                .isEqualTo("the destination topic is still read-only: its guard ACL (DENY WRITE for User:*) could not "
                        + "be deleted: java.lang.IllegalStateException: ACLs not writable; "
                        + TopicPromotes.PROMOTED);
    }

    @Test
    void aDataPlaneFailureWhileStoppingShouldFollowTheStopsReasonAndLeaveItsWaitAlone() {
        host.put(T0, mirroring().moveTo(MirrorPartitionState.STOPPING, "source topic deleted", NOW));
        parts.data.removalsHang = true;
        lifecycle.stopPartitions("m", List.of(T0));
        until(() -> host.status(T0).waiting() != null);
        String waiting = host.status(T0).waiting();

        lifecycle.listener("m").onFailed(T0, "abort of an open transaction failed");
        lifecycle.listener("m").onFailed(T0, "abort of an open transaction failed"); // said and written once
        lifecycle.listener("m").onFailed(T0, null); // an exception without a message
        drain();

        assertThat(host.state(T0)).isEqualTo(MirrorPartitionState.STOPPING);
        assertThat(host.status(T0).error())
                .isEqualTo("source topic deleted; abort of an open transaction failed; the data plane failed without "
                        + "a message");
        assertThat(host.status(T0).waiting()).isEqualTo(waiting);
        assertThat(host.history(T0))
                .containsExactly(
                        MirrorPartitionState.STOPPING, MirrorPartitionState.STOPPING, MirrorPartitionState.STOPPING);
    }

    @Test
    void aStopOfATopicTheSourceNoLongerHasShouldStillRestoreItsConfigsAndKeepItsReason() {
        // the metadata sync stops a topic deleted on the source: its ends cannot be read there, its configs can
        host.put(T0, mirroring().moveTo(MirrorPartitionState.STOPPING, "source topic deleted", NOW));
        host.loss = SOURCE_GONE;

        lifecycle.stopPartitions("m", List.of(T0));
        drain();

        assertThat(parts.handedBack).containsExactly("guard t", "configs t");
        assertThat(host.status(T0).error()).isEqualTo("source topic deleted");
    }

    @Test
    void theTopicsOfAStopThatComeOutOfTheDataPlaneMomentsApartShouldBeHandedBackTogether() {
        host.put(T0, mirroring().moveTo(MirrorPartitionState.STOPPING, null, NOW));
        host.put(U0, mirroring().moveTo(MirrorPartitionState.STOPPING, null, NOW));
        CompletableFuture<DataPlane.Progress> t0 = new CompletableFuture<>();
        parts.data.hanging.put(T0, t0);

        lifecycle.stopPartitions("m", List.of(T0, U0)); // u-0 is out at once
        t0.complete(null); // t-0 a moment later
        until(() -> host.state(T0) == MirrorPartitionState.STOPPED && host.state(U0) == MirrorPartitionState.STOPPED);

        // one source read for both (with the source gone, one wait), not one per topic
        assertThat(host.lossReads).containsExactly(Set.of(T0, U0));
        assertThat(parts.handedBack).containsExactly("guard t", "guard u", "configs t", "configs u");
    }

    @Test
    void aTopicWhoseDataPlaneDoesNotReleaseItShouldHoldBackNoOtherTopicOfTheStop() {
        host.put(T0, mirroring().moveTo(MirrorPartitionState.STOPPING, null, NOW));
        host.put(U0, mirroring().moveTo(MirrorPartitionState.STOPPING, null, NOW));
        CompletableFuture<DataPlane.Progress> t0 = new CompletableFuture<>();
        parts.data.hanging.put(T0, t0);
        // a deadline far beyond the wait below: u must not wait for t's
        lifecycle = lifecycle(0, Duration.ofMinutes(5));

        lifecycle.stopPartitions("m", List.of(T0, U0));
        until(() -> host.state(U0) == MirrorPartitionState.STOPPED);

        assertThat(parts.handedBack).containsExactly("guard u", "configs u");
        assertThat(host.state(T0)).isEqualTo(MirrorPartitionState.STOPPING);

        t0.complete(null); // and once t-0 is out, t is handed back too
        until(() -> host.state(T0) == MirrorPartitionState.STOPPED);
        assertThat(parts.handedBack).containsExactly("guard u", "configs u", "guard t", "configs t");
    }

    @Test
    void aStopWaitingForTheMirrorsClientsShouldMakeItsTopicWritableOnceAndSayItAtTheEnd() {
        host.put(T0, mirroring().moveTo(MirrorPartitionState.STOPPING, null, NOW));
        host.put(T1, mirroring().moveTo(MirrorPartitionState.STOPPING, null, NOW));
        host.put(U0, mirroring());
        host.clientsBroken = new IllegalStateException("No resolvable bootstrap urls");

        // a stop of t's partitions (u-0 mirrors on, another topic)
        lifecycle.stopPartitions("m", List.of(T0, T1));
        drain();
        lifecycle.stopPartitions("m", List.of(T0, T1)); // the stop tried again while the clients are still broken
        drain();

        // the clients cannot be built, so nothing of the mirror writes: t becomes writable at once, and only once
        assertThat(host.liftedOverService).containsExactly(Set.of("t"));
        assertThat(host.state(T0)).isEqualTo(MirrorPartitionState.STOPPING);
        assertThat(host.status(T0).waiting())
                .isEqualTo("stopping waits for the mirror's clients: No resolvable bootstrap urls");
        assertThat(host.status(T0).error()).isNull();
        assertThat(host.history(T0)).containsExactly(MirrorPartitionState.STOPPING); // the wait written once
        assertThat(parts.handedBack).isEmpty();

        // once they are back, the stop ends as usual, and says the loss report counts what was written meanwhile
        host.clientsBroken = null;
        lifecycle.stopPartitions("m", List.of(T0, T1));
        drain();

        assertThat(host.state(T0)).isEqualTo(MirrorPartitionState.STOPPED);
        assertThat(parts.handedBack).containsExactly("guard t", "configs t");
        assertThat(host.status(T1).error())
                .startsWith("the topic was writable from ")
                .endsWith("while the stop waited for the mirror's clients: the loss report's destination end, read "
                        + "at the stop's end, counts what was written since");
        assertThat(host.status(T1).waiting()).isNull();
    }

    @Test
    void aStopWaitingForTheMirrorsClientsShouldLeaveATopicWithAnActivePartitionGuarded() {
        host.put(T0, mirroring().moveTo(MirrorPartitionState.STOPPING, null, NOW));
        host.put(T1, mirroring());
        host.clientsBroken = new IllegalStateException("No resolvable bootstrap urls");

        lifecycle.stopPartitions("m", List.of(T0));
        drain();

        assertThat(host.liftedOverService).isEmpty();
        assertThat(host.state(T0)).isEqualTo(MirrorPartitionState.STOPPING);
    }

    @Test
    void aStopWhoseGuardCannotBeLiftedShouldSaySoAndStillRestoreTheConfigs() {
        host.put(T0, mirroring().moveTo(MirrorPartitionState.STOPPING, null, NOW));
        parts.guardFailure = new IllegalStateException("ACLs not writable");

        lifecycle.stopPartitions("m", List.of(T0));
        drain();

        assertThat(parts.handedBack).containsExactly("guard t", "configs t");
        assertThat(host.state(T0)).isEqualTo(MirrorPartitionState.STOPPED);
        assertThat(host.status(T0).error())
                .isEqualTo("the destination topic is still read-only: its guard ACL (DENY WRITE for User:*) could not "
                        + "be deleted: java.lang.IllegalStateException: ACLs not writable");
    }

    /** What the fake host reports a stop may have left on the source: 5 records not mirrored, its end read now. */
    private static final LossReport LOSS = new LossReport(NOW, true, 105, NOW, 100, 5, 9_000, false);

    /** The same with the source gone: its end as last seen, 7 s before. */
    private static final LossReport SOURCE_GONE =
            new LossReport(NOW, false, 105, NOW.minusSeconds(7), 100, 5, 9_000, true);

    @Test
    void aStopShouldKeepItsLossReportWithTheStoppedStatusUntilThePartitionMovesOn() {
        host.put(T0, mirroring().moveTo(MirrorPartitionState.STOPPING, null, NOW));

        lifecycle.stopPartitions("m", List.of(T0));
        drain();

        assertThat(host.state(T0)).isEqualTo(MirrorPartitionState.STOPPED);
        assertThat(host.status(T0).lossAtStop()).isEqualTo(LOSS);
        assertThat(host.status(T0)
                        .moveTo(MirrorPartitionState.LOG_TRUNCATION, null, NOW)
                        .lossAtStop())
                .isNull();
    }

    @Test
    void aStopWhoseDataPlaneNeverReleasesThePartitionShouldSayWhyBeCountedAndBeTriedAgainAndKeepItsReason() {
        // the metadata sync stops a topic deleted on the source
        host.put(T0, mirroring().moveTo(MirrorPartitionState.STOPPING, "source topic deleted", NOW));
        parts.data.removalsHang = true;

        lifecycle.stopPartitions("m", List.of(T0));
        until(() -> host.status(T0).waiting() != null);

        assertThat(host.state(T0)).isEqualTo(MirrorPartitionState.STOPPING);
        assertThat(host.status(T0).error()).isEqualTo("source topic deleted");
        assertThat(host.status(T0).waiting())
                .isEqualTo("the stop did not finish within 200 ms (the data plane has not released [t-0]); tried "
                        + "again every 3 s");
        assertThat(registry.get("cluster.mirror.flow.deadline.exceeded")
                        .tag("flow", "stop")
                        .counter()
                        .count())
                .isEqualTo(1);

        parts.data.removalsHang = false;
        until(() -> host.state(T0) == MirrorPartitionState.STOPPED);

        assertThat(parts.handedBack).containsExactly("guard t", "configs t");
        // the wait is over, the reason for the stop stays
        assertThat(host.status(T0).waiting()).isNull();
        assertThat(host.status(T0).error()).isEqualTo("source topic deleted");
    }

    @Test
    void aHaltedMirrorShouldLeaveTheDataPlaneAndComeBackFromThePersistedStatesWhenUnhalted() {
        host.put(T0, mirroring());
        parts.answer(T0, new LogTruncation.Ready(8, 1, -1));
        host.live = true;

        lifecycle.listener("m").onSourceClusterChanged("other-cluster");
        drain();
        assertThat(lifecycle.haltedReason("m"))
                .startsWith("source cluster id is other-cluster, but mirror 'm' mirrors cluster source-id");
        assertThat(parts.data.calls).containsExactly("remove t-0 keeping");
        assertThat(registry.get("cluster.mirror.halts").counter().count()).isEqualTo(1);

        lifecycle.act("m", TopicVerb.RESUME, T0); // e.g. a resume meanwhile: nothing enters the data plane
        drain();
        assertThat(parts.data.calls).containsExactly("remove t-0 keeping");

        lifecycle.unhalt("m");
        drain();
        assertThat(lifecycle.haltedReason("m")).isNull();
        assertThat(parts.data.calls).containsExactly("remove t-0 keeping", "add t-0 at 8 epoch 1");
        assertThat(host.state(T0)).isEqualTo(MirrorPartitionState.MIRRORING);
    }

    @Test
    void clientsThatCannotBeBuiltShouldFailThePartitionWithTheReason() {
        host.put(T0, truncating());
        host.clientsBroken = new IllegalStateException("config provider 'vault' cannot resolve ${vault:pw}");

        lifecycle.truncate("m", T0);
        drain();

        assertThat(host.state(T0)).isEqualTo(MirrorPartitionState.FAILED);
        assertThat(host.status(T0).error())
                .isEqualTo(
                        "the mirror's clients could not be built: config provider 'vault' cannot resolve ${vault:pw}");
    }

    @Test
    void anOutcomeForAPartitionThatMovedOnMeanwhileShouldBeIgnored() {
        host.put(T0, truncating());
        parts.answer(T0, new LogTruncation.Ready(42, 7, -1));
        parts.beforeAnswer = () -> host.put(T0, host.status(T0).moveTo(MirrorPartitionState.STOPPING, null, NOW));

        lifecycle.truncate("m", T0);
        drain();

        assertThat(host.state(T0)).isEqualTo(MirrorPartitionState.STOPPING);
        assertThat(parts.data.calls).isEmpty();
    }

    @Test
    void aRestartShouldContinueEveryPartitionFromItsPersistedState() {
        host.put(T0, truncating());
        host.put(T1, mirroring());
        host.put(U0, mirroring().moveTo(MirrorPartitionState.FAILED, "earlier", NOW));
        parts.answer(T0, new LogTruncation.Ready(1, 0, -1));
        parts.answer(T1, new LogTruncation.Ready(2, 0, -1));
        parts.answer(U0, new LogTruncation.Ready(3, 0, -1));

        lifecycle.resume("m");
        until(() -> host.state(U0) == MirrorPartitionState.MIRRORING);
        drain();

        assertThat(parts.data.calls)
                .containsExactlyInAnyOrder("add t-0 at 1 epoch 0", "add t-1 at 2 epoch 0", "add u-0 at 3 epoch 0");
        assertThat(host.status(U0).retryAttempt()).isEqualTo(1);
    }

    @Test
    void thePartitionsEnteringLogTruncationInOneCoordinatorTaskShouldBeCheckedAsOneBatch() {
        host.put(T0, truncating());
        host.put(T1, truncating());
        host.put(U0, mirroring());
        parts.answer(T0, new LogTruncation.Ready(1, 0, -1));
        parts.answer(T1, new LogTruncation.Ready(2, 0, -1));
        parts.answer(U0, new LogTruncation.Ready(3, 0, -1));

        // a restart's resumption: two in LOG_TRUNCATION, one MIRRORING to check before it mirrors on
        thread.run("resume", () -> lifecycle.resume("m"));
        drain();

        assertThat(parts.batches).hasSize(1);
        assertThat(parts.batches.get(0)).containsExactlyInAnyOrder(T0, T1, U0);
        assertThat(parts.data.calls)
                .containsExactlyInAnyOrder("add t-0 at 1 epoch 0", "add t-1 at 2 epoch 0", "add u-0 at 3 epoch 0");
    }

    @Test
    void batchesShouldHoldAtMostTheirSizeAndAPartitionAskedForTwiceShouldGoToALaterOne() {
        List<MirrorPartition> asked = new ArrayList<>();
        for (int p = 0; p < 2_500; p++) {
            asked.add(new MirrorPartition("big", p));
        }
        assertThat(TruncationBatches.batches(asked, TruncationBatches.MAX_BATCH, Function.identity()))
                .extracting(List::size)
                .containsExactly(1_000, 1_000, 500);

        assertThat(TruncationBatches.batches(List.of(T0, T1, T0, U0, T0), 3, Function.identity()))
                .containsExactly(List.of(T0, T1, U0), List.of(T0), List.of(T0));
    }

    // ================================================================ helpers and fakes

    private static PartitionStatus truncating() {
        return PartitionStatus.initial(NOW).moveTo(MirrorPartitionState.LOG_TRUNCATION, null, NOW);
    }

    private static PartitionStatus mirroring() {
        return truncating().moveTo(MirrorPartitionState.MIRRORING, null, NOW);
    }

    private static Mirror mirrorWith(Map<String, String> settings) {
        Map<String, String> values = new HashMap<>(settings);
        values.put(MirrorConfig.BOOTSTRAP_SERVERS, "source:9092");
        return new Mirror("m", new MirrorConfig(values), "source-id", NOW, NOW);
    }

    private PartitionLifecycle lifecycle(int maxAttempts) {
        return lifecycle(maxAttempts, FLOW_DEADLINE);
    }

    private PartitionLifecycle lifecycle(int maxAttempts, Duration flowDeadline) {
        MirrorMetrics metrics = new MirrorMetrics(registry);
        return new PartitionLifecycle(
                host,
                thread,
                new RetryPolicy(1, 4, maxAttempts),
                metrics,
                Clock.systemUTC(),
                new FlowDeadlines(metrics, flowDeadline));
    }

    /** Lets every task chained on the coordinator thread run (each hop queues the next before it ends). */
    private void drain() {
        for (int i = 0; i < 20; i++) {
            thread.call(() -> null).await().atMost(Duration.ofSeconds(5));
        }
    }

    /** For scheduled tasks (retries): waits, with a deadline, until the condition holds on the coordinator thread. */
    private void until(BooleanSupplier condition) {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (!thread.call(condition::getAsBoolean).await().atMost(Duration.ofSeconds(5))) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("condition not met within 5 s; partitions " + host.partitions("m"));
            }
            Thread.onSpinWait();
        }
    }

    /** The lifecycle's FAILED lines as "LEVEL message", captured from its logger (JBoss LogManager is the JUL manager). */
    private static final class LogCapture extends Handler implements AutoCloseable {
        private final Logger logger = Logger.getLogger(PartitionLifecycle.class.getName());
        private final List<String> lines = Collections.synchronizedList(new ArrayList<>());
        private final PatternFormatter format = new PatternFormatter("%p %s");

        LogCapture() {
            logger.addHandler(this);
        }

        List<String> lines() {
            return List.copyOf(lines);
        }

        @Override
        public void publish(LogRecord record) {
            String line = format.format(record);
            if (line.contains(" FAILED")) {
                lines.add(line);
            }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {
            logger.removeHandler(this);
        }
    }

    private final class FakeHost implements PartitionLifecycle.Host {
        volatile Mirror mirror = mirrorWith(Map.of());
        volatile RuntimeException clientsBroken;
        volatile boolean live = true;
        /** What every stop reads it may have left on the source. */
        volatile LossReport loss = LOSS;
        /** The partitions of each such read, in order. */
        final List<Set<MirrorPartition>> lossReads = Collections.synchronizedList(new ArrayList<>());
        /** The topics whose guards were lifted over the service's Admin (a stop waiting for the clients). */
        final List<Set<String>> liftedOverService = Collections.synchronizedList(new ArrayList<>());

        private final Map<MirrorPartition, PartitionStatus> statuses = new ConcurrentHashMap<>();
        /** What the lifecycle persisted about recreated topics' divergent tails. */
        final List<TopicDivergence> divergences = Collections.synchronizedList(new ArrayList<>());
        /** The topics the lifecycle persisted as recreated (what was verified of them forgotten). */
        final List<String> recreatedTopics = Collections.synchronizedList(new ArrayList<>());

        private final Map<MirrorPartition, List<MirrorPartitionState>> history = new ConcurrentHashMap<>();

        void put(MirrorPartition partition, PartitionStatus status) {
            statuses.put(partition, status);
        }

        PartitionStatus status(MirrorPartition partition) {
            return statuses.get(partition);
        }

        MirrorPartitionState state(MirrorPartition partition) {
            return statuses.get(partition).state();
        }

        /** The states persisted for the partition, in order. */
        List<MirrorPartitionState> history(MirrorPartition partition) {
            return history.getOrDefault(partition, List.of());
        }

        @Override
        public Map<MirrorPartition, PartitionStatus> partitions(String name) {
            return Map.copyOf(statuses);
        }

        @Override
        public void persistPartitions(String name, Map<MirrorPartition, PartitionStatus> changed, Runnable then) {
            changed.forEach((p, s) -> {
                statuses.put(p, s);
                history.computeIfAbsent(p, k -> Collections.synchronizedList(new ArrayList<>()))
                        .add(s.state());
            });
            if (then != null) {
                then.run(); // committed at once
            }
        }

        @Override
        public void persistRecreated(
                String name,
                String topic,
                TopicDivergence divergence,
                Map<MirrorPartition, PartitionStatus> changed,
                Runnable then) {
            recreatedTopics.add(topic);
            if (divergence != null) {
                divergences.add(divergence);
            }
            persistPartitions(name, changed, then);
        }

        @Override
        public Optional<Mirror> mirror(String name) {
            return Optional.of(mirror).filter(m -> m.name().equals(name));
        }

        @Override
        public Mirror require(String name) {
            return mirror(name).orElseThrow(() -> MirrorException.unknownMirror(name));
        }

        @Override
        public boolean isActive() {
            return true;
        }

        @Override
        public void withRuntime(String name, Consumer<MirrorParts> then, Consumer<RuntimeException> failed) {
            if (clientsBroken != null) {
                failed.accept(clientsBroken);
                return;
            }
            then.accept(parts);
        }

        @Override
        public Optional<MirrorParts> liveRuntime(String name) {
            return live && clientsBroken == null ? Optional.of(parts) : Optional.empty();
        }

        @Override
        public CompletionStage<Void> liftGuards(Set<String> topics) {
            liftedOverService.add(new TreeSet<>(topics));
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public Map<MirrorPartition, LossReport> lossAtStop(String mirror, Collection<MirrorPartition> partitions) {
            lossReads.add(new TreeSet<>(partitions));
            Map<MirrorPartition, LossReport> reports = new HashMap<>();
            partitions.forEach(p -> reports.put(p, loss));
            return reports;
        }
    }

    private static final class FakeDataPlane implements DataPlane {
        final List<String> calls = Collections.synchronizedList(new ArrayList<>());
        /** For each {@link #joining}: how many of {@link #calls} came before it. */
        final List<Integer> joinings = Collections.synchronizedList(new ArrayList<>());

        private final Map<MirrorPartition, Long> in = new ConcurrentHashMap<>();
        volatile Progress lastProgress;
        volatile boolean removalsHang;
        /** Partitions whose removal completes when the test says so. */
        final Map<MirrorPartition, CompletableFuture<Progress>> hanging = new ConcurrentHashMap<>();

        volatile RuntimeException removalFailure;

        @Override
        public void add(MirrorPartition partition, long startOffset, int sourceEpoch, long sourceEnd) {
            if (in.putIfAbsent(partition, startOffset) != null) {
                throw new IllegalStateException(partition + " is still in the data plane");
            }
            calls.add("add " + partition + " at " + startOffset + " epoch " + sourceEpoch
                    + (sourceEnd >= 0 ? " source end " + sourceEnd : ""));
        }

        @Override
        public void joining() {
            joinings.add(calls.size());
        }

        @Override
        public CompletableFuture<Progress> remove(MirrorPartition partition, boolean abortTransactions) {
            calls.add("remove " + partition + (abortTransactions ? " aborting" : " keeping"));
            if (removalsHang) {
                return new CompletableFuture<>(); // a loop that never gets to it
            }
            if (hanging.containsKey(partition)) {
                return hanging.get(partition);
            }
            if (removalFailure != null) {
                return CompletableFuture.failedFuture(removalFailure);
            }
            in.remove(partition);
            return CompletableFuture.completedFuture(lastProgress);
        }

        @Override
        public CompletableFuture<Progress> whenGone(MirrorPartition partition) {
            return CompletableFuture.completedFuture(null);
        }
    }

    private static final class FakeParts implements MirrorParts, PrefixCheck {
        final FakeDataPlane data = new FakeDataPlane();
        /** Per partition, the answers of its checks in turn; the last one repeats. */
        private final Map<MirrorPartition, List<LogTruncation.Outcome>> outcomes = new ConcurrentHashMap<>();

        final List<MirrorPartition> checks = Collections.synchronizedList(new ArrayList<>());
        /** The partitions of each batch the lifecycle handed in, in order. */
        final List<List<MirrorPartition>> batches = Collections.synchronizedList(new ArrayList<>());

        final List<Long> fencingEnds = Collections.synchronizedList(new ArrayList<>());
        final List<String> recreated = Collections.synchronizedList(new ArrayList<>());
        /** The hand-back steps of stopped topics, in order: "guard t", "configs t". */
        final List<String> handedBack = Collections.synchronizedList(new ArrayList<>());
        /** The topics of each call that restores configs. */
        final List<Collection<String>> restoreCalls = Collections.synchronizedList(new ArrayList<>());

        volatile LogTruncation.Outcome fencedOutcome;
        volatile RuntimeException failing;
        volatile RuntimeException recreateFailure;
        /** Returned for every topic, as a failed per-topic answer. */
        volatile Exception restoreFailure;
        /** Thrown by the call, as an Admin that cannot send. */
        volatile RuntimeException restoreThrown;

        volatile RuntimeException guardFailure;
        volatile RuntimeException preservationFailure;
        final Map<MirrorPartition, PreservedTail> tails = new ConcurrentHashMap<>();
        final List<MirrorPartition> preservations = Collections.synchronizedList(new ArrayList<>());
        volatile Runnable beforeAnswer = () -> {};

        @Override
        public DataPlane dataPlane() {
            return data;
        }

        @Override
        public PrefixCheck prefixCheck() {
            return this;
        }

        @Override
        public LogTruncation.Outcome run(
                String mirror, MirrorPartition partition, Consumer<TruncationProgress> progress) {
            checks.add(partition);
            return answer(partition, p -> {
                List<LogTruncation.Outcome> script = outcomes.get(p);
                return script.size() > 1 ? script.remove(0) : script.get(0);
            });
        }

        @Override
        public Map<MirrorPartition, PrefixCheck.Answer> check(String mirror, List<PrefixCheck.Check> batch)
                throws Exception {
            batches.add(batch.stream().map(PrefixCheck.Check::partition).toList());
            return PrefixCheck.super.check(mirror, batch);
        }

        void answer(MirrorPartition partition, LogTruncation.Outcome... answers) {
            outcomes.put(partition, Collections.synchronizedList(new ArrayList<>(List.of(answers))));
        }

        @Override
        public LogTruncation.Outcome afterEpochFencing(
                String mirror, MirrorPartition partition, long epochEndOffset, Consumer<TruncationProgress> progress) {
            fencingEnds.add(epochEndOffset);
            return answer(partition, p -> fencedOutcome);
        }

        private LogTruncation.Outcome answer(
                MirrorPartition partition, Function<MirrorPartition, LogTruncation.Outcome> outcome) {
            beforeAnswer.run();
            if (failing != null) {
                throw failing;
            }
            return outcome.apply(partition);
        }

        @Override
        public void recreateTopic(String topic, Collection<String> excludedProperties) {
            recreated.add(topic);
            if (recreateFailure != null) {
                throw recreateFailure;
            }
        }

        @Override
        public void liftGuards(Collection<String> topics) {
            topics.forEach(topic -> handedBack.add("guard " + topic));
            if (guardFailure != null) {
                throw guardFailure;
            }
        }

        @Override
        public Map<String, Exception> restoreConfigs(Collection<String> topics) {
            restoreCalls.add(List.copyOf(topics));
            topics.forEach(topic -> handedBack.add("configs " + topic));
            if (restoreThrown != null) {
                throw restoreThrown;
            }
            Map<String, Exception> failed = new TreeMap<>();
            if (restoreFailure != null) {
                topics.forEach(topic -> failed.put(topic, restoreFailure));
            }
            return failed;
        }

        @Override
        public List<PreservedTail> preserveDivergentTails(List<MirrorPartition> partitions) {
            preservations.addAll(partitions);
            if (preservationFailure != null) {
                throw preservationFailure;
            }
            return partitions.stream()
                    .filter(tails::containsKey)
                    .map(tails::get)
                    .toList();
        }

        @Override
        public Executor workers() {
            return Runnable::run;
        }
    }
}
