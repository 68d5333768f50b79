package io.clustermirror.sync;

import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.admin.Admin;

import io.clustermirror.mirror.AclEntry;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.PartitionStatus;
import io.smallrye.mutiny.Uni;

/**
 * What the metadata manager needs from the owner of the mirrors (the coordinator, which implements it): their state to
 * read, the clients to reach both clusters, and the changes a sync cycle asks for, which the owner validates, persists
 * and applies. The arrow points from the coordinator to the sync, never back.
 */
public interface SyncHost {

    /** Whether the mirrors are loaded and this instance may act on them. */
    boolean isActive();

    List<Mirror> list();

    Map<MirrorPartition, PartitionStatus> partitions(String mirror);

    /** The mirror's source Admin (its data plane's). */
    Uni<Admin> sourceAdmin(String mirror);

    Admin destination();

    /** The source answers with another cluster id: the mirror stops mirroring until {@link #unhalt} finds the right one. */
    void halt(String mirror, String actualClusterId);

    void unhalt(String mirror);

    /** Why the mirror is halted, or null. */
    String haltedReason(String mirror);

    /** Starts source topics the include patterns matched; the topics that could not be started, as "topic: reason". */
    Uni<List<String>> startDiscovered(String mirror, Set<String> topics);

    /** The source topic has more partitions: the destination's grow and the new ones are mirrored; how many were added. */
    Uni<Integer> expand(String mirror, String topic);

    /** Mirrored topics deleted on the source are stopped (kept, writable); the topics that could not be, as "topic: reason". */
    Uni<List<String>> stopDeletedOnSource(String mirror, Set<String> topics);

    /** The ACLs this mirror created on the destination (tracked in the state topic). */
    Set<AclEntry> createdAcls(String mirror);

    /** Persists the ACLs this mirror has created, before they are relied on for deletion. */
    Uni<Void> recordCreatedAcls(String mirror, Set<AclEntry> acls);
}
