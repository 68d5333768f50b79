package io.clustermirror.sync;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;


import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.GroupNotEmptyException;
import org.apache.kafka.common.errors.UnknownMemberIdException;
import org.jboss.logging.Logger;

import io.clustermirror.kafka.AclConversions;
import io.clustermirror.kafka.KafkaUni;
import io.clustermirror.config.MirrorServiceConfig;
import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionStatus;
import io.clustermirror.sync.plan.ConfigSyncPlan;
import io.clustermirror.sync.plan.NameFilter;
import io.clustermirror.sync.plan.OffsetSyncPlan;
import io.clustermirror.sync.plan.TopicSyncPlan;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.Scheduler;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/**
 * The KIP's MirrorMetadataManager: per mirror, every {@code mirror.metadata.refresh.interval.ms}, one sync cycle
 * as a Mutiny pipeline of Admin calls (no thread blocks): source cluster id check, new topics by pattern,
 * partition expansion, topics deleted on the source, topic configs, consumer-group offsets. Each step plans with
 * the pure functions of {@code sync/plan} and applies per item; a failing item is recorded and counted, never
 * fails the cycle, and a failing cycle never stops the schedule. A mirror's cycle never overlaps itself.
 */
@ApplicationScoped
public class MirrorMetadataManager {

    private static final Logger LOGGER = Logger.getLogger(MirrorMetadataManager.class);

    private final SyncHost coordinator;
    private final MirrorServiceConfig config;
    private final MirrorMetrics metrics;
    private final Scheduler scheduler;
    private final Map<String, AtomicBoolean> running = new ConcurrentHashMap<>();
    private final Map<String, SyncReport> statuses = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> cycles = new ConcurrentHashMap<>();
    /** Mirrors whose destination, or source, has no authorizer (warned once). */
    private final Set<String> noAuthorizer = ConcurrentHashMap.newKeySet();
    private final Set<String> sourceNoAuthorizer = ConcurrentHashMap.newKeySet();
    /** Mirrors whose source was found without share groups (warned once). */
    private final Set<String> shareGroupsUnavailable = ConcurrentHashMap.newKeySet();

    public MirrorMetadataManager(SyncHost coordinator, MirrorServiceConfig config, MirrorMetrics metrics, Scheduler scheduler) {
        this.coordinator = coordinator;
        this.config = config;
        this.metrics = metrics;
        this.scheduler = scheduler;
    }

    void onStart(@Observes StartupEvent event) {
        scheduler.newJob("mirror-metadata-refresh")
                .setInterval(Duration.ofMillis(config.metadata().refresh().intervalMs()).toString())
                .setConcurrentExecution(Scheduled.ConcurrentExecution.SKIP)
                .setTask(execution -> tick())
                .schedule();
    }

    /** The last cycle's outcome for a mirror, or null before the first. */
    public SyncReport status(String mirror) {
        return statuses.get(mirror);
    }

    /** Starts a cycle for every mirror whose previous cycle has finished. */
    void tick() {
        if (!coordinator.isActive()) {
            return;
        }
        Set<String> names = new HashSet<>();
        for (Mirror mirror : coordinator.list()) {
            names.add(mirror.name());
            AtomicBoolean busy = running.computeIfAbsent(mirror.name(), n -> new AtomicBoolean());
            if (busy.compareAndSet(false, true)) {
                new Cycle(mirror).run().subscribe().with(done -> busy.set(false), failure -> {
                    busy.set(false);
                    LOGGER.errorf(failure, "Mirror %s: metadata sync cycle failed unexpectedly", mirror.name());
                });
            }
        }
        running.keySet().retainAll(names);
        statuses.keySet().retainAll(names);
    }

    /** One sync cycle of one mirror; collects per-item errors. */
    private final class Cycle {
        private final Mirror mirror;
        private final String name;
        private final long started = System.nanoTime();
        private final List<String> errors = new ArrayList<>();
        private final List<String> skippedGroups = new ArrayList<>();
        private String aclStatus;

        Cycle(Mirror mirror) {
            this.mirror = mirror;
            this.name = mirror.name();
        }

        Uni<Void> run() {
            return coordinator.sourceAdmin(name)
                    .chain(source -> clusterMatches(source).chain(matches -> !matches ? Uni.createFrom().voidItem()
                            : topics(source).chain(() -> configs(source)).chain(() -> groupOffsets(source))
                            .chain(() -> acls(source))))
                    .onFailure().recoverWithItem(e -> {
                        error("MetadataRefreshError", "metadata refresh", e);
                        return null;
                    })
                    .invoke(this::finish)
                    .replaceWithVoid();
        }

        private Uni<Boolean> clusterMatches(Admin source) {
            return KafkaUni.of(source.describeCluster().clusterId()).map(id -> {
                if (!id.equals(mirror.sourceClusterId())) {
                    coordinator.halt(name, id);
                    errors.add("source cluster id is " + id + ", expected " + mirror.sourceClusterId() + ": mirror halted");
                    return false;
                }
                if (coordinator.haltedReason(name) != null) {
                    coordinator.unhalt(name);
                }
                return true;
            });
        }

        private Uni<Void> topics(Admin source) {
            Map<MirrorPartition, PartitionStatus> owned = coordinator.partitions(name);
            Map<String, Integer> mirrored = new HashMap<>();
            Map<String, Boolean> allStopped = new HashMap<>();
            owned.forEach((p, s) -> {
                mirrored.merge(p.topic(), 1, Integer::sum);
                boolean stopped = s.state() == MirrorPartitionState.STOPPED || s.state() == MirrorPartitionState.STOPPING;
                allStopped.merge(p.topic(), stopped, Boolean::logicalAnd);
            });
            Set<String> stopped = new HashSet<>();
            allStopped.forEach((t, s) -> {
                if (s) {
                    stopped.add(t);
                }
            });
            NameFilter filter = NameFilter.of(mirror.config().list(MirrorConfig.TOPICS_INCLUDE, ""),
                    mirror.config().list(MirrorConfig.TOPICS_EXCLUDE, MirrorConfig.DEFAULT_TOPICS_EXCLUDE));
            return KafkaUni.of(source.listTopics().names())
                    .chain(names -> names.isEmpty() ? Uni.createFrom().item(Map.<String, TopicDescription>of())
                            : KafkaUni.of(source.describeTopics(names).allTopicNames()))
                    .chain(descriptions -> {
                        Map<String, Integer> counts = new HashMap<>();
                        descriptions.forEach((t, d) -> counts.put(t, d.partitions().size()));
                        TopicSyncPlan plan = TopicSyncPlan.plan(counts, mirrored, stopped, filter, config.state().topic().name());
                        if (!plan.isEmpty()) {
                            LOGGER.debugf("Mirror %s: topic plan %s", name, plan);
                        }
                        return apply(plan);
                    });
        }

        private Uni<Void> apply(TopicSyncPlan plan) {
            Uni<Void> start = plan.newTopics().isEmpty() ? Uni.createFrom().voidItem()
                    : coordinator.startDiscovered(name, plan.newTopics()).invoke(errors::addAll)
                            .onFailure().recoverWithItem(e -> {
                                error("MetadataRefreshError", "start " + plan.newTopics(), e);
                                return null;
                            }).replaceWithVoid();
            Uni<Void> expand = Multi.createFrom().iterable(plan.expanded().keySet())
                    .onItem().transformToUniAndConcatenate(topic -> coordinator.expand(name, topic).onFailure().recoverWithItem(e -> {
                        error("MetadataRefreshError", "expand " + topic, e);
                        return 0;
                    })).collect().asList().replaceWithVoid();
            Uni<Void> stop = plan.deletedOnSource().isEmpty() ? Uni.createFrom().voidItem()
                    : coordinator.stopDeletedOnSource(name, plan.deletedOnSource()).invoke(errors::addAll)
                            .onFailure().recoverWithItem(e -> {
                                error("MetadataRefreshError", "stop deleted " + plan.deletedOnSource(), e);
                                return null;
                            }).replaceWithVoid();
            return start.chain(() -> expand).chain(() -> stop);
        }

        /** Topic configs of every topic being mirrored, source -> destination, in two describes and one alter. */
        private Uni<Void> configs(Admin source) {
            Set<String> topics = activeTopics();
            if (topics.isEmpty()) {
                return Uni.createFrom().voidItem();
            }
            List<ConfigResource> resources = topics.stream().map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t)).toList();
            Admin destination = coordinator.destination();
            List<String> excluded = mirror.config().list(MirrorConfig.TOPIC_PROPERTIES_EXCLUDE, MirrorConfig.DEFAULT_TOPIC_PROPERTIES_EXCLUDE);
            return each(source.describeConfigs(resources).values()).chain(sourceConfigs -> each(destination.describeConfigs(resources).values())
                    .chain(destinationConfigs -> {
                        Map<ConfigResource, Collection<AlterConfigOp>> ops = new HashMap<>();
                        for (ConfigResource resource : resources) {
                            Config from = sourceConfigs.get(resource);
                            Config to = destinationConfigs.get(resource);
                            if (from == null || to == null) {
                                continue; // not there (yet) on one side: the topic steps handle it
                            }
                            ConfigSyncPlan plan = ConfigSyncPlan.diff(explicit(from), explicit(to), excluded, io.clustermirror.mirror.OwnedTopicConfigs.NAMES);
                            if (!plan.isEmpty()) {
                                List<AlterConfigOp> list = new ArrayList<>();
                                plan.set().forEach((k, v) -> list.add(new AlterConfigOp(new ConfigEntry(k, v), AlterConfigOp.OpType.SET)));
                                plan.delete().forEach(k -> list.add(new AlterConfigOp(new ConfigEntry(k, ""), AlterConfigOp.OpType.DELETE)));
                                ops.put(resource, list);
                                LOGGER.debugf("Mirror %s: config of %s: set %s, delete %s", name, resource.name(), plan.set(), plan.delete());
                            }
                        }
                        if (ops.isEmpty()) {
                            return Uni.createFrom().voidItem();
                        }
                        return each(destination.incrementalAlterConfigs(ops).values()).replaceWithVoid();
                    }));
        }

        /**
         * Group offsets of the partitions being mirrored, for consumer groups and share groups alike: copied
         * unchanged and clamped to the destination's end, read once per cycle.
         */
        private Uni<Void> groupOffsets(Admin source) {
            Map<TopicPartition, MirrorPartition> mirrored = mirroredPartitions();
            if (mirrored.isEmpty()) {
                return Uni.createFrom().voidItem();
            }
            Admin destination = coordinator.destination();
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            mirrored.keySet().forEach(tp -> latest.put(tp, OffsetSpec.latest()));
            return KafkaUni.of(destination.listOffsets(latest).all()).chain(ends -> {
                Map<MirrorPartition, Long> destinationEnds = new HashMap<>();
                ends.forEach((tp, info) -> destinationEnds.put(mirrored.get(tp), info.offset()));
                return groupOffsets(GroupKind.CONSUMER, source, destination, mirrored, destinationEnds)
                        .chain(() -> groupOffsets(GroupKind.SHARE, source, destination, mirrored, destinationEnds));
            });
        }

        private Uni<Void> groupOffsets(GroupKind kind, Admin source, Admin destination, Map<TopicPartition, MirrorPartition> mirrored,
                Map<MirrorPartition, Long> destinationEnds) {
            NameFilter filter = NameFilter.of(mirror.config().list(MirrorConfig.GROUPS_INCLUDE, ".*"),
                    mirror.config().list(MirrorConfig.GROUPS_EXCLUDE, ""));
            return KafkaUni.of(source.listGroups(kind.listing()).all()).onFailure(e -> kind == GroupKind.SHARE).recoverWithItem(e -> {
                if (shareGroupsUnavailable.add(name)) {
                    LOGGER.warnf("Mirror %s: the source does not list share groups (%s); share-group offsets are not synced", name, e.toString());
                }
                return List.of();
            }).chain(listings -> {
                Set<String> groups = new java.util.TreeSet<>();
                listings.stream().map(GroupListing::groupId).filter(filter::matches).forEach(groups::add);
                if (groups.isEmpty()) {
                    return Uni.createFrom().voidItem();
                }
                return KafkaUni.of(kind.offsets(source, groups, mirrored.keySet()))
                        .chain(sourceOffsets -> KafkaUni.of(kind.offsets(destination, groups, mirrored.keySet()))
                                .onFailure().recoverWithItem(e -> Map.of()) // groups unknown on the destination have nothing yet
                                .chain(destinationOffsets -> commit(OffsetSyncPlan.plan(GroupKind.toMirror(sourceOffsets, mirrored), destinationEnds,
                                        GroupKind.toMirror(destinationOffsets, mirrored), filter), kind.errorKind(),
                                        (group, offsets) -> kind.alter(destination, group, offsets))));
            });
        }

        /**
         * ACLs matching {@code mirror.acl.include} are copied, the ones this mirror created and the source no longer
         * has are deleted, and every mirrored topic keeps its read-only guard. A side without an authorizer is
         * reported once (in describe and a metric), not retried with noise.
         */
        private Uni<Void> acls(Admin source) {
            Admin destination = coordinator.destination();
            List<io.clustermirror.mirror.AclRule> rules = mirror.config().list(MirrorConfig.ACL_INCLUDE, "").stream()
                    .map(io.clustermirror.mirror.AclRule::parse).toList();
            return KafkaUni.of(destination.describeAcls(org.apache.kafka.common.acl.AclBindingFilter.ANY).values())
                    .map(bindings -> bindings.stream().map(AclConversions::entry).collect(java.util.stream.Collectors.toSet()))
                    .chain(destinationAcls -> guards(destination, destinationAcls)
                            .chain(() -> rules.isEmpty() ? Uni.createFrom().voidItem() : copyAcls(source, destination, destinationAcls, rules)))
                    .onFailure(org.apache.kafka.common.errors.SecurityDisabledException.class).recoverWithItem(e -> {
                        aclStatus = "destination has no authorizer: ACL sync and read-only enforcement inactive";
                        if (noAuthorizer.add(name)) {
                            metrics.syncError(name, "AclSyncError");
                            LOGGER.warnf("Mirror %s: %s", name, aclStatus);
                        }
                        return null;
                    })
                    .onFailure().recoverWithItem(e -> {
                        error("AclSyncError", "ACL sync", e);
                        return null;
                    });
        }

        private Uni<Void> guards(Admin destination, Set<io.clustermirror.mirror.AclEntry> existing) {
            List<org.apache.kafka.common.acl.AclBinding> missing = activeTopics().stream().map(io.clustermirror.mirror.AclEntry::readOnly)
                    .filter(guard -> !existing.contains(guard)).map(AclConversions::binding).toList();
            aclStatus = "read-only enforced; " + coordinator.createdAcls(name).size() + " ACL(s) created by this mirror";
            return missing.isEmpty() ? Uni.createFrom().voidItem() : KafkaUni.of(destination.createAcls(missing).all());
        }

        private Uni<Void> copyAcls(Admin source, Admin destination, Set<io.clustermirror.mirror.AclEntry> destinationAcls,
                List<io.clustermirror.mirror.AclRule> rules) {
            return KafkaUni.of(source.describeAcls(org.apache.kafka.common.acl.AclBindingFilter.ANY).values())
                    .map(bindings -> bindings.stream().map(AclConversions::entry).toList())
                    .chain(sourceAcls -> {
                        io.clustermirror.sync.plan.AclSyncPlan plan = io.clustermirror.sync.plan.AclSyncPlan.plan(sourceAcls, destinationAcls,
                                coordinator.createdAcls(name), rules);
                        if (plan.isEmpty()) {
                            return Uni.createFrom().voidItem();
                        }
                        LOGGER.debugf("Mirror %s: ACLs create %s, delete %s", name, plan.create(), plan.delete());
                        // persist first what the mirror is about to own, so a crash never leaves ACLs it would not delete
                        java.util.Set<io.clustermirror.mirror.AclEntry> owned = new java.util.TreeSet<>(coordinator.createdAcls(name));
                        owned.addAll(plan.create());
                        return coordinator.recordCreatedAcls(name, owned)
                                .chain(() -> plan.create().isEmpty() ? Uni.createFrom().voidItem()
                                        : KafkaUni.of(destination.createAcls(plan.create().stream().map(AclConversions::binding).toList()).all()))
                                .chain(() -> plan.delete().isEmpty() ? Uni.createFrom().voidItem()
                                        : KafkaUni.of(destination.deleteAcls(plan.delete().stream().map(AclConversions::exactly).toList()).all())
                                                .replaceWithVoid())
                                .chain(() -> coordinator.recordCreatedAcls(name, plan.created()))
                                .invoke(() -> aclStatus = "read-only enforced; " + plan.created().size() + " ACL(s) created by this mirror");
                    })
                    .onFailure(org.apache.kafka.common.errors.SecurityDisabledException.class).recoverWithItem(e -> {
                        if (sourceNoAuthorizer.add(name)) {
                            LOGGER.warnf("Mirror %s: the source has no authorizer; there are no ACLs to copy", name);
                        }
                        return null;
                    });
        }

        private Map<TopicPartition, MirrorPartition> mirroredPartitions() {
            Map<TopicPartition, MirrorPartition> mirrored = new HashMap<>();
            coordinator.partitions(name).forEach((p, s) -> {
                if (s.state() != MirrorPartitionState.STOPPED && s.state() != MirrorPartitionState.STOPPING
                        && s.state() != MirrorPartitionState.UNKNOWN) {
                    mirrored.put(new TopicPartition(p.topic(), p.partition()), p);
                }
            });
            return mirrored;
        }

        /**
         * Applies a group offset plan, group by group: a group with members on the destination is skipped and
         * counted, any other failure is recorded under {@code errorKind}.
         */
        private Uni<Void> commit(Map<String, Map<MirrorPartition, Long>> commits, String errorKind,
                java.util.function.BiFunction<String, Map<TopicPartition, Long>, Uni<Void>> alter) {
            return Multi.createFrom().iterable(commits.entrySet()).onItem().transformToUniAndConcatenate(entry -> {
                Map<TopicPartition, Long> offsets = new HashMap<>();
                entry.getValue().forEach((p, o) -> offsets.put(new TopicPartition(p.topic(), p.partition()), o));
                return alter.apply(entry.getKey(), offsets)
                        .invoke(() -> LOGGER.debugf("Mirror %s: group %s offsets %s", name, entry.getKey(), entry.getValue()))
                        .onFailure().recoverWithItem(e -> {
                            if (e instanceof UnknownMemberIdException || e instanceof GroupNotEmptyException) {
                                skippedGroups.add(entry.getKey());
                                metrics.groupSkippedActive(name);
                            } else {
                                error(errorKind, "group " + entry.getKey(), e);
                            }
                            return null;
                        });
            }).collect().asList().replaceWithVoid();
        }

        private Set<String> activeTopics() {
            Set<String> topics = new java.util.TreeSet<>();
            coordinator.partitions(name).forEach((p, s) -> {
                if (s.state() != MirrorPartitionState.STOPPED && s.state() != MirrorPartitionState.STOPPING) {
                    topics.add(p.topic());
                }
            });
            return topics;
        }

        /** Waits for every future, keeping the values that arrived and recording each failure as a per-item error. */
        private <K, V> Uni<Map<K, V>> each(Map<K, KafkaFuture<V>> futures) {
            if (futures.isEmpty()) {
                return Uni.createFrom().item(Map.of());
            }
            List<Uni<Map.Entry<K, V>>> unis = new ArrayList<>();
            futures.forEach((key, future) -> unis.add(KafkaUni.of(future).map(v -> Map.entry(key, v)).onFailure().recoverWithItem(e -> {
                error("TopicConfigMetadataSyncError", key.toString(), e);
                return null;
            })));
            return Uni.join().all(unis).andCollectFailures().map(entries -> {
                Map<K, V> values = new HashMap<>();
                entries.stream().filter(java.util.Objects::nonNull).forEach(e -> values.put(e.getKey(), e.getValue()));
                return values;
            });
        }

        private void error(String kind, String item, Throwable e) {
            String message = item + ": " + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
            errors.add(message);
            metrics.syncError(name, kind);
            // the same error as in the last cycle is counted and shown again, but logged at WARN only once
            SyncReport last = statuses.get(name);
            LOGGER.logf(last != null && last.errors().contains(message) ? Logger.Level.DEBUG : Logger.Level.WARN, "Mirror %s: %s (%s)", name,
                    message, kind);
        }

        private void finish() {
            Duration took = Duration.ofNanos(System.nanoTime() - started);
            long count = cycles.computeIfAbsent(name, n -> new AtomicLong()).incrementAndGet();
            statuses.put(name, new SyncReport(Instant.now(), took.toMillis(), errors, skippedGroups, count, aclStatus));
            metrics.syncCycle(name, took);
            LOGGER.debugf("Mirror %s: metadata sync cycle %d in %d ms, %d error(s), %d group(s) skipped", name, count, took.toMillis(),
                    errors.size(), skippedGroups.size());
        }
    }

    private static Map<String, String> explicit(Config config) {
        Map<String, String> values = new HashMap<>();
        config.entries().stream().filter(e -> e.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG)
                .forEach(e -> values.put(e.name(), e.value()));
        return values;
    }
}
