package io.clustermirror.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionStatus;
import io.clustermirror.mirror.TopicPromotion;
import io.clustermirror.sync.SyncReport;
import io.clustermirror.topics.DrainCheck.Drain;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A promote racing a DELETE of its mirror: the answer never holds a promotion that is gone (it gave a 500). */
class TopicPromotesTest {

    private static final Instant NOW = Instant.parse("2026-12-01T10:00:00Z");
    private static final MirrorPartition ORDERS_0 = new MirrorPartition("orders", 0);

    private final CoordinatorThread thread = new CoordinatorThread();
    private final FakeHost host = new FakeHost();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final TopicPromotes promotes = new TopicPromotes(
            host,
            thread,
            new MirrorMetrics(registry),
            Clock.fixed(NOW, ZoneOffset.UTC),
            1000,
            new FlowDeadlines(new MirrorMetrics(new SimpleMeterRegistry()), Duration.ofSeconds(30)));

    @AfterEach
    void stop() {
        thread.shutdown(() -> {});
    }

    @Test
    void aPromoteWhoseMirrorIsDeletedAfterItsCommitShouldAnswerTheProofItCommitted() throws Exception {
        TopicPromotes.Attempt a = drainedAttempt();
        host.deleteOnStop = true;

        promotes.commit(a);
        TopicPromotes.Outcome outcome = promotes.awaitStopped(a);

        assertThat(outcome.topics()).doesNotContainNull().hasSize(1);
        assertThat(outcome.topics().get(0).phase()).isEqualTo(TopicPromotion.Phase.PROMOTED);
        assertThat(outcome.topics().get(0).partitions())
                .containsExactly(new TopicPromotion.PromotedPartition(0, 10, 10, 3));
    }

    @Test
    void aPromoteWhoseMirrorIsDeletedBeforeItsCommitShouldAnswerUnknownMirror() {
        TopicPromotes.Attempt a = drainedAttempt();
        host.deleted = true;

        assertThatThrownBy(() -> promotes.commit(a))
                .isInstanceOfSatisfying(
                        MirrorException.class,
                        e -> assertThat(e.error()).isEqualTo(MirrorError.UNKNOWN_CLUSTER_MIRROR));
    }

    @Test
    void aPromoteWhoseInstanceLostTheMirrorBeforeItFencedShouldFenceNothingAndSaySo() {
        TopicPromotes.Attempt a = drainedAttempt(); // no runtime: a fence would fail on it, not with the refusal
        host.holds = false;

        assertThatThrownBy(() -> promotes.fenceSource(a)).isInstanceOfSatisfying(MirrorException.class, e -> {
            assertThat(e.error()).isEqualTo(MirrorError.COORDINATOR_NOT_AVAILABLE);
            assertThat(e.getMessage())
                    .contains("before the source was fenced: nothing was fenced")
                    .contains("rolls the promote back");
        });
    }

    @Test
    void aRollBackOnAnInstanceThatLostTheMirrorShouldLeaveItToTheNewOwnerNotRetry() {
        host.promotions.put("orders", TopicPromotion.promoting("orders", true, true, NOW));
        host.holds = false;

        promotes.fences()
                .rollBack("m", Set.of("orders"), "the drain failed")
                .await()
                .atMost(Duration.ofSeconds(5));

        // what the state records is the new owner's to lift and forget: this instance does not even ask the source
        assertThat(host.runtimeAsked).hasValue(0);
        assertThat(host.promotions).containsKey("orders");
        assertThat(thread.queued(true) + thread.queued(false)).isZero();
    }

    @Test
    void aLiftThatFailsShouldBeShownCountedAndRetriedUntilTheMirrorIsNoLongerThisInstances() {
        host.promotions.put("orders", TopicPromotion.promoting("orders", true, true, NOW));
        host.runtimeRefusal =
                new MirrorException(MirrorError.COORDINATOR_NOT_AVAILABLE, "simulated: source unreachable");

        promotes.fences()
                .rollBack("m", Set.of("orders"), "the drain failed")
                .await()
                .atMost(Duration.ofSeconds(5));

        assertThat(promotes.fences().liftError("m", "orders"))
                .hasValueSatisfying(error -> assertThat(error)
                        .contains("lifting the source fence (rolled back (the drain failed)) failed")
                        .contains("simulated: source unreachable")
                        .contains("retried every 5 s"));
        assertThat(registry.get("cluster.mirror.promotion.fence.lift.errors")
                        .tag("mirror", "m")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(thread.queued(false)).as("the retry, scheduled for later").isEqualTo(1);
        assertThat(host.promotions).containsKey("orders");

        // the mirror moves on: the next owner lifts it, and this instance shows no error of its own any more
        host.holds = false;
        promotes.fences()
                .rollBack("m", Set.of("orders"), "the drain failed")
                .await()
                .atMost(Duration.ofSeconds(5));

        assertThat(promotes.fences().liftError("m", "orders")).isEmpty();
    }

    @Test
    void aLiftRetriedAfterTheTopicWasPromotedAgainShouldLeaveTheNewPromotionAlone() {
        // Given a switch back whose lift of its promotion's fence fails, tried again every 50 ms
        PromotionFences fences = new PromotionFences(
                host,
                thread,
                new MirrorMetrics(registry),
                1000,
                new FlowDeadlines(new MirrorMetrics(registry), Duration.ofSeconds(30)),
                50);
        host.promotions.put("orders", promoted());
        host.runtimeRefusal =
                new MirrorException(MirrorError.COORDINATOR_NOT_AVAILABLE, "simulated: source unreachable");
        thread.run("switch back", () -> fences.restarted("m", Set.of("orders")));
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> fences.liftError("m", "orders").isPresent());

        // When the topic is promoted again (the old fence still up: this promote did not create one)
        TopicPromotion again = TopicPromotion.promoting("orders", true, false, NOW.plusSeconds(3600))
                .promoted(List.of(), NOW.plusSeconds(3600));
        synchronized (host) {
            host.promotions.put("orders", again);
        }

        // Then the retries end without forgetting it (that would drop the proof, and lift a fence the new promote
        // relies on when it created one), and no error of the old lift stays shown
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() ->
                        fences.liftError("m", "orders").isEmpty() && thread.queued(true) + thread.queued(false) == 0);
        org.awaitility.Awaitility.await()
                .during(Duration.ofMillis(200))
                .atMost(Duration.ofSeconds(5))
                .until(() -> thread.queued(true) + thread.queued(false) == 0);
        synchronized (host) {
            assertThat(host.promotions.get("orders")).isEqualTo(again);
        }
    }

    @Test
    void aTakeoverShouldLiftTheFenceOfAPromotedTopicMirroredAgainThatItsFormerOwnerDidNotLift() {
        // a switch back started "orders" again (MIRRORING), and its fence lift had not succeeded when the mirror moved
        host.promotions.put("orders", promoted());
        host.partitions.put(ORDERS_0, mirroring());
        host.runtimeRefusal = MirrorException.unknownMirror("m"); // ends the lift here, without a source to call

        thread.run("take over", () -> promotes.fences().recover("m"));

        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(host.runtimeAsked).hasValue(1));
    }

    @Test
    void aTakeoverShouldLeaveTheFenceOfAPromotedTopicThatIsStillStopped() {
        host.promotions.put("orders", promoted());
        host.partitions.put(
                ORDERS_0,
                mirroring()
                        .moveTo(MirrorPartitionState.STOPPING, null, NOW)
                        .moveTo(MirrorPartitionState.STOPPED, null, NOW));

        thread.call(() -> {
                    promotes.fences().recover("m");
                    return null;
                })
                .await()
                .atMost(Duration.ofSeconds(5));
        thread.call(() -> null).await().atMost(Duration.ofSeconds(5)); // what recover handed on, run

        assertThat(host.runtimeAsked).hasValue(0);
        assertThat(host.promotions).containsKey("orders");
    }

    private static PartitionStatus mirroring() {
        return PartitionStatus.initial(NOW)
                .moveTo(MirrorPartitionState.LOG_TRUNCATION, null, NOW)
                .moveTo(MirrorPartitionState.MIRRORING, null, NOW);
    }

    private static TopicPromotion promoted() {
        return TopicPromotion.promoting("orders", true, true, NOW).promoted(List.of(), NOW);
    }

    private TopicPromotes.Attempt drainedAttempt() {
        host.partitions.put(
                ORDERS_0,
                PartitionStatus.initial(NOW)
                        .moveTo(MirrorPartitionState.LOG_TRUNCATION, null, NOW)
                        .moveTo(MirrorPartitionState.MIRRORING, null, NOW));
        host.promotions.put("orders", TopicPromotion.promoting("orders", true, true, NOW));
        TopicPromotes.Attempt a = new TopicPromotes.Attempt(
                "m", new TopicPromotes.Request(List.of("orders"), List.of(), List.of(), 1000, true));
        a.topics = Set.of("orders");
        a.partitions = List.of(ORDERS_0);
        a.proof = Map.of(ORDERS_0, new Drain(10, 3, 10, -1));
        return a;
    }

    /** One mirror "m" held in maps; a DELETE empties them. */
    private static final class FakeHost implements TopicPromotes.Host {
        final Map<MirrorPartition, PartitionStatus> partitions = new TreeMap<>();
        final Map<String, TopicPromotion> promotions = new HashMap<>();
        volatile boolean deleted;
        volatile boolean deleteOnStop;

        @Override
        public Mirror require(String name) {
            if (deleted) {
                throw MirrorException.unknownMirror(name);
            }
            return null;
        }

        @Override
        public <T> Uni<T> onCoordinator(Supplier<T> action) {
            return Uni.createFrom().item(action);
        }

        final AtomicInteger runtimeAsked = new AtomicInteger();

        /** When set, what asking for the mirror's runtime answers (a deleted mirror: nothing is retried). */
        volatile MirrorException runtimeRefusal;

        @Override
        public Uni<MirrorRuntime> runtime(String name) {
            runtimeAsked.incrementAndGet();
            if (!holds) { // as the coordinator refuses a mirror of a state partition it does not hold
                return Uni.createFrom()
                        .failure(new MirrorException(MirrorError.COORDINATOR_NOT_AVAILABLE, "not held here"));
            }
            if (runtimeRefusal != null) {
                return Uni.createFrom().failure(runtimeRefusal);
            }
            throw new UnsupportedOperationException();
        }

        @Override
        public Admin destinationAdmin() {
            throw new UnsupportedOperationException();
        }

        @Override
        public synchronized Map<MirrorPartition, PartitionStatus> partitions(String mirror) {
            return deleted ? Map.of() : Map.copyOf(partitions);
        }

        @Override
        public synchronized Map<String, TopicPromotion> promotions(String mirror) {
            return deleted ? Map.of() : Map.copyOf(promotions);
        }

        @Override
        public synchronized void persist(
                String mirror, Map<String, TopicPromotion> changed, Map<MirrorPartition, PartitionStatus> statuses) {
            changed.forEach((t, p) -> {
                if (p == null) {
                    promotions.remove(t);
                } else {
                    promotions.put(t, p);
                }
            });
            partitions.putAll(statuses);
        }

        @Override
        public synchronized void stopPartitions(String mirror, Collection<MirrorPartition> stopping) {
            // the DELETE of the mirror lands while the partitions stop
            deleted = deleteOnStop;
        }

        @Override
        public Uni<SyncReport> syncGroupOffsets(Mirror mirror, Set<MirrorPartition> partitions) {
            throw new UnsupportedOperationException();
        }

        volatile boolean holds = true;

        @Override
        public boolean holds(String mirror) {
            return holds;
        }

        @Override
        public boolean leaseValid() {
            return true;
        }
    }
}
