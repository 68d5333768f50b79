package io.clustermirror.sync;

import io.clustermirror.mirror.AclEntry;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.sync.plan.CommittedOffset;
import io.clustermirror.sync.plan.ConfigSyncPlan;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.errors.CoordinatorNotAvailableException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.GroupNotEmptyException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.OffsetMetadataTooLarge;
import org.apache.kafka.common.errors.SecurityDisabledException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnsupportedVersionException;

/**
 * One cluster's metadata in memory, for the sync steps' unit tests: what a test puts in is what the steps read, and
 * what they write lands here to be asserted. The failures a real cluster gives (no authorizer, a group with members, a
 * topic the service may not describe, no share groups) are switches.
 */
final class FakeCluster implements ClusterMetadata {

    String clusterId = "cluster-a";
    final Map<String, Integer> partitionCounts = new TreeMap<>();
    final Map<String, Map<String, String>> configs = new TreeMap<>();
    final Map<MirrorPartition, Long> ends = new TreeMap<>();
    /** How often the ends were read. */
    final AtomicInteger endReads = new AtomicInteger();

    final Map<GroupKind, Map<String, Map<MirrorPartition, Long>>> offsets = new EnumMap<>(GroupKind.class);
    /** The longest commit metadata the cluster takes (offset.metadata.max.bytes). */
    int metadataMaxBytes = 4096;
    /** The metadata committed with a group's offsets (none: empty). */
    final Map<String, Map<MirrorPartition, String>> commitMetadata = new HashMap<>();

    final Set<AclEntry> acls = new TreeSet<>();
    /** Topics whose configs the service may not describe. */
    final Set<String> unreadableConfigs = new HashSet<>();
    /** Groups with members: their offsets cannot be altered. */
    final Set<String> activeGroups = new HashSet<>();

    boolean noAuthorizer;
    boolean noShareGroups;
    /** Group offsets cannot be read (a timeout, a lost connection). */
    boolean groupOffsetsUnreadable;
    /** Group offsets of these kinds only cannot be read. */
    final Set<GroupKind> unreadableGroupKinds = new HashSet<>();
    /** Kinds whose groups cannot be listed (a coordinator that does not answer). */
    final Set<GroupKind> unlistableGroupKinds = new HashSet<>();
    /** Groups whose offsets cannot be read (their coordinator down), each on its own. */
    final Set<String> unreadableGroups = new HashSet<>();
    /** Groups whose offsets the destination refuses, with or without metadata. */
    final Set<String> refusedGroups = new HashSet<>();
    /** ACLs whose creation the cluster refuses (its authorizer does not take them); the others are created. */
    final Set<AclEntry> refusedAcls = new HashSet<>();
    /** Partitions whose end cannot be read (their leader is down). */
    final Set<MirrorPartition> unreadableEnds = new HashSet<>();
    /** Every write, in order, e.g. "alter config t set {a=1} delete []". */
    final List<String> writes = Collections.synchronizedList(new ArrayList<>());

    FakeCluster() {
        offsets.put(GroupKind.CONSUMER, new TreeMap<>());
        offsets.put(GroupKind.SHARE, new TreeMap<>());
    }

    @Override
    public Uni<String> clusterId() {
        return Uni.createFrom().item(clusterId);
    }

    @Override
    public Uni<Map<String, Integer>> partitionCounts() {
        return Uni.createFrom().item(Map.copyOf(partitionCounts));
    }

    @Override
    public Uni<Map<String, Map<String, String>>> topicConfigs(Set<String> topics, CycleLog log) {
        Map<String, Map<String, String>> result = new HashMap<>();
        topics.forEach(t -> {
            if (unreadableConfigs.contains(t)) {
                log.error(
                        "TopicConfigMetadataSyncError",
                        "config of topic " + t,
                        new TopicAuthorizationException(Set.of(t)));
            } else if (configs.containsKey(t)) {
                result.put(t, Map.copyOf(configs.get(t)));
            }
        });
        return Uni.createFrom().item(result);
    }

    @Override
    public Uni<Void> alterTopicConfigs(Map<String, ConfigSyncPlan> plans, CycleLog log) {
        new TreeMap<>(plans).forEach((topic, plan) -> {
            writes.add("alter config " + topic + " set " + new TreeMap<>(plan.set()) + " delete "
                    + new TreeSet<>(plan.delete()));
            Map<String, String> current = configs.computeIfAbsent(topic, t -> new TreeMap<>());
            current.putAll(plan.set());
            plan.delete().forEach(current::remove);
        });
        return Uni.createFrom().voidItem();
    }

    @Override
    public Uni<EndOffsets> endOffsets(Set<MirrorPartition> partitions) {
        return Uni.createFrom()
                .item(
                        () -> { // read when subscribed, as an Admin call is sent
                            endReads.incrementAndGet();
                            Map<MirrorPartition, Long> result = new HashMap<>();
                            Set<MirrorPartition> unread = new HashSet<>();
                            partitions.forEach(p -> {
                                if (unreadableEnds.contains(p)) {
                                    unread.add(p);
                                } else {
                                    result.put(p, ends.getOrDefault(p, 0L));
                                }
                            });
                            return new EndOffsets(
                                    result, unread, unread.isEmpty() ? null : new TimeoutException("no leader"));
                        });
    }

    @Override
    public Uni<Set<String>> groups(GroupKind kind) {
        if (kind == GroupKind.SHARE && noShareGroups) {
            return Uni.createFrom().failure(new UnsupportedVersionException("share groups are not enabled"));
        }
        if (unlistableGroupKinds.contains(kind)) {
            return Uni.createFrom().failure(new TimeoutException("listing timed out"));
        }
        return Uni.createFrom().item(Set.copyOf(offsets.get(kind).keySet()));
    }

    @Override
    public Uni<GroupOffsets> groupOffsets(GroupKind kind, Set<String> groups, Set<MirrorPartition> partitions) {
        if (groupOffsetsUnreadable || unreadableGroupKinds.contains(kind)) {
            return Uni.createFrom().failure(new TimeoutException("timed out"));
        }
        Map<String, Map<MirrorPartition, CommittedOffset>> result = new HashMap<>();
        Map<String, Throwable> failed = new HashMap<>();
        groups.forEach(g -> {
            if (unreadableGroups.contains(g)) {
                failed.put(g, new CoordinatorNotAvailableException("coordinator down"));
                return;
            }
            Map<MirrorPartition, CommittedOffset> of = new HashMap<>();
            offsets.get(kind).getOrDefault(g, Map.of()).forEach((p, o) -> {
                if (partitions.contains(p)) {
                    of.put(
                            p,
                            new CommittedOffset(
                                    o, commitMetadata.getOrDefault(g, Map.of()).get(p)));
                }
            });
            result.put(g, of);
        });
        return Uni.createFrom().item(new GroupOffsets(result, failed));
    }

    @Override
    public Uni<Void> alterGroupOffsets(GroupKind kind, String group, Map<MirrorPartition, CommittedOffset> committed) {
        if (activeGroups.contains(group)) {
            return Uni.createFrom().failure(new GroupNotEmptyException("group " + group + " has members"));
        }
        if (committed.values().stream().anyMatch(o -> o.metadata().length() > metadataMaxBytes)) {
            return Uni.createFrom().failure(new OffsetMetadataTooLarge("metadata too large"));
        }
        if (refusedGroups.contains(group)) {
            return Uni.createFrom().failure(new GroupAuthorizationException("not authorized"));
        }
        writes.add("commit " + kind + " " + group + " " + new TreeMap<>(committed));
        committed.forEach((p, o) -> {
            offsets.get(kind).computeIfAbsent(group, g -> new TreeMap<>()).put(p, o.offset());
            commitMetadata.computeIfAbsent(group, g -> new TreeMap<>()).put(p, o.metadata());
        });
        return Uni.createFrom().voidItem();
    }

    @Override
    public Uni<Set<AclEntry>> acls() {
        if (noAuthorizer) {
            return Uni.createFrom().failure(new SecurityDisabledException("No Authorizer is configured."));
        }
        return Uni.createFrom().item(Set.copyOf(acls));
    }

    @Override
    public Uni<Void> createAcls(Collection<AclEntry> created) {
        if (!created.isEmpty()) {
            writes.add("create ACLs "
                    + new TreeSet<>(created).stream().map(FakeCluster::brief).toList());
            created.stream().filter(acl -> !refusedAcls.contains(acl)).forEach(acls::add);
        }
        return created.stream().anyMatch(refusedAcls::contains)
                ? Uni.createFrom().failure(new InvalidRequestException("refused ACL"))
                : Uni.createFrom().voidItem();
    }

    @Override
    public Uni<Void> deleteAcls(Collection<AclEntry> deleted) {
        if (!deleted.isEmpty()) {
            writes.add("delete ACLs "
                    + new TreeSet<>(deleted).stream().map(FakeCluster::brief).toList());
            acls.removeAll(deleted);
        }
        return Uni.createFrom().voidItem();
    }

    /** "DENY WRITE TOPIC t for User:*" */
    static String brief(AclEntry acl) {
        return acl.permission() + " " + acl.operation() + " " + acl.resourceType() + " " + acl.resourceName() + " for "
                + acl.principal();
    }
}
