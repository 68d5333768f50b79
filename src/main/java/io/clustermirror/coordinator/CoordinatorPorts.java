package io.clustermirror.coordinator;

import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.LossReport;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.PartitionStatus;
import io.clustermirror.mirror.TopicDivergence;
import io.clustermirror.mirror.TopicPromotion;
import io.clustermirror.sync.AdminMetadata;
import io.clustermirror.sync.GroupOffsetSync;
import io.clustermirror.sync.SyncReport;
import io.clustermirror.topics.DestinationTopics;
import io.smallrye.mutiny.Uni;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;

/**
 * The coordinator as each of its rooms sees it: the small interfaces they are written against, implemented over the
 * coordinator's state, its state writer and its runtimes.
 */
final class CoordinatorPorts {

    private CoordinatorPorts() {}

    /** The coordinator as the partition lifecycle sees it. */
    static final class Lifecycle implements PartitionLifecycle.Host {
        private final MirrorCoordinator coordinator;

        Lifecycle(MirrorCoordinator coordinator) {
            this.coordinator = coordinator;
        }

        @Override
        public Map<MirrorPartition, PartitionStatus> partitions(String mirror) {
            return coordinator.keeper().state().partitions(mirror);
        }

        @Override
        public Map<MirrorPartition, LossReport> lossAtStop(String mirror, Collection<MirrorPartition> partitions) {
            return coordinator.lossAtStop(mirror, partitions);
        }

        @Override
        public CompletionStage<Void> liftGuards(Set<String> topics) {
            return DestinationTopics.liftGuards(coordinator.destinationAdmin(), topics);
        }

        @Override
        public void persistPartitions(String mirror, Map<MirrorPartition, PartitionStatus> changed, Runnable then) {
            coordinator.keeper().queuePartitions(mirror, changed, "after a state write of mirror " + mirror, then);
        }

        @Override
        public void persistRecreated(
                String mirror,
                String topic,
                TopicDivergence divergence,
                Map<MirrorPartition, PartitionStatus> changed,
                Runnable then) {
            coordinator.keeper().queueRecreated(mirror, topic, divergence, changed, "after recreating " + topic, then);
        }

        @Override
        public Optional<Mirror> mirror(String name) {
            return Optional.ofNullable(coordinator.keeper().state().mirrors().get(name));
        }

        @Override
        public Mirror require(String name) {
            return coordinator.held().require(name);
        }

        @Override
        public boolean isActive() {
            return coordinator.keeper().status().isActive();
        }

        @Override
        public void withRuntime(String name, Consumer<MirrorParts> then, Consumer<RuntimeException> failed) {
            coordinator.withRuntime(name, then, failed);
        }

        @Override
        public Optional<MirrorRuntime> liveRuntime(String name) {
            return coordinator.runtimes().live(name);
        }
    }

    /** What a start and a promote both need: the active coordinator's mirrors, its thread, the runtimes. */
    private abstract static class Verbs {
        final MirrorCoordinator coordinator;

        Verbs(MirrorCoordinator coordinator) {
            this.coordinator = coordinator;
        }

        public Mirror require(String name) {
            coordinator.held().requireActive();
            return coordinator.held().require(name);
        }

        public <T> Uni<T> onCoordinator(Supplier<T> action) {
            return coordinator.held().onCoordinator(action);
        }

        public Uni<MirrorRuntime> runtime(String name) {
            return coordinator.runtime(name);
        }
    }

    /** The coordinator as a start sees it. */
    static final class Starts extends Verbs implements TopicStarts.Host {

        Starts(MirrorCoordinator coordinator) {
            super(coordinator);
        }

        @Override
        public Map<String, Map<MirrorPartition, PartitionStatus>> allPartitions() {
            return coordinator.keeper().state().partitions();
        }

        @Override
        public Optional<Map<String, Map<MirrorPartition, PartitionStatus>>> everyMirrorsPartitions() {
            return coordinator.keeper().readEveryMirrorsPartitions();
        }

        @Override
        public void persistMirror(Mirror updated) {
            coordinator.keeper().putMirror(updated);
        }

        @Override
        public void persistPartitions(String mirror, Map<MirrorPartition, PartitionStatus> changed) {
            coordinator.persistPartitions(mirror, changed);
        }

        @Override
        public void truncate(String mirror, MirrorPartition partition) {
            coordinator.lifecycle().truncate(mirror, partition);
        }

        @Override
        public void restarted(String mirror, Set<String> topics) {
            coordinator.promotes().fences().restarted(mirror, topics);
        }
    }

    /** The coordinator as a promote sees it. */
    static final class Promotes extends Verbs implements TopicPromotes.Host {
        private final MirrorMetrics metrics;

        Promotes(MirrorCoordinator coordinator, MirrorMetrics metrics) {
            super(coordinator);
            this.metrics = metrics;
        }

        @Override
        public boolean holds(String mirror) {
            return coordinator.held().holds(mirror);
        }

        @Override
        public boolean leaseValid() {
            return coordinator.held().leaseValid();
        }

        @Override
        public Admin destinationAdmin() {
            return coordinator.destinationAdmin();
        }

        @Override
        public Map<MirrorPartition, PartitionStatus> partitions(String mirror) {
            return coordinator.keeper().state().partitions(mirror);
        }

        @Override
        public Map<String, TopicPromotion> promotions(String mirror) {
            return coordinator.keeper().state().promotions(mirror);
        }

        @Override
        public void persist(
                String mirror, Map<String, TopicPromotion> promotions, Map<MirrorPartition, PartitionStatus> changed) {
            coordinator.keeper().putPromotions(mirror, promotions, changed);
        }

        @Override
        public void stopPartitions(String mirror, Collection<MirrorPartition> partitions) {
            coordinator.lifecycle().stopPartitions(mirror, partitions);
        }

        @Override
        public Uni<SyncReport> syncGroupOffsets(Mirror mirror, Set<MirrorPartition> partitions) {
            return coordinator
                    .runtime(mirror.name())
                    .chain(runtime -> GroupOffsetSync.once(
                            mirror,
                            partitions,
                            new AdminMetadata(runtime.sourceAdmin, runtime.workers),
                            new AdminMetadata(coordinator.destinationAdmin(), runtime.workers),
                            metrics));
        }
    }
}
