package io.clustermirror.sync;

import io.clustermirror.kafka.AclConversions;
import io.clustermirror.kafka.KafkaUni;
import io.clustermirror.mirror.AclEntry;
import io.clustermirror.mirror.Failures;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.sync.plan.CommittedOffset;
import io.clustermirror.sync.plan.ConfigSyncPlan;
import io.clustermirror.sync.plan.ShareOffsetReadBack;
import io.clustermirror.topics.OffsetLookup;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/** {@link ClusterMetadata} over an Admin client: every call is asynchronous, completing on the Admin's network thread. */
public final class AdminMetadata implements ClusterMetadata {

    private static final String CONFIG_ERROR = "TopicConfigMetadataSyncError";

    private final Admin admin;
    /** Where what follows an answer runs: the mirror's share of the worker pool (never the Admin's network thread). */
    private final Executor continuations;

    public AdminMetadata(Admin admin, Executor continuations) {
        this.admin = admin;
        this.continuations = continuations;
    }

    @Override
    public Uni<String> clusterId() {
        return KafkaUni.of(continuations, admin.describeCluster().clusterId());
    }

    @Override
    public Uni<Map<String, Integer>> partitionCounts() {
        return KafkaUni.of(continuations, admin.listTopics().names())
                .chain(names -> names.isEmpty()
                        ? Uni.createFrom().item(Map.<String, Integer>of())
                        : KafkaUni.of(continuations, admin.describeTopics(names).allTopicNames())
                                .map(descriptions -> {
                                    Map<String, Integer> counts = new HashMap<>();
                                    descriptions.forEach((t, d) ->
                                            counts.put(t, d.partitions().size()));
                                    return counts;
                                }));
    }

    @Override
    public Uni<Map<String, Map<String, String>>> topicConfigs(Set<String> topics, CycleLog log) {
        Map<String, KafkaFuture<Config>> futures = new HashMap<>();
        admin.describeConfigs(topics.stream().map(AdminMetadata::resource).toList())
                .values()
                .forEach((resource, future) -> futures.put(resource.name(), future));
        return each(futures, log, true).map(configs -> {
            Map<String, Map<String, String>> explicit = new HashMap<>();
            configs.forEach((topic, config) -> {
                Map<String, String> values = new HashMap<>(); // a sensitive value reads null
                config.entries().stream()
                        .filter(e -> e.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG)
                        .forEach(e -> values.put(e.name(), e.value()));
                explicit.put(topic, values);
            });
            return explicit;
        });
    }

    @Override
    public Uni<Void> alterTopicConfigs(Map<String, ConfigSyncPlan> plans, CycleLog log) {
        if (plans.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        Map<ConfigResource, Collection<AlterConfigOp>> ops = new HashMap<>();
        plans.forEach((topic, plan) -> {
            List<AlterConfigOp> list = new ArrayList<>();
            plan.set().forEach((k, v) -> list.add(new AlterConfigOp(new ConfigEntry(k, v), AlterConfigOp.OpType.SET)));
            plan.delete()
                    .forEach(k -> list.add(new AlterConfigOp(new ConfigEntry(k, ""), AlterConfigOp.OpType.DELETE)));
            ops.put(resource(topic), list);
        });
        Map<String, KafkaFuture<Boolean>> futures =
                new HashMap<>(); // a Void future completes with null, which no map entry holds
        admin.incrementalAlterConfigs(ops)
                .values()
                .forEach((resource, future) -> futures.put(resource.name(), future.thenApply(v -> true)));
        return each(futures, log, false).replaceWithVoid();
    }

    @Override
    public Uni<EndOffsets> endOffsets(Set<MirrorPartition> partitions) {
        Set<TopicPartition> tps = new HashSet<>();
        partitions.forEach(p -> tps.add(tp(p)));
        // each partition on its own: a group offset is only ever clamped to an end that was read, and a partition whose
        // end was not (its leader down) leaves out its own offsets only
        return Uni.createFrom()
                .completionStage(
                        () -> new OffsetLookup(admin).list(tps, OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED))
                .emitOn(continuations)
                .map(listed -> {
                    Map<MirrorPartition, Long> offsets = new HashMap<>();
                    listed.found()
                            .forEach((tp, info) ->
                                    offsets.put(new MirrorPartition(tp.topic(), tp.partition()), info.offset()));
                    Set<MirrorPartition> unread = new HashSet<>();
                    listed.failedPartitions()
                            .forEach(tp -> unread.add(new MirrorPartition(tp.topic(), tp.partition())));
                    return new EndOffsets(offsets, unread, listed.firstFailure().orElse(null));
                });
    }

    @Override
    public Uni<Set<String>> groups(GroupKind kind) {
        ListGroupsOptions options =
                kind == GroupKind.SHARE ? ListGroupsOptions.forShareGroups() : ListGroupsOptions.forConsumerGroups();
        return KafkaUni.of(continuations, admin.listGroups(options).all())
                .map(listings ->
                        listings.stream().map(GroupListing::groupId).collect(Collectors.toCollection(TreeSet::new)));
    }

    /**
     * Read group by group: a group this cluster does not know has no offsets (a 4.1.2 broker answers it with none; a
     * broker that answers GROUP_ID_NOT_FOUND instead fails only that group's read, taken as none); any other failure
     * of a group's read is that group's.
     */
    @Override
    public Uni<GroupOffsets> groupOffsets(GroupKind kind, Set<String> groups, Set<MirrorPartition> partitions) {
        if (groups.isEmpty()) {
            return Uni.createFrom().item(new GroupOffsets(Map.of(), Map.of()));
        }
        Map<String, KafkaFuture<Map<TopicPartition, OffsetAndMetadata>>> byGroup = listOffsetsByGroup(
                kind, groups, partitions.stream().map(AdminMetadata::tp).toList());
        Map<String, Map<TopicPartition, OffsetAndMetadata>> listed = new ConcurrentHashMap<>();
        Map<String, Throwable> failed = new ConcurrentHashMap<>();
        List<Uni<Void>> reads = new ArrayList<>();
        byGroup.forEach((group, future) -> reads.add(KafkaUni.of(continuations, future)
                .onFailure(GroupIdNotFoundException.class)
                .recoverWithItem(Map.of())
                .onItemOrFailure()
                .invoke((offsets, e) -> {
                    if (e != null) {
                        failed.put(group, e);
                    } else {
                        listed.put(group, offsets == null ? Map.of() : offsets);
                    }
                })
                .onFailure()
                .recoverWithNull()
                .replaceWithVoid()));
        return Uni.join().all(reads).andFailFast().map(done -> new GroupOffsets(offsets(listed), failed));
    }

    /** A share group's offsets are written, then read back: a 4.1.x broker answers success and applies nothing (ShareOffsetReadBack). */
    @Override
    public Uni<Void> alterGroupOffsets(GroupKind kind, String group, Map<MirrorPartition, CommittedOffset> offsets) {
        Map<TopicPartition, Long> byTp = new HashMap<>();
        offsets.forEach((p, o) -> byTp.put(tp(p), o.offset()));
        if (kind == GroupKind.CONSUMER) {
            Map<TopicPartition, OffsetAndMetadata> committed = new HashMap<>();
            offsets.forEach((p, o) -> committed.put(tp(p), new OffsetAndMetadata(o.offset(), o.metadata())));
            return KafkaUni.of(
                    continuations,
                    admin.alterConsumerGroupOffsets(group, committed).all());
        }
        return KafkaUni.of(
                        continuations, admin.alterShareGroupOffsets(group, byTp).all())
                .chain(() -> KafkaUni.of(
                        continuations,
                        listOffsetsByGroup(kind, Set.of(group), byTp.keySet()).get(group)))
                .invoke(readBack -> {
                    Map<TopicPartition, Long> read = new HashMap<>();
                    readBack.forEach((tp, om) -> read.put(tp, om == null ? null : om.offset()));
                    ShareOffsetReadBack.verify(byTp, read);
                })
                .replaceWithVoid();
    }

    @Override
    public Uni<Set<AclEntry>> acls() {
        return KafkaUni.of(
                        continuations, admin.describeAcls(AclBindingFilter.ANY).values())
                .map(bindings -> bindings.stream().map(AclConversions::entry).collect(Collectors.toSet()));
    }

    @Override
    public Uni<Void> createAcls(Collection<AclEntry> acls) {
        return acls.isEmpty()
                ? Uni.createFrom().voidItem()
                : KafkaUni.of(
                        continuations,
                        admin.createAcls(acls.stream()
                                        .map(AclConversions::binding)
                                        .toList())
                                .all());
    }

    @Override
    public Uni<Void> deleteAcls(Collection<AclEntry> acls) {
        return acls.isEmpty()
                ? Uni.createFrom().voidItem()
                : KafkaUni.of(
                                continuations,
                                admin.deleteAcls(acls.stream()
                                                .map(AclConversions::exactly)
                                                .toList())
                                        .all())
                        .replaceWithVoid();
    }

    /** The groups' committed offsets of these partitions, one future per group. */
    private Map<String, KafkaFuture<Map<TopicPartition, OffsetAndMetadata>>> listOffsetsByGroup(
            GroupKind kind, Set<String> groups, Collection<TopicPartition> partitions) {
        Map<String, KafkaFuture<Map<TopicPartition, OffsetAndMetadata>>> byGroup = new HashMap<>();
        if (kind == GroupKind.CONSUMER) {
            var listed = admin.listConsumerGroupOffsets(consumerSpecs(groups, partitions));
            groups.forEach(g -> byGroup.put(g, listed.partitionsToOffsetAndMetadata(g)));
        } else {
            var listed = admin.listShareGroupOffsets(shareSpecs(groups, partitions));
            groups.forEach(g -> byGroup.put(g, listed.partitionsToOffsetAndMetadata(g)));
        }
        return byGroup;
    }

    private static Map<String, ListConsumerGroupOffsetsSpec> consumerSpecs(
            Set<String> groups, Collection<TopicPartition> partitions) {
        Map<String, ListConsumerGroupOffsetsSpec> specs = new HashMap<>();
        groups.forEach(g -> specs.put(g, new ListConsumerGroupOffsetsSpec().topicPartitions(partitions)));
        return specs;
    }

    /** The partitions are named: an empty spec lists only those the share group has initialised. */
    private static Map<String, ListShareGroupOffsetsSpec> shareSpecs(
            Set<String> groups, Collection<TopicPartition> partitions) {
        Map<String, ListShareGroupOffsetsSpec> specs = new HashMap<>();
        groups.forEach(g -> specs.put(g, new ListShareGroupOffsetsSpec().topicPartitions(partitions)));
        return specs;
    }

    private static Map<String, Map<MirrorPartition, CommittedOffset>> offsets(
            Map<String, Map<TopicPartition, OffsetAndMetadata>> listed) {
        Map<String, Map<MirrorPartition, CommittedOffset>> result = new HashMap<>();
        listed.forEach((group, byPartition) -> {
            Map<MirrorPartition, CommittedOffset> converted = new HashMap<>();
            if (byPartition != null) {
                byPartition.forEach((tp, om) -> {
                    if (om != null) {
                        converted.put(
                                new MirrorPartition(tp.topic(), tp.partition()),
                                new CommittedOffset(om.offset(), om.metadata()));
                    }
                });
            }
            result.put(group, converted);
        });
        return result;
    }

    /**
     * Waits for every future, keeping the values that arrived and logging each failure as a per-topic config error;
     * with {@code unknownIsAbsent}, a topic the cluster does not know (yet: just created, not applied by its brokers) is
     * left out as one that is not there, which the topic step handles.
     */
    private <V> Uni<Map<String, V>> each(Map<String, KafkaFuture<V>> futures, CycleLog log, boolean unknownIsAbsent) {
        if (futures.isEmpty()) {
            return Uni.createFrom().item(Map.of());
        }
        List<Uni<Map.Entry<String, V>>> unis = new ArrayList<>();
        futures.forEach((topic, future) -> unis.add(KafkaUni.of(continuations, future)
                .map(v -> Map.entry(topic, v))
                .onFailure()
                .recoverWithItem(e -> {
                    if (!(unknownIsAbsent && Failures.causedBy(e, UnknownTopicOrPartitionException.class))) {
                        log.error(CONFIG_ERROR, "config of topic " + topic, e);
                    }
                    return null;
                })));
        return Uni.join().all(unis).andCollectFailures().map(entries -> {
            Map<String, V> values = new HashMap<>();
            entries.stream().filter(Objects::nonNull).forEach(e -> values.put(e.getKey(), e.getValue()));
            return values;
        });
    }

    private static ConfigResource resource(String topic) {
        return new ConfigResource(ConfigResource.Type.TOPIC, topic);
    }

    private static TopicPartition tp(MirrorPartition partition) {
        return new TopicPartition(partition.topic(), partition.partition());
    }
}
