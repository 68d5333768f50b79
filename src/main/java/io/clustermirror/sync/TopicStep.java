package io.clustermirror.sync;

import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.PartitionStatus;
import io.clustermirror.sync.plan.NameFilter;
import io.clustermirror.sync.plan.TopicSyncPlan;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Topics: source topics the include patterns newly match are started, mirrored topics whose source grew are expanded,
 * and mirrored topics deleted on the source are stopped (the destination topic is kept, writable). Plans with
 * {@link TopicSyncPlan}; the coordinator applies the actions.
 */
final class TopicStep {

    static final String DELETED_ON_SOURCE = "source topic deleted; the destination topic is kept and writable";

    private TopicStep() {}

    static Uni<List<SyncAction>> plan(
            Mirror mirror, Map<MirrorPartition, PartitionStatus> owned, String stateTopic, ClusterMetadata source) {
        Map<String, Integer> mirrored = new HashMap<>();
        Map<String, Boolean> allStopped = new HashMap<>();
        owned.forEach((p, s) -> {
            mirrored.merge(p.topic(), 1, Integer::sum);
            allStopped.merge(p.topic(), !s.state().isHeld(), Boolean::logicalAnd);
        });
        Set<String> stopped = new HashSet<>();
        allStopped.forEach((t, s) -> {
            if (s) {
                stopped.add(t);
            }
        });
        NameFilter filter = NameFilter.of(
                mirror.config().list(MirrorConfig.TOPICS_INCLUDE, ""),
                mirror.config().list(MirrorConfig.TOPICS_EXCLUDE, MirrorConfig.DEFAULT_TOPICS_EXCLUDE));
        return source.partitionCounts().map(counts -> {
            TopicSyncPlan plan = TopicSyncPlan.plan(counts, mirrored, stopped, filter, stateTopic);
            List<SyncAction> actions = new ArrayList<>();
            if (!plan.newTopics().isEmpty()) {
                actions.add(new SyncAction.StartTopics(plan.newTopics()));
            }
            plan.expanded().keySet().stream().sorted().forEach(topic -> actions.add(new SyncAction.ExpandTopic(topic)));
            if (!plan.deletedOnSource().isEmpty()) {
                actions.add(new SyncAction.StopTopics(plan.deletedOnSource(), DELETED_ON_SOURCE));
            }
            return actions;
        });
    }
}
