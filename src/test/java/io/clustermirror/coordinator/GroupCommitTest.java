package io.clustermirror.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.clustermirror.fetch.DataPlane;
import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.LossReport;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorError;
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
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Group commit (decisions §37): the partition lifecycle's moves of one coordinator tick are one store write, what must
 * follow a durable move runs only after it committed, and a failed write fails every change in it the way a failed write
 * always has. The lifecycle and the coordinator thread are the real ones; the store is a fake that records its writes in
 * the same log as the data plane's calls, so their order shows.
 */
class GroupCommitTest {

    private static final Instant NOW = Instant.parse("2026-12-01T00:00:00Z");
    private static final int PARTITIONS = 50;

    private final CoordinatorThread thread = new CoordinatorThread();
    /** Store writes and data-plane calls, in the order they happened. */
    private final List<String> log = Collections.synchronizedList(new ArrayList<>());

    /** The checks handed to the mirror's workers, run when the test says. */
    private final List<Runnable> work = Collections.synchronizedList(new ArrayList<>());

    private final AtomicInteger failures = new AtomicInteger();
    private volatile RuntimeException storeFailure;
    private final GroupCommit commit = new GroupCommit(
            thread,
            changes -> {
                if (storeFailure != null) {
                    throw storeFailure;
                }
                log.add("commit " + changes.size());
            },
            cause -> {
                failures.incrementAndGet();
                return new MirrorException(
                        MirrorError.COORDINATOR_NOT_AVAILABLE, cause.getMessage() + "; the change was not confirmed");
            });

    @AfterEach
    void stopThread() {
        thread.shutdown(() -> {});
    }

    @Test
    void theLogTruncationOutcomesOfOneTickShouldBeOneStoreWriteAndJoinTheDataPlaneOnlyAfterIt() {
        Map<MirrorPartition, PartitionStatus> truncating = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            truncating.put(new MirrorPartition("t", p), truncating());
        }
        commit.reset(CoordinatorState.EMPTY.withPartitions("m", truncating));
        PartitionLifecycle lifecycle = lifecycle();
        // one task's partitions are checked as one batch (decisions §36): one worker task for all of them
        thread.run("truncate", () -> truncating.keySet().forEach(p -> lifecycle.truncate("m", p)));
        await().atMost(Duration.ofSeconds(10)).until(() -> work.size() == 1);

        // the batch answers on a worker and posts its outcomes back while the coordinator thread is busy, so they wait
        // in its queue and run in one tick
        CountDownLatch held = holdTheCoordinatorThread();
        work.forEach(Runnable::run);
        held.countDown();
        await().atMost(Duration.ofSeconds(10)).until(() -> log.size() == 1 + PARTITIONS);

        assertThat(log.get(0)).isEqualTo("commit " + PARTITIONS);
        assertThat(log.subList(1, log.size())).allMatch(call -> call.startsWith("add "));
        assertThat(committed().values()).allMatch(s -> s.state() == MirrorPartitionState.MIRRORING);
    }

    @Test
    void aFailedFlushShouldFailEveryChangeInItWithOneAnswerAndRunNothingThatWaitedForIt() {
        MirrorPartition t0 = new MirrorPartition("t", 0);
        MirrorPartition t1 = new MirrorPartition("t", 1);
        commit.reset(CoordinatorState.EMPTY.withPartitions("m", Map.of(t0, truncating(), t1, truncating())));
        storeFailure = new IllegalStateException("Could not write to __mirror_state: timed out");
        List<String> ran = Collections.synchronizedList(new ArrayList<>());

        MirrorException answer = thread.call(() -> {
                    // the tick's own moves, then a request's, which flushes at once and takes the others with it
                    commit.change(
                            c -> c.partitions("m", Map.of(t0, mirroring())),
                            s -> s.withPartitions("m", Map.of(t0, mirroring())),
                            "t-0",
                            () -> ran.add("t-0"));
                    commit.change(
                            c -> c.partitions("m", Map.of(t1, mirroring())),
                            s -> s.withPartitions("m", Map.of(t1, mirroring())),
                            "t-1",
                            () -> ran.add("t-1"));
                    commit.change(
                            c -> c.serviceConfig("k", "v"),
                            s -> s.withServiceConfig("k", "v"),
                            "request",
                            () -> ran.add("r"));
                    MirrorException refused = catchThrowableOfType(MirrorException.class, commit::flush);
                    assertThat(commit.state().partitions("m").get(t0).state())
                            .isEqualTo(MirrorPartitionState.LOG_TRUNCATION); // the working state is the topic's again
                    return refused;
                })
                .await()
                .atMost(Duration.ofSeconds(10));

        assertThat(answer.error()).isEqualTo(MirrorError.COORDINATOR_NOT_AVAILABLE);
        assertThat(answer.getMessage())
                .isEqualTo("Could not write to __mirror_state: timed out; the change was not confirmed");
        assertThat(failures).hasValue(1); // handled once (one re-read) for the whole transaction
        assertThat(ran).isEmpty();
        assertThat(commit.pending()).isZero(); // the queued flush finds nothing left to write
        assertThat(committed().get(t1).state()).isEqualTo(MirrorPartitionState.LOG_TRUNCATION);
    }

    @Test
    void aMoveToMirroringWhoseWriteFailedShouldNeverJoinTheDataPlane() {
        MirrorPartition t0 = new MirrorPartition("t", 0);
        commit.reset(CoordinatorState.EMPTY.withPartitions("m", Map.of(t0, truncating())));
        storeFailure = new IllegalStateException("Could not write to __mirror_state: broker gone");
        PartitionLifecycle lifecycle = lifecycle();

        thread.run("truncate", () -> lifecycle.truncate("m", t0));
        await().atMost(Duration.ofSeconds(10)).until(() -> work.size() == 1);
        work.get(0).run();
        await().atMost(Duration.ofSeconds(10)).until(() -> failures.get() == 1);
        thread.call(() -> null).await().atMost(Duration.ofSeconds(10)); // what the failed flush left has run

        assertThat(log).isEmpty();
        assertThat(committed().get(t0).state()).isEqualTo(MirrorPartitionState.LOG_TRUNCATION);
    }

    /** Blocks the coordinator thread until the latch is counted down. */
    private CountDownLatch holdTheCoordinatorThread() {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch holding = new CountDownLatch(1);
        thread.run("hold", () -> {
            holding.countDown();
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
        return release;
    }

    /** The committed state (read off the coordinator thread). */
    private Map<MirrorPartition, PartitionStatus> committed() {
        return commit.state().partitions("m");
    }

    private PartitionLifecycle lifecycle() {
        return new PartitionLifecycle(
                new TickHost(),
                thread,
                new RetryPolicy(1, 4, 0),
                new MirrorMetrics(new SimpleMeterRegistry()),
                Clock.fixed(NOW, ZoneOffset.UTC),
                new FlowDeadlines(new MirrorMetrics(new SimpleMeterRegistry()), Duration.ofSeconds(5)));
    }

    private static PartitionStatus truncating() {
        return PartitionStatus.initial(NOW).moveTo(MirrorPartitionState.LOG_TRUNCATION, null, NOW);
    }

    private static PartitionStatus mirroring() {
        return truncating().moveTo(MirrorPartitionState.MIRRORING, null, NOW);
    }

    /** The coordinator's state as the lifecycle sees it, written through the group commit under test. */
    private final class TickHost implements PartitionLifecycle.Host {
        private final Mirror mirror =
                new Mirror("m", new MirrorConfig(Map.of(MirrorConfig.BOOTSTRAP_SERVERS, "a:9092")), "c", NOW, NOW);
        private final Parts parts = new Parts();

        @Override
        public Map<MirrorPartition, PartitionStatus> partitions(String name) {
            return commit.state().partitions(name);
        }

        @Override
        public void persistPartitions(String name, Map<MirrorPartition, PartitionStatus> changed, Runnable then) {
            commit.change(c -> c.partitions(name, changed), s -> s.withPartitions(name, changed), "test", then);
        }

        @Override
        public void persistRecreated(
                String name,
                String topic,
                TopicDivergence divergence,
                Map<MirrorPartition, PartitionStatus> changed,
                Runnable then) {
            if (divergence == null) {
                persistPartitions(name, changed, then);
                return;
            }
            commit.change(
                    c -> c.partitions(name, changed).divergence(name, divergence),
                    s -> s.withPartitions(name, changed).withDivergence(name, divergence),
                    "test",
                    then);
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
            then.accept(parts);
        }

        @Override
        public Optional<MirrorParts> liveRuntime(String name) {
            return Optional.of(parts);
        }

        @Override
        public Map<MirrorPartition, LossReport> lossAtStop(String mirror, Collection<MirrorPartition> partitions) {
            return Map.of();
        }

        @Override
        public CompletionStage<Void> liftGuards(Set<String> topics) {
            return CompletableFuture.completedFuture(null);
        }
    }

    /** A mirror whose every check finds the destination a prefix, answered on a worker; its data plane logs. */
    private final class Parts implements MirrorParts, PrefixCheck, DataPlane {
        @Override
        public DataPlane dataPlane() {
            return this;
        }

        @Override
        public PrefixCheck prefixCheck() {
            return this;
        }

        @Override
        public LogTruncation.Outcome run(
                String mirror, MirrorPartition partition, Consumer<TruncationProgress> progress) {
            return new LogTruncation.Ready(0, -1, -1);
        }

        @Override
        public LogTruncation.Outcome afterEpochFencing(
                String mirror, MirrorPartition partition, long epochEndOffset, Consumer<TruncationProgress> progress) {
            return new LogTruncation.Ready(0, -1, -1);
        }

        @Override
        public void add(MirrorPartition partition, long startOffset, int sourceEpoch, long sourceEnd) {
            log.add("add " + partition);
        }

        @Override
        public CompletableFuture<Progress> remove(MirrorPartition partition, boolean abortTransactions) {
            log.add("remove " + partition);
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<Progress> whenGone(MirrorPartition partition) {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public void recreateTopic(String topic, Collection<String> excludedProperties) {}

        @Override
        public void liftGuards(Collection<String> topics) {}

        @Override
        public Map<String, Exception> restoreConfigs(Collection<String> topics) {
            return Map.of();
        }

        @Override
        public List<PreservedTail> preserveDivergentTails(List<MirrorPartition> partitions) {
            return List.of();
        }

        @Override
        public Executor workers() {
            return work::add;
        }
    }
}
