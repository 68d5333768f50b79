package io.clustermirror.sync.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.mirror.AclEntry;
import io.clustermirror.mirror.AclRule;
import io.clustermirror.mirror.MirrorPartition;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SyncPlanTest {

    private static final NameFilter ORDERS = NameFilter.of(List.of("orders\\..*"), List.of("__.*", "orders\\.tmp.*"));

    @Test
    void filterShouldNeedAnIncludeAndNoExclude() {
        assertThat(ORDERS.matches("orders.eu")).isTrue();
        assertThat(ORDERS.matches("orders.tmp1")).isFalse();
        assertThat(ORDERS.matches("payments")).isFalse();
        assertThat(NameFilter.of(List.of(), List.of()).matches("anything")).isFalse();
    }

    @Test
    void planShouldNeverStartTheStateTopicOrInternalTopicsWhateverThePatterns() {
        NameFilter everything = NameFilter.of(List.of(".*"), List.of());
        TopicSyncPlan plan = TopicSyncPlan.plan(
                Map.of(
                        "cm-state",
                        1,
                        "__mirror_state",
                        50,
                        "__mirror_state_b",
                        50,
                        "__consumer_offsets",
                        50,
                        "__app",
                        1),
                Map.of(),
                Set.of(),
                everything,
                "cm-state");

        assertThat(plan.newTopics()).containsExactly("__app");
    }

    @Test
    void planShouldStartNewMatchingTopicsOnly() {
        TopicSyncPlan plan = TopicSyncPlan.plan(
                Map.of("orders.eu", 3, "orders.tmp1", 1, "payments", 2, "__consumer_offsets", 50),
                Map.of(),
                Set.of(),
                ORDERS);

        assertThat(plan.newTopics()).containsExactly("orders.eu");
        assertThat(plan.expanded()).isEmpty();
        assertThat(plan.deletedOnSource()).isEmpty();
    }

    @Test
    void planShouldExpandPartitionsWhenSourceGrew() {
        TopicSyncPlan plan = TopicSyncPlan.plan(
                Map.of("orders.eu", 6, "payments", 2), Map.of("orders.eu", 3, "payments", 2), Set.of(), ORDERS);

        assertThat(plan.expanded()).containsExactly(Map.entry("orders.eu", 6));
        assertThat(plan.newTopics()).isEmpty();
    }

    @Test
    void planShouldStopTopicsDeletedOnTheSourceButLeaveStoppedOnesAlone() {
        TopicSyncPlan plan = TopicSyncPlan.plan(
                Map.of("orders.eu", 3),
                Map.of("orders.eu", 3, "gone", 1, "gone.stopped", 1),
                Set.of("gone.stopped"),
                ORDERS);

        assertThat(plan.deletedOnSource()).containsExactly("gone");
    }

    @Test
    void planShouldNotRestartATopicAnOperatorStopped() {
        TopicSyncPlan plan =
                TopicSyncPlan.plan(Map.of("orders.eu", 6), Map.of("orders.eu", 3), Set.of("orders.eu"), ORDERS);

        assertThat(plan.isEmpty()).isTrue();
    }

    @Test
    void configDiffShouldSetChangedAndDeleteResetKeysButNeverExcludedOrOwned() {
        ConfigSyncPlan plan = ConfigSyncPlan.diff(
                Map.of(
                        "retention.ms",
                        "1000",
                        "cleanup.policy",
                        "compact",
                        "min.insync.replicas",
                        "2",
                        "compression.type",
                        "zstd"),
                Map.of(
                        "retention.ms",
                        "5000",
                        "segment.ms",
                        "100",
                        "compression.type",
                        "producer",
                        "unclean.leader.election.enable",
                        "true"),
                Set.of("min.insync.replicas", "unclean.leader.election.enable"),
                Set.of("compression.type"));

        assertThat(plan.set())
                .containsExactlyInAnyOrderEntriesOf(Map.of("retention.ms", "1000", "cleanup.policy", "compact"));
        assertThat(plan.delete()).containsExactly("segment.ms");
    }

    @Test
    void configDiffOfEqualConfigsShouldBeEmpty() {
        assertThat(ConfigSyncPlan.diff(Map.of("retention.ms", "1"), Map.of("retention.ms", "1"), Set.of(), Set.of())
                        .isEmpty())
                .isTrue();
    }

    @Test
    void offsetsShouldBeCopiedUnchangedClampedAndFiltered() {
        MirrorPartition p0 = new MirrorPartition("orders", 0);
        MirrorPartition p1 = new MirrorPartition("orders", 1);
        MirrorPartition other = new MirrorPartition("not-mirrored", 0);
        NameFilter groups = NameFilter.of(List.of(".*"), List.of("internal-.*"));

        Map<String, Map<MirrorPartition, CommittedOffset>> commits = OffsetSyncPlan.plan(
                Map.of(
                        "app",
                        Map.of(p0, at(42), p1, new CommittedOffset(900, "streams-time"), other, at(5)),
                        "internal-x",
                        Map.of(p0, at(1)),
                        "done",
                        Map.of(p0, at(10)),
                        "new-metadata",
                        Map.of(p0, new CommittedOffset(10, "v2"))),
                Map.of(p0, 100L, p1, 500L),
                Map.of("done", Map.of(p0, at(10)), "new-metadata", Map.of(p0, new CommittedOffset(10, "v1"))),
                groups);

        assertThat(commits).containsOnlyKeys("app", "new-metadata");
        // the metadata goes with its offset, clamped or not
        assertThat(commits.get("app"))
                .containsExactlyInAnyOrderEntriesOf(Map.of(p0, at(42), p1, new CommittedOffset(500, "streams-time")));
        assertThat(commits.get("new-metadata")).containsExactly(Map.entry(p0, new CommittedOffset(10, "v2")));
    }

    private static CommittedOffset at(long offset) {
        return CommittedOffset.of(offset);
    }

    private static AclEntry acl(String topic, String principal, String operation, String permission) {
        return new AclEntry("TOPIC", "LITERAL", topic, principal, "*", operation, permission);
    }

    @Test
    void aclPlanShouldCreateMatchingMissingAndDeleteOnlyWhatTheMirrorCreated() {
        var rules = List.of(AclRule.parse("TOPIC;orders.*;*;ALLOW;*"));
        var readAlice = acl("orders", "User:alice", "READ", "ALLOW");
        var writeBob = acl("orders", "User:bob", "WRITE", "ALLOW");
        var denyEve = acl("orders", "User:eve", "READ", "DENY");
        var otherTopic = acl("payments", "User:alice", "READ", "ALLOW");
        var gone = acl("orders.old", "User:carol", "READ", "ALLOW");
        var local = acl("orders", "User:local", "READ", "ALLOW");

        AclSyncPlan plan = AclSyncPlan.plan(
                List.of(readAlice, writeBob, denyEve, otherTopic),
                List.of(writeBob, gone, local, AclEntry.readOnly("orders")),
                Set.of(writeBob, gone),
                rules);

        assertThat(plan.create()).containsExactly(readAlice);
        assertThat(plan.delete()).containsExactly(gone);
        assertThat(plan.created()).containsExactlyInAnyOrder(readAlice, writeBob);
    }

    @Test
    void aclPlanShouldNeverCopyAReadOnlyGuard() {
        var rules = List.of(AclRule.parse("*;.*;*;*;*"));

        AclSyncPlan plan = AclSyncPlan.plan(List.of(AclEntry.readOnly("orders")), List.of(), Set.of(), rules);

        assertThat(plan.isEmpty()).isTrue();
    }
}
