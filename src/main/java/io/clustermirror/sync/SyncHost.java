package io.clustermirror.sync;

import io.clustermirror.mirror.AclEntry;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.PartitionStatus;
import io.smallrye.mutiny.Uni;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the metadata manager needs from the owner of the mirrors (the coordinator, which implements it): their state to
 * read, both clusters' metadata, and someone to apply the {@link SyncAction}s a cycle asks for, validated, persisted and
 * applied there. The arrow points from the coordinator to the sync, never back.
 */
public interface SyncHost {

    /** Whether the mirrors are loaded and this instance may act on them. */
    boolean isActive();

    List<Mirror> list();

    Map<MirrorPartition, PartitionStatus> partitions(String mirror);

    /** Why the mirror is halted, or null. */
    String haltedReason(String mirror);

    /** The mirror's source cluster (through its data plane's Admin, built on first use). */
    Uni<ClusterMetadata> source(String mirror);

    /** The destination cluster as the mirror's cycle reaches it (its steps run on the mirror's workers). */
    Uni<ClusterMetadata> destination(String mirror);

    /** Applies the action; what could not be done, item by item, as "topic: reason" (empty when all was done). */
    Uni<List<String>> apply(String mirror, SyncAction action);

    /** The ACLs this mirror created on the destination (tracked in the state topic). */
    Set<AclEntry> createdAcls(String mirror);

    /** Persists the ACLs this mirror has created, before they are relied on for deletion. */
    Uni<Void> recordCreatedAcls(String mirror, Set<AclEntry> acls);
}
