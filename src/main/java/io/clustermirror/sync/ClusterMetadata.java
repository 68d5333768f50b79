package io.clustermirror.sync;

import io.clustermirror.mirror.AclEntry;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.sync.plan.CommittedOffset;
import io.clustermirror.sync.plan.ConfigSyncPlan;
import io.smallrye.mutiny.Uni;
import java.util.Collection;
import java.util.Map;
import java.util.Set;

/**
 * One cluster's metadata as the sync steps read and write it, in the mirror's own terms. {@link AdminMetadata} is the
 * real one (an Admin client, nothing blocks); the steps' unit tests use in-memory fakes. A call that fails as a whole
 * fails its Uni; where items fail one by one (configs of one topic), the failure goes to the {@link CycleLog} and the
 * others go on.
 */
public interface ClusterMetadata {

    Uni<String> clusterId();

    /** Every topic with its partition count. */
    Uni<Map<String, Integer>> partitionCounts();

    /** The configs set explicitly on each topic (dynamic topic configs); a topic whose describe failed is missing. */
    Uni<Map<String, Map<String, String>>> topicConfigs(Set<String> topics, CycleLog log);

    /** Applies each topic's config plan; a topic whose alter failed is logged. */
    Uni<Void> alterTopicConfigs(Map<String, ConfigSyncPlan> plans, CycleLog log);

    /**
     * The log end offset of each partition; a partition whose end could not be read (its leader down) is in
     * {@link EndOffsets#unread} only, so its group offsets wait for a cycle that reads it.
     */
    Uni<EndOffsets> endOffsets(Set<MirrorPartition> partitions);

    /** The ends that were read, the partitions whose end was not, and the first reason. */
    record EndOffsets(Map<MirrorPartition, Long> read, Set<MirrorPartition> unread, Throwable failure) {
        public EndOffsets {
            read = Map.copyOf(read);
            unread = Set.copyOf(unread);
        }
    }

    /** The groups of this kind; fails when the cluster cannot list them (share groups before Kafka 4.1). */
    Uni<Set<String>> groups(GroupKind kind);

    /**
     * Each group's committed offsets, with their metadata, on the given partitions (partitions without one are
     * missing); a group whose read failed (its coordinator down) is in {@link GroupOffsets#failed} only, so one group
     * does not hold up the others.
     */
    Uni<GroupOffsets> groupOffsets(GroupKind kind, Set<String> groups, Set<MirrorPartition> partitions);

    /** The offsets of the groups that were read, and why each of the others was not. */
    record GroupOffsets(Map<String, Map<MirrorPartition, CommittedOffset>> read, Map<String, Throwable> failed) {
        public GroupOffsets {
            read = Map.copyOf(read);
            failed = Map.copyOf(failed);
        }
    }

    /**
     * Commits the offsets, with their metadata (a share group's start offsets have none), for the group; fails with
     * GroupNotEmptyException or UnknownMemberIdException while it has members.
     */
    Uni<Void> alterGroupOffsets(GroupKind kind, String group, Map<MirrorPartition, CommittedOffset> offsets);

    /** Every ACL; fails with SecurityDisabledException when the cluster has no authorizer. */
    Uni<Set<AclEntry>> acls();

    Uni<Void> createAcls(Collection<AclEntry> acls);

    Uni<Void> deleteAcls(Collection<AclEntry> acls);
}
