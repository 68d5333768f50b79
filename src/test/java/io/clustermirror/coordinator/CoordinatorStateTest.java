package io.clustermirror.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.mirror.AclEntry;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionStatus;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class CoordinatorStateTest {

    private static final Instant NOW = Instant.parse("2026-12-01T00:00:00Z");
    private static final MirrorPartition T0 = new MirrorPartition("t", 0);
    private static final MirrorPartition T1 = new MirrorPartition("t", 1);

    private static Mirror mirror(String name) {
        return new Mirror(name, new MirrorConfig(Map.of("bootstrap.servers", "k:9092")), "cluster", NOW, NOW);
    }

    private static PartitionStatus truncating() {
        return PartitionStatus.initial(NOW).moveTo(MirrorPartitionState.LOG_TRUNCATION, null, NOW);
    }

    @Test
    void aChangeShouldMakeANewStateAndLeaveTheOldOneAsItWas() {
        CoordinatorState empty = CoordinatorState.EMPTY;
        CoordinatorState one = empty.with(mirror("a")).withPartitions("a", Map.of(T0, truncating()));

        assertThat(empty.mirrors()).isEmpty();
        assertThat(one.mirrors()).containsOnlyKeys("a");
        assertThat(one.partitions("a")).containsOnlyKeys(T0);
        assertThat(one.partitions("unknown")).isEmpty();
    }

    @Test
    void partitionChangesShouldMergeIntoTheMirrorsPartitions() {
        PartitionStatus mirroring = truncating().moveTo(MirrorPartitionState.MIRRORING, null, NOW);
        CoordinatorState state = CoordinatorState.EMPTY
                .with(mirror("a"))
                .withPartitions("a", Map.of(T0, truncating(), T1, truncating()))
                .withPartitions("a", Map.of(T1, mirroring));

        assertThat(state.partitions("a")).containsEntry(T0, truncating()).containsEntry(T1, mirroring);
    }

    @Test
    void withoutAMirrorShouldDropItsPartitionsAndItsAclBookkeeping() {
        AclEntry guard = AclEntry.readOnly("t");
        CoordinatorState state = CoordinatorState.EMPTY
                .with(mirror("a"))
                .with(mirror("b"))
                .withPartitions("a", Map.of(T0, truncating()))
                .withCreatedAcls("a", Set.of(guard))
                .withPartitions("b", Map.of(T1, truncating()));

        CoordinatorState after = state.without("a");

        assertThat(after.mirrors()).containsOnlyKeys("b");
        assertThat(after.partitions("a")).isEmpty();
        assertThat(after.createdAcls("a")).isEmpty();
        assertThat(after.partitions("b")).containsOnlyKeys(T1);
        assertThat(state.createdAcls("a")).containsExactly(guard);
    }

    @Test
    void verifiedOffsetsShouldMergeByPartitionAndGoWithTheirMirror() {
        CoordinatorState state = CoordinatorState.EMPTY
                .with(mirror("a"))
                .withVerified("a", Map.of(T0, 10L, T1, 20L))
                .withVerified("a", Map.of(T1, 25L));

        assertThat(state.verified("a")).containsEntry(T0, 10L).containsEntry(T1, 25L);
        assertThat(state.verified("b")).isEmpty();
        assertThat(state.without("a").verified("a")).isEmpty();
        assertThat(state.withoutVerified("a", List.of(T1)).verified("a")).containsOnlyKeys(T0);
    }
}
