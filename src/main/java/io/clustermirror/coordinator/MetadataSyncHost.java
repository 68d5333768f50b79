package io.clustermirror.coordinator;

import io.clustermirror.mirror.AclEntry;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionStatus;
import io.clustermirror.sync.AdminMetadata;
import io.clustermirror.sync.ClusterMetadata;
import io.clustermirror.sync.SyncAction;
import io.clustermirror.sync.SyncHost;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.jboss.logging.Logger;

/**
 * The coordinator as the metadata manager sees it: the mirrors' state to read, both clusters' metadata, and the
 * {@link SyncAction}s a cycle asks for, applied the coordinator's way (validated, persisted, then acted on): starting
 * newly matched topics, expanding grown ones, stopping the ones deleted on the source, halting a mirror whose source
 * changed identity, and recording the ACLs a mirror created.
 */
@ApplicationScoped
public class MetadataSyncHost implements SyncHost {

    private static final Logger LOGGER = Logger.getLogger(MetadataSyncHost.class);

    private final MirrorCoordinator coordinator;
    private final Clock clock = Clock.systemUTC();

    public MetadataSyncHost(MirrorCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public boolean isActive() {
        return coordinator.status().isActive();
    }

    @Override
    public List<Mirror> list() {
        return coordinator.list();
    }

    @Override
    public Map<MirrorPartition, PartitionStatus> partitions(String mirror) {
        return coordinator.partitions(mirror);
    }

    @Override
    public String haltedReason(String mirror) {
        return coordinator.haltedReason(mirror);
    }

    @Override
    public Uni<ClusterMetadata> source(String mirror) {
        return coordinator.runtime(mirror).map(runtime -> new AdminMetadata(runtime.sourceAdmin, runtime.workers));
    }

    @Override
    public Uni<ClusterMetadata> destination(String mirror) {
        return coordinator
                .runtime(mirror)
                .map(runtime -> new AdminMetadata(coordinator.destinationAdmin(), runtime.workers));
    }

    @Override
    public Uni<List<String>> apply(String mirror, SyncAction action) {
        if (action instanceof SyncAction.Halt halt) {
            coordinator.lifecycle().halt(mirror, halt.actualClusterId());
            return Uni.createFrom().item(List.of());
        }
        if (action instanceof SyncAction.Unhalt) {
            coordinator.lifecycle().unhalt(mirror);
            return Uni.createFrom().item(List.of());
        }
        if (action instanceof SyncAction.StartTopics start) {
            return coordinator.startDiscoveredTopics(mirror, start.topics()).map(MetadataSyncHost::failures);
        }
        if (action instanceof SyncAction.StopTopics stop) {
            return coordinator
                    .topicVerb(mirror, TopicVerb.STOP, List.copyOf(stop.topics()), stop.reason())
                    .map(MetadataSyncHost::failures);
        }
        if (action instanceof SyncAction.ExpandTopic expand) {
            return expand(mirror, expand.topic()).replaceWith(List.of());
        }
        throw new IllegalArgumentException("unknown sync action " + action);
    }

    @Override
    public Set<AclEntry> createdAcls(String mirror) {
        return coordinator.createdAcls(mirror);
    }

    @Override
    public Uni<Void> recordCreatedAcls(String mirror, Set<AclEntry> acls) {
        return coordinator.recordCreatedAcls(mirror, acls);
    }

    /** The source topic has more partitions: the destination topic grows too, and the new partitions are mirrored. */
    private Uni<Integer> expand(String name, String topic) {
        return coordinator
                .runtime(name)
                .chain(runtime -> Uni.createFrom()
                        .item(() -> {
                            try {
                                return runtime.topics
                                        .prepare(
                                                topic,
                                                coordinator
                                                        .describe(name)
                                                        .config()
                                                        .list(
                                                                MirrorConfig.TOPIC_PROPERTIES_EXCLUDE,
                                                                MirrorConfig.DEFAULT_TOPIC_PROPERTIES_EXCLUDE),
                                                true)
                                        .orElseThrow(() -> new MirrorException(
                                                MirrorError.UNKNOWN_TOPIC_OR_PARTITION,
                                                topic + " vanished from the source"));
                            } catch (MirrorException e) {
                                throw e;
                            } catch (Exception e) {
                                throw new MirrorException(
                                        MirrorError.UNKNOWN_SERVER_ERROR, "expanding " + topic + " failed: " + e);
                            }
                        })
                        .runSubscriptionOn(runtime.workers))
                .chain(prepared -> coordinator.held().onCoordinator(() -> {
                    Map<MirrorPartition, PartitionStatus> added = new TreeMap<>();
                    Instant now = clock.instant();
                    for (int p = 0; p < prepared.partitions(); p++) {
                        MirrorPartition partition = new MirrorPartition(topic, p);
                        if (!coordinator.partitions(name).containsKey(partition)) {
                            added.put(
                                    partition,
                                    PartitionStatus.initial(now)
                                            .moveTo(MirrorPartitionState.LOG_TRUNCATION, null, now));
                        }
                    }
                    coordinator.persistPartitions(name, added);
                    added.keySet().forEach(p -> coordinator.lifecycle().truncate(name, p));
                    LOGGER.infof(
                            "Mirror %s: topic %s grew to %d partitions; mirroring %d new",
                            name, topic, prepared.partitions(), added.size());
                    return added.size();
                }));
    }

    /** The outcomes that failed, as "topic: reason"; a topic already mirrored is no failure for the sync. */
    private static List<String> failures(List<TopicOutcome> outcomes) {
        return outcomes.stream()
                .filter(o -> o.errorCode() != null
                        && !MirrorError.TOPIC_ALREADY_IN_CLUSTER_MIRROR.name().equals(o.errorCode()))
                .map(o -> o.topic() + ": " + o.error())
                .toList();
    }
}
