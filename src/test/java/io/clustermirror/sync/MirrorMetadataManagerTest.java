package io.clustermirror.sync;

import static io.clustermirror.sync.Fixtures.mirror;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.clustermirror.mirror.AclEntry;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.PartitionStatus;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The scheduler's own duties: a cycle that never finishes ends at its deadline, and the schedule goes on. */
class MirrorMetadataManagerTest {

    private static final Duration DEADLINE = Duration.ofMillis(200);

    private final Fixtures fixtures = new Fixtures();
    private final HangingHost host = new HangingHost();
    private final MirrorMetadataManager manager =
            new MirrorMetadataManager(host, fixtures.metrics, null, "__mirror_state", Duration.ofSeconds(30), DEADLINE);

    @Test
    void aCycleThatNeverFinishesShouldBeCancelledAtItsDeadlineReportedCountedAndLetTheNextCycleStart() {
        manager.tick();

        await().atMost(Duration.ofSeconds(5)).until(() -> manager.status("m") != null);
        assertThat(manager.status("m").errors())
                .containsExactly("metadata sync cycle did not finish within 200 ms: cancelled; the next cycle starts "
                        + "afresh");
        assertThat(host.cancelled).hasValue(1);
        assertThat(fixtures.registry
                        .get("cluster.mirror.flow.deadline.exceeded")
                        .tag("flow", "sync")
                        .tag("mirror", "m")
                        .counter()
                        .count())
                .isEqualTo(1);

        // the report is out a moment before the cycle counts as finished: a tick after that starts the next one
        await().atMost(Duration.ofSeconds(5)).until(() -> {
            manager.tick();
            return host.subscribed.get() == 2;
        });
    }

    @Test
    void aCycleStillRunningShouldNotBeStartedTwice() {
        MirrorMetadataManager patient = new MirrorMetadataManager(
                host, fixtures.metrics, null, "__mirror_state", Duration.ofSeconds(30), Duration.ofMinutes(2));

        patient.tick();
        patient.tick();

        assertThat(host.subscribed).hasValue(1);
        assertThat(patient.status("m")).isNull();
    }

    /** A coordinator whose source never answers: {@code source()} neither emits nor fails until cancelled. */
    private static final class HangingHost implements SyncHost {
        final AtomicInteger subscribed = new AtomicInteger();
        final AtomicInteger cancelled = new AtomicInteger();

        @Override
        public boolean isActive() {
            return true;
        }

        @Override
        public List<Mirror> list() {
            return List.of(mirror());
        }

        @Override
        public Map<MirrorPartition, PartitionStatus> partitions(String mirror) {
            return Map.of();
        }

        @Override
        public String haltedReason(String mirror) {
            return null;
        }

        @Override
        public Uni<ClusterMetadata> source(String mirror) {
            return Uni.createFrom().emitter(emitter -> {
                subscribed.incrementAndGet();
                emitter.onTermination(cancelled::incrementAndGet);
            });
        }

        @Override
        public Uni<ClusterMetadata> destination(String mirror) {
            return Uni.createFrom().item(new FakeCluster());
        }

        @Override
        public Uni<List<String>> apply(String mirror, SyncAction action) {
            return Uni.createFrom().item(List.of());
        }

        @Override
        public Set<AclEntry> createdAcls(String mirror) {
            return Set.of();
        }

        @Override
        public Uni<Void> recordCreatedAcls(String mirror, Set<AclEntry> acls) {
            return Uni.createFrom().voidItem();
        }
    }
}
