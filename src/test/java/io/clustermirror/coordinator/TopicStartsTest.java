package io.clustermirror.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorConfigRules;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.PartitionStatus;
import io.clustermirror.mirror.TopicSelection;
import io.clustermirror.topics.DestinationTopics;
import io.clustermirror.topics.ForeignStateTopics;
import io.clustermirror.topics.TopicPreparation;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.junit.jupiter.api.Test;

/**
 * A start whose coordinator step never answers (a task dropped by a closing executor) ends at its deadline; a topic whose
 * destination topic could not be prepared is refused with the error a single-topic start gave it.
 */
class TopicStartsTest {

    private static final Instant NOW = Instant.parse("2026-12-01T00:00:00Z");

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final MirrorMetrics metrics = new MirrorMetrics(registry);
    private final DroppingHost host = new DroppingHost();
    private final TopicStarts starts = new TopicStarts(
            host,
            new MirrorConfigRules(Set.of(), Set.of()),
            "__mirror_state",
            new ForeignStateTopics(
                    () -> {
                        throw new AssertionError("this start adopts no destination topic");
                    },
                    () -> {
                        throw new AssertionError("this start adopts no destination topic");
                    },
                    1000),
            new FlowDeadlines(metrics, Duration.ofSeconds(1)));

    @Test
    void aStartThatNeverFinishesShouldFailAtItsDeadlineWithTheReasonAndBeCounted() {
        MirrorException refused = catchThrowableOfType(
                MirrorException.class,
                () -> starts.start("m", new TopicSelection(List.of("t"), List.of(), List.of(), false, false))
                        .await()
                        .atMost(Duration.ofSeconds(10)));

        assertThat(refused.error()).isEqualTo(MirrorError.COORDINATOR_NOT_AVAILABLE);
        assertThat(refused.getMessage())
                .isEqualTo("the start did not finish within 1000 ms; it was cancelled: the topics it had started show "
                        + "in describe, start the others again");
        // the coordinator step (subscribed well within the 1 s deadline) is cancelled, seen shortly after the answer
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(host.cancelled).hasValue(1));
        assertThat(registry.get("cluster.mirror.flow.deadline.exceeded")
                        .tag("flow", "start")
                        .tag("mirror", "m")
                        .counter()
                        .count())
                .isEqualTo(1);
    }

    @Test
    void aTopicThatCouldNotBePreparedShouldBeRefusedWithItsOwnErrorAndReason() {
        ExecutionException refused = new ExecutionException(new PolicyViolationException("no more partitions"));

        assertThat(TopicStarts.refusal(new TopicPreparation.NotOnSource("a")))
                .isEqualTo(TopicOutcome.error(
                        "a", MirrorError.UNKNOWN_TOPIC_OR_PARTITION, "topic does not exist on the source cluster"));
        assertThat(TopicStarts.refusal(new TopicPreparation.Conflict("b")))
                .isEqualTo(TopicOutcome.error(
                        "b",
                        MirrorError.TOPIC_ALREADY_EXISTS,
                        new DestinationTopics.TopicConflictException("b").getMessage()));
        assertThat(TopicStarts.refusal(new TopicPreparation.Mismatch("c", "destination topic c has 4 partitions")))
                .isEqualTo(TopicOutcome.error(
                        "c",
                        MirrorError.INVALID_CONFIG,
                        "could not prepare the destination topic: destination topic c has 4 partitions"));
        assertThat(TopicStarts.refusal(new TopicPreparation.Failed("d", refused)))
                .isEqualTo(TopicOutcome.error(
                        "d",
                        MirrorError.INVALID_CONFIG,
                        "could not prepare the destination topic: "
                                + "org.apache.kafka.common.errors.PolicyViolationException: no more partitions"));
    }

    /** The coordinator: the mirror exists, but a task handed to its thread never runs (as after shutdownNow). */
    private static final class DroppingHost implements TopicStarts.Host {
        final AtomicInteger cancelled = new AtomicInteger();

        @Override
        public Mirror require(String name) {
            return new Mirror(name, new MirrorConfig(Map.of(MirrorConfig.BOOTSTRAP_SERVERS, "a:9092")), "c", NOW, NOW);
        }

        @Override
        public <T> Uni<T> onCoordinator(Supplier<T> action) {
            return Uni.createFrom().emitter(emitter -> emitter.onTermination(cancelled::incrementAndGet));
        }

        @Override
        public Uni<MirrorRuntime> runtime(String name) {
            throw new AssertionError("never reached: the coordinator step does not answer");
        }

        @Override
        public Map<String, Map<MirrorPartition, PartitionStatus>> allPartitions() {
            return Map.of();
        }

        @Override
        public Optional<Map<String, Map<MirrorPartition, PartitionStatus>>> everyMirrorsPartitions() {
            throw new AssertionError("never reached: the coordinator step does not answer");
        }

        @Override
        public void persistMirror(Mirror updated) {}

        @Override
        public void persistPartitions(String mirror, Map<MirrorPartition, PartitionStatus> changed) {}

        @Override
        public void truncate(String mirror, MirrorPartition partition) {}

        @Override
        public void restarted(String mirror, Set<String> topics) {}
    }
}
