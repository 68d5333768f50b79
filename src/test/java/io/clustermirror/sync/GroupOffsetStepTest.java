package io.clustermirror.sync;

import static io.clustermirror.sync.Fixtures.await;
import static io.clustermirror.sync.Fixtures.mirror;
import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorPartition;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class GroupOffsetStepTest {

    private static final MirrorPartition T0 = new MirrorPartition("t", 0);
    private static final MirrorPartition T1 = new MirrorPartition("t", 1);
    private static final MirrorPartition OTHER = new MirrorPartition("not-mirrored", 0);

    private final Fixtures fixtures = new Fixtures();
    private final FakeCluster source = new FakeCluster();
    private final FakeCluster destination = new FakeCluster();
    private final GroupOffsetStep step = new GroupOffsetStep();

    @Test
    void committedOffsetsShouldBeCopiedUnchangedClampedToTheDestinationsEndForBothGroupKinds() {
        source.offsets.get(GroupKind.CONSUMER).put("billing", Map.of(T0, 40L, T1, 90L, OTHER, 5L));
        source.offsets.get(GroupKind.SHARE).put("workers", Map.of(T0, 12L));
        destination.ends.putAll(Map.of(T0, 50L, T1, 70L));

        await(step.sync(mirror(), Set.of(T0, T1), source, destination, fixtures.log));

        assertThat(destination.writes)
                .containsExactly("commit CONSUMER billing {t-0=40, t-1=70}", "commit SHARE workers {t-0=12}");
        assertThat(destination.endReads)
                .as("the ends are read once for both kinds")
                .hasValue(1);
    }

    @Test
    void aGroupActiveOnTheDestinationShouldBeSkippedAndCountedWhileTheOthersAreSynced() {
        source.offsets.get(GroupKind.CONSUMER).put("busy", Map.of(T0, 4L));
        source.offsets.get(GroupKind.CONSUMER).put("idle", Map.of(T0, 3L));
        destination.ends.put(T0, 10L);
        destination.activeGroups.add("busy");

        await(step.sync(mirror(), Set.of(T0), source, destination, fixtures.log));

        assertThat(destination.writes).containsExactly("commit CONSUMER idle {t-0=3}");
        assertThat(fixtures.report().groupsSkippedActive()).containsExactly("busy");
        assertThat(fixtures.registry
                        .get("cluster.mirror.groups.skipped.active")
                        .counter()
                        .count())
                .isEqualTo(1);
    }

    @Test
    void excludedGroupsAndOffsetsAlreadyInStepShouldCauseNoWrite() {
        source.offsets.get(GroupKind.CONSUMER).put("private-app", Map.of(T0, 4L));
        source.offsets.get(GroupKind.CONSUMER).put("synced", Map.of(T0, 3L));
        destination.offsets.get(GroupKind.CONSUMER).put("synced", Map.of(T0, 3L));
        destination.ends.put(T0, 10L);

        await(step.sync(
                mirror(MirrorConfig.GROUPS_EXCLUDE, "private-.*"), Set.of(T0), source, destination, fixtures.log));

        assertThat(destination.writes).isEmpty();
    }

    @Test
    void aSourceWithoutShareGroupsShouldStillGetItsConsumerGroupsSynced() {
        source.noShareGroups = true;
        source.offsets.get(GroupKind.CONSUMER).put("billing", Map.of(T0, 4L));
        destination.ends.put(T0, 10L);

        await(step.sync(mirror(), Set.of(T0), source, destination, fixtures.log));

        assertThat(destination.writes).containsExactly("commit CONSUMER billing {t-0=4}");
        assertThat(fixtures.report().errors()).isEmpty();
    }

    @Test
    void aDestinationWhoseOffsetsCannotBeReadShouldBeCountedAndStillGetTheSourcesOffsets() {
        source.offsets.get(GroupKind.CONSUMER).put("billing", Map.of(T0, 4L));
        destination.offsets.get(GroupKind.CONSUMER).put("billing", new HashMap<>(Map.of(T0, 4L)));
        destination.ends.put(T0, 10L);
        destination.groupOffsetsUnreadable = true;

        await(step.sync(mirror(), Set.of(T0), source, destination, fixtures.log));

        assertThat(destination.writes)
                .as("written as if the destination had nothing: the same offset again")
                .containsExactly("commit CONSUMER billing {t-0=4}");
        assertThat(fixtures.errors("ConsumerGroupOffsetSyncError")).isEqualTo(1);
        assertThat(fixtures.report().errors()).singleElement().asString().contains("destination offsets", "timed out");
    }

    @Test
    void aPartitionWhoseEndCannotBeReadShouldLeaveOutItsOwnOffsetsOnlyAndBeCounted() {
        source.offsets.get(GroupKind.CONSUMER).put("billing", Map.of(T0, 4L, T1, 5L));
        destination.ends.putAll(Map.of(T0, 10L, T1, 10L));
        destination.unreadableEnds.add(T1);

        await(step.sync(mirror(), Set.of(T0, T1), source, destination, fixtures.log));

        assertThat(destination.writes).containsExactly("commit CONSUMER billing {t-0=4}");
        assertThat(fixtures.errors("ConsumerGroupOffsetSyncError")).isEqualTo(1);
        assertThat(fixtures.report().errors()).singleElement().asString().contains("end offsets", "t-1");
    }

    @Test
    void consumerGroupOffsetsThatCannotBeReadOnTheSourceShouldBeCountedAndShareGroupsStillSynced() {
        source.unreadableGroupKinds.add(GroupKind.CONSUMER);
        source.offsets.get(GroupKind.CONSUMER).put("billing", Map.of(T0, 4L));
        source.offsets.get(GroupKind.SHARE).put("workers", Map.of(T0, 3L));
        destination.ends.put(T0, 10L);

        await(step.sync(mirror(), Set.of(T0), source, destination, fixtures.log));

        assertThat(destination.writes).containsExactly("commit SHARE workers {t-0=3}");
        assertThat(fixtures.errors("ConsumerGroupOffsetSyncError")).isEqualTo(1);
        assertThat(fixtures.report().errors()).singleElement().asString().contains("consumer group offsets");
    }

    @Test
    void theCommitMetadataShouldGoWithItsOffsetAndAChangeOfItAloneBeWritten() {
        source.offsets.get(GroupKind.CONSUMER).put("streams-app", Map.of(T0, 4L));
        source.commitMetadata.put("streams-app", Map.of(T0, "partition-time-1"));
        destination.ends.put(T0, 10L);

        await(step.sync(mirror(), Set.of(T0), source, destination, fixtures.log));
        source.commitMetadata.put("streams-app", Map.of(T0, "partition-time-2"));
        await(step.sync(mirror(), Set.of(T0), source, destination, fixtures.log));
        await(step.sync(mirror(), Set.of(T0), source, destination, fixtures.log));

        assertThat(destination.writes)
                .containsExactly(
                        "commit CONSUMER streams-app {t-0=4 \"partition-time-1\"}",
                        "commit CONSUMER streams-app {t-0=4 \"partition-time-2\"}");
    }

    @Test
    void metadataTheDestinationDoesNotTakeShouldLeaveTheOffsetsCommittedWithoutItAndBeCounted() {
        source.offsets.get(GroupKind.CONSUMER).put("streams-app", Map.of(T0, 4L));
        source.commitMetadata.put("streams-app", Map.of(T0, "x".repeat(100)));
        destination.metadataMaxBytes = 10;
        destination.ends.put(T0, 10L);

        await(step.sync(mirror(), Set.of(T0), source, destination, fixtures.log));

        assertThat(destination.writes).containsExactly("commit CONSUMER streams-app {t-0=4}");
        assertThat(fixtures.errors("ConsumerGroupOffsetSyncError")).isEqualTo(1);
        assertThat(fixtures.report().errors())
                .singleElement()
                .asString()
                .contains("streams-app: committed without its metadata");
    }

    @Test
    void shareGroupsTheSourceCannotListForAnotherReasonThanItsVersionShouldBeCountedEveryCycle() {
        source.unlistableGroupKinds.add(GroupKind.SHARE);
        source.offsets.get(GroupKind.CONSUMER).put("billing", Map.of(T0, 4L));
        destination.ends.put(T0, 10L);

        await(step.sync(mirror(), Set.of(T0), source, destination, fixtures.log));
        await(step.sync(mirror(), Set.of(T0), source, destination, fixtures.log));

        assertThat(destination.writes).containsExactly("commit CONSUMER billing {t-0=4}");
        assertThat(fixtures.errors("ShareGroupOffsetSyncError"))
                .as("a source that cannot have share groups is told once; one that fails to list them every time")
                .isEqualTo(2);
        assertThat(fixtures.report().errors())
                .hasSize(2)
                .allMatch(error -> error.contains("share group offsets") && error.contains("timed out"));
    }

    @Test
    void offsetsRefusedWithoutTheirMetadataTooShouldBeTheGroupsOneError() {
        source.offsets.get(GroupKind.CONSUMER).put("streams-app", Map.of(T0, 4L));
        source.commitMetadata.put("streams-app", Map.of(T0, "x".repeat(100)));
        destination.metadataMaxBytes = 10;
        destination.refusedGroups.add("streams-app");
        destination.ends.put(T0, 10L);

        await(step.sync(mirror(), Set.of(T0), source, destination, fixtures.log));

        assertThat(destination.writes).isEmpty();
        assertThat(fixtures.errors("ConsumerGroupOffsetSyncError")).isEqualTo(1);
        assertThat(fixtures.report().errors())
                .singleElement()
                .asString()
                .contains("streams-app", "with their metadata (metadata too large)", "without it: not authorized");
    }

    @Test
    void aGroupWhoseSourceOffsetsCannotBeReadShouldWaitAloneAndBeCounted() {
        // one group's coordinator down on the source: the other groups' offsets still go
        source.offsets.get(GroupKind.CONSUMER).put("billing", Map.of(T0, 4L));
        source.offsets.get(GroupKind.CONSUMER).put("orders", Map.of(T0, 6L));
        source.unreadableGroups.add("orders");
        destination.ends.put(T0, 10L);

        await(step.sync(mirror(), Set.of(T0), source, destination, fixtures.log));

        assertThat(destination.writes).containsExactly("commit CONSUMER billing {t-0=4}");
        assertThat(fixtures.errors("ConsumerGroupOffsetSyncError")).isEqualTo(1);
        assertThat(fixtures.report().errors())
                .singleElement()
                .asString()
                .contains("source offsets of group orders", "coordinator down");
    }

    @Test
    void aGroupWhoseDestinationCoordinatorDoesNotAnswerShouldWaitAloneWithOneError() {
        source.offsets.get(GroupKind.CONSUMER).put("billing", Map.of(T0, 4L));
        source.offsets.get(GroupKind.CONSUMER).put("orders", Map.of(T0, 6L));
        destination.offsets.get(GroupKind.CONSUMER).put("billing", new HashMap<>(Map.of(T0, 4L)));
        destination.unreadableGroups.add("billing");
        destination.ends.put(T0, 10L);

        await(step.sync(mirror(), Set.of(T0), source, destination, fixtures.log));

        assertThat(destination.writes)
                .as("the group whose coordinator does not answer waits for the next cycle; the other is written")
                .containsExactly("commit CONSUMER orders {t-0=6}");
        assertThat(fixtures.errors("ConsumerGroupOffsetSyncError")).isEqualTo(1);
        assertThat(fixtures.report().errors())
                .singleElement()
                .asString()
                .contains("destination offsets of group billing");
    }

    @Test
    void endsThatCannotBeReadShouldBeTheErrorOfTheKindThatNeedsThemOnceACycle() {
        // only share groups to sync: the unread end is theirs, not the consumer groups'
        source.offsets.get(GroupKind.SHARE).put("workers", Map.of(T0, 3L, T1, 2L));
        destination.ends.putAll(Map.of(T0, 10L, T1, 10L));
        destination.unreadableEnds.add(T1);

        await(step.sync(mirror(), Set.of(T0, T1), source, destination, fixtures.log));

        assertThat(destination.writes).containsExactly("commit SHARE workers {t-0=3}");
        assertThat(fixtures.errors("ShareGroupOffsetSyncError")).isEqualTo(1);
        assertThat(fixtures.errors("ConsumerGroupOffsetSyncError")).isZero();
    }
}
