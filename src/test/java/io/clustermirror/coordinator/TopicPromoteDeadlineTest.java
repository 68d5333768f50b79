package io.clustermirror.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.PartitionStatus;
import io.clustermirror.mirror.TopicPromotion;
import io.clustermirror.sync.SyncReport;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A promote whose coordinator step never answers ends at its deadline (its drain timeout plus the flow deadline). */
class TopicPromoteDeadlineTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final MirrorMetrics metrics = new MirrorMetrics(registry);
    private final CoordinatorThread thread = new CoordinatorThread();
    private final TopicPromotes promotes = new TopicPromotes(
            new DroppingHost(),
            thread,
            metrics,
            Clock.systemUTC(),
            1000,
            new FlowDeadlines(metrics, Duration.ofMillis(150)));

    @AfterEach
    void stopThread() {
        thread.shutdown(() -> {});
    }

    @Test
    void aPromoteThatNeverGetsItsCoordinatorStepShouldFailAtItsDeadlineAndBeCounted() {
        MirrorException refused = catchThrowableOfType(
                MirrorException.class,
                () -> promotes.promote("m", new TopicPromotes.Request(List.of("t"), List.of(), List.of(), 100, true))
                        .await()
                        .atMost(Duration.ofSeconds(5)));

        assertThat(refused.error()).isEqualTo(MirrorError.REQUEST_TIMED_OUT);
        assertThat(refused.getMessage())
                .isEqualTo("the promote did not finish within 250 ms; it was cancelled and rolled back unless it had "
                        + "already committed (describe shows each topic's promotion)");
        assertThat(registry.get("cluster.mirror.flow.deadline.exceeded")
                        .tag("flow", "promote")
                        .counter()
                        .count())
                .isEqualTo(1);
    }

    /** The coordinator: a task handed to its thread never runs (as after shutdownNow); nothing else is reached. */
    private static final class DroppingHost implements TopicPromotes.Host {
        @Override
        public Mirror require(String name) {
            throw new AssertionError("not reached");
        }

        @Override
        public <T> Uni<T> onCoordinator(Supplier<T> action) {
            return Uni.createFrom().nothing();
        }

        @Override
        public Uni<MirrorRuntime> runtime(String name) {
            throw new AssertionError("not reached");
        }

        @Override
        public Admin destinationAdmin() {
            throw new AssertionError("not reached");
        }

        @Override
        public Map<MirrorPartition, PartitionStatus> partitions(String mirror) {
            return Map.of();
        }

        @Override
        public Map<String, TopicPromotion> promotions(String mirror) {
            return Map.of();
        }

        @Override
        public void persist(
                String mirror, Map<String, TopicPromotion> promotions, Map<MirrorPartition, PartitionStatus> changed) {}

        @Override
        public void stopPartitions(String mirror, Collection<MirrorPartition> partitions) {}

        @Override
        public Uni<SyncReport> syncGroupOffsets(Mirror mirror, Set<MirrorPartition> partitions) {
            throw new AssertionError("not reached");
        }

        @Override
        public boolean holds(String mirror) {
            return true;
        }

        @Override
        public boolean leaseValid() {
            return true;
        }
    }
}
