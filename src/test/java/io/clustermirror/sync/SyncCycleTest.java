package io.clustermirror.sync;

import static io.clustermirror.sync.Fixtures.await;
import static io.clustermirror.sync.Fixtures.in;
import static io.clustermirror.sync.Fixtures.mirror;
import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.mirror.AclEntry;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionStatus;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** A whole cycle against a fake coordinator and two fake clusters: the steps' order and what happens to the actions. */
class SyncCycleTest {

    private final Fixtures fixtures = new Fixtures();
    private final FakeCluster source = new FakeCluster();
    private final FakeCluster destination = new FakeCluster();
    private final FakeHost host = new FakeHost();
    private final SyncCycle cycle =
            new SyncCycle(host, "__mirror_state", new GroupOffsetStep(), new AclStep(fixtures.metrics));

    @Test
    void aSourceWithAnotherClusterIdShouldHaltTheMirrorAndSyncNothingElse() {
        source.clusterId = "cluster-b";
        source.partitionCounts.put("t", 1);
        host.partitions.put(new MirrorPartition("t", 0), in(MirrorPartitionState.MIRRORING));

        await(cycle.run(mirror(MirrorConfig.TOPICS_INCLUDE, ".*"), fixtures.log));

        assertThat(host.applied).containsExactly(new SyncAction.Halt("cluster-b"));
        assertThat(destination.writes).isEmpty();
        assertThat(fixtures.report().errors())
                .containsExactly("source cluster id is cluster-b, expected cluster-a: mirror halted");
    }

    @Test
    void topicsStartedByTheCycleShouldGetTheirGuardsAtOnceAndConfigsAndGroupOffsetsFromTheNextCycle() {
        source.partitionCounts.put("t", 1);
        source.configs.put("t", Map.of("retention.ms", "1000"));
        source.offsets.get(GroupKind.CONSUMER).put("billing", Map.of(new MirrorPartition("t", 0), 3L));
        destination.ends.put(new MirrorPartition("t", 0), 10L);
        destination.configs.put("t", new HashMap<>()); // the destination may not serve the topic it just created yet

        await(cycle.run(mirror(MirrorConfig.TOPICS_INCLUDE, "t"), fixtures.log));

        assertThat(host.applied).containsExactly(new SyncAction.StartTopics(Set.of("t")));
        assertThat(destination.writes).containsExactly("create ACLs [DENY WRITE TOPIC t for User:*]");
        assertThat(fixtures.report().errors()).isEmpty();

        host.partitions.put(new MirrorPartition("t", 0), in(MirrorPartitionState.MIRRORING));
        await(cycle.run(mirror(MirrorConfig.TOPICS_INCLUDE, "t"), fixtures.log));

        assertThat(host.applied).hasSize(1); // started once
        assertThat(destination.writes)
                .containsExactly(
                        "create ACLs [DENY WRITE TOPIC t for User:*]",
                        "alter config t set {retention.ms=1000} delete []",
                        "commit CONSUMER billing {t-0=3}");
    }

    @Test
    void groupOffsetsShouldBeSyncedOnlyForMirroringPartitions() {
        // a FAILED partition may hold a divergent tail (a failback with truncation policy fail), one in LOG_TRUNCATION
        // or EPOCH_FENCING one not dealt with yet, and a PAUSED one has no metadata sync (KIP-1279)
        List<MirrorPartitionState> states = List.of(
                MirrorPartitionState.MIRRORING,
                MirrorPartitionState.FAILED,
                MirrorPartitionState.LOG_TRUNCATION,
                MirrorPartitionState.EPOCH_FENCING,
                MirrorPartitionState.PAUSING,
                MirrorPartitionState.PAUSED);
        source.partitionCounts.put("t", states.size());
        source.configs.put("t", Map.of());
        destination.configs.put("t", new HashMap<>());
        Map<MirrorPartition, Long> committed = new TreeMap<>();
        for (int p = 0; p < states.size(); p++) {
            host.partitions.put(new MirrorPartition("t", p), in(states.get(p)));
            committed.put(new MirrorPartition("t", p), 3L);
            destination.ends.put(new MirrorPartition("t", p), 10L);
        }
        source.offsets.get(GroupKind.CONSUMER).put("billing", committed);

        await(cycle.run(mirror(MirrorConfig.TOPICS_INCLUDE, "t"), fixtures.log));

        assertThat(destination.writes).contains("commit CONSUMER billing {t-0=3}");
        assertThat(destination.writes.stream().filter(w -> w.startsWith("commit")))
                .hasSize(1);
    }

    @Test
    void groupsAreLookedUpBeforeTheDestinationsEndsWhichAreNotReadWithoutAGroupToSync() {
        source.partitionCounts.put("t", 1);
        host.partitions.put(new MirrorPartition("t", 0), in(MirrorPartitionState.MIRRORING));
        destination.ends.put(new MirrorPartition("t", 0), 10L);
        destination.configs.put("t", new HashMap<>());
        source.configs.put("t", Map.of());

        await(cycle.run(mirror(MirrorConfig.TOPICS_INCLUDE, "t"), fixtures.log));

        assertThat(destination.endReads).hasValue(0);
        assertThat(fixtures.report().errors()).isEmpty();
    }

    @Test
    void whatAnActionCouldNotDoShouldBeReportedAndTheCycleGoOn() {
        source.partitionCounts.putAll(Map.of("t", 2, "u", 1));
        host.partitions.put(new MirrorPartition("t", 0), in(MirrorPartitionState.MIRRORING));
        host.answers.put(SyncAction.StartTopics.class, List.of("u: TOPIC_ALREADY_EXISTS destination topic exists"));
        host.failing.add(SyncAction.ExpandTopic.class);

        await(cycle.run(mirror(MirrorConfig.TOPICS_INCLUDE, ".*"), fixtures.log));

        assertThat(host.applied)
                .containsExactly(new SyncAction.StartTopics(Set.of("u")), new SyncAction.ExpandTopic("t"));
        assertThat(fixtures.report().errors())
                .containsExactly("u: TOPIC_ALREADY_EXISTS destination topic exists", "expand t: could not apply");
        // both counted: a new topic the start refused is never mirrored, and an alert on sync errors must see it
        assertThat(fixtures.errors(SyncCycle.REFRESH_ERROR)).isEqualTo(2);
        assertThat(destination.writes)
                .containsExactly("create ACLs [DENY WRITE TOPIC t for User:*, DENY WRITE TOPIC u for User:*]");
    }

    @Test
    void anUnreachableSourceShouldEndTheCycleWithOneError() {
        host.sourceFailure = new IllegalStateException("Timed out waiting for a node assignment");

        await(cycle.run(mirror(), fixtures.log));

        assertThat(fixtures.report().errors())
                .containsExactly("metadata refresh: Timed out waiting for a node assignment");
        assertThat(host.applied).isEmpty();
    }

    @Test
    void theRightClusterAgainShouldUnhaltAndSyncInTheSameCycle() {
        host.halted = "source cluster id is cluster-b";
        host.partitions.put(new MirrorPartition("t", 0), in(MirrorPartitionState.MIRRORING));
        source.partitionCounts.put("t", 1);

        await(cycle.run(mirror(), fixtures.log));

        assertThat(host.applied).containsExactly(new SyncAction.Unhalt());
        assertThat(destination.writes).containsExactly("create ACLs [DENY WRITE TOPIC t for User:*]");
    }

    /** The coordinator: applies a start by adding the topic's partitions in LOG_TRUNCATION, answers as scripted. */
    private final class FakeHost implements SyncHost {
        final Map<MirrorPartition, PartitionStatus> partitions = new TreeMap<>();
        final List<SyncAction> applied = Collections.synchronizedList(new ArrayList<>());
        final Map<Class<?>, List<String>> answers = new HashMap<>();
        final Set<Class<?>> failing = new HashSet<>();
        Set<AclEntry> created = new TreeSet<>();
        RuntimeException sourceFailure;
        String halted;

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
            return Map.copyOf(partitions);
        }

        @Override
        public String haltedReason(String mirror) {
            return halted;
        }

        @Override
        public Uni<ClusterMetadata> source(String mirror) {
            return sourceFailure != null
                    ? Uni.createFrom().failure(sourceFailure)
                    : Uni.createFrom().item(source);
        }

        @Override
        public Uni<ClusterMetadata> destination(String mirror) {
            return Uni.createFrom().item(destination);
        }

        @Override
        public Uni<List<String>> apply(String mirror, SyncAction action) {
            applied.add(action);
            if (failing.contains(action.getClass())) {
                return Uni.createFrom().failure(new IllegalStateException("could not apply"));
            }
            if (action instanceof SyncAction.StartTopics start) {
                start.topics()
                        .forEach(t ->
                                partitions.put(new MirrorPartition(t, 0), in(MirrorPartitionState.LOG_TRUNCATION)));
            }
            return Uni.createFrom().item(answers.getOrDefault(action.getClass(), List.of()));
        }

        @Override
        public Set<AclEntry> createdAcls(String mirror) {
            return created;
        }

        @Override
        public Uni<Void> recordCreatedAcls(String mirror, Set<AclEntry> acls) {
            created = new TreeSet<>(acls);
            return Uni.createFrom().voidItem();
        }
    }
}
