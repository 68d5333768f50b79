package io.clustermirror.sync;

import static io.clustermirror.sync.Fixtures.await;
import static io.clustermirror.sync.Fixtures.in;
import static io.clustermirror.sync.Fixtures.mirror;
import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionStatus;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TopicStepTest {

    private final FakeCluster source = new FakeCluster();

    @Test
    void newMatchesGrownTopicsAndTopicsGoneFromTheSourceShouldBecomeStartExpandAndStopInThatOrder() {
        source.partitionCounts.putAll(
                Map.of("orders", 3, "payments", 1, "audit", 1, "__mirror_state", 1, "__consumer_offsets", 50));
        Map<MirrorPartition, PartitionStatus> owned = Map.of(
                new MirrorPartition("orders", 0), in(MirrorPartitionState.MIRRORING),
                new MirrorPartition("orders", 1), in(MirrorPartitionState.MIRRORING),
                new MirrorPartition("gone", 0), in(MirrorPartitionState.MIRRORING));

        var actions = await(TopicStep.plan(
                mirror(MirrorConfig.TOPICS_INCLUDE, "orders|payments|__.*"), owned, "__mirror_state", source));

        assertThat(actions)
                .containsExactly(
                        new SyncAction.StartTopics(
                                Set.of("payments")), // audit does not match; internal topics never start
                        new SyncAction.ExpandTopic("orders"),
                        new SyncAction.StopTopics(Set.of("gone"), TopicStep.DELETED_ON_SOURCE));
    }

    @Test
    void aStoppedTopicShouldNeitherStartAgainNorBeStoppedTwice() {
        source.partitionCounts.put("orders", 2);
        Map<MirrorPartition, PartitionStatus> owned = Map.of(
                new MirrorPartition("orders", 0), in(MirrorPartitionState.STOPPED),
                new MirrorPartition("gone", 0), in(MirrorPartitionState.STOPPED));

        assertThat(await(TopicStep.plan(mirror(MirrorConfig.TOPICS_INCLUDE, ".*"), owned, "__mirror_state", source)))
                .isEmpty();
    }

    @Test
    void aMirrorWithoutIncludePatternsShouldStartNothingByItself() {
        source.partitionCounts.put("orders", 1);

        assertThat(await(TopicStep.plan(mirror(), Map.of(), "__mirror_state", source)))
                .isEmpty();
    }
}
