package io.clustermirror.state;

import io.clustermirror.mirror.AclEntry;
import io.clustermirror.mirror.Frozen;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.PartitionStatus;
import io.clustermirror.mirror.TopicDivergence;
import io.clustermirror.mirror.TopicPromotion;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * What a replay of {@code __mirror_state} yields: the mirrors, the persisted status of each of their partitions, the
 * ACLs each created, their topics' promotions, the divergent tails preserved before a topic was recreated, and the
 * service settings changed at runtime (by key), and how far a verification last confirmed each partition identical.
 */
public record StateSnapshot(
        Map<String, Mirror> mirrors,
        Map<String, Map<MirrorPartition, PartitionStatus>> partitions,
        Map<String, Set<AclEntry>> createdAcls,
        Map<String, Map<String, TopicPromotion>> promotions,
        Map<String, Map<String, TopicDivergence>> divergences,
        Map<String, String> serviceConfigs,
        Map<String, Map<MirrorPartition, Long>> verified) {

    public StateSnapshot {
        Map<String, Mirror> known = Map.copyOf(mirrors);
        mirrors = known;
        Map<String, Map<MirrorPartition, PartitionStatus>> copy = new HashMap<>();
        partitions.forEach((mirror, statuses) -> {
            if (known.containsKey(mirror)) {
                copy.put(mirror, Frozen.map(statuses));
            }
        });
        partitions = Map.copyOf(copy);
        Map<String, Set<AclEntry>> acls = new HashMap<>();
        createdAcls.forEach((mirror, set) -> {
            if (known.containsKey(mirror)) {
                acls.put(mirror, Set.copyOf(set));
            }
        });
        createdAcls = Map.copyOf(acls);
        Map<String, Map<String, TopicPromotion>> promoted = new HashMap<>();
        promotions.forEach((mirror, byTopic) -> {
            if (known.containsKey(mirror) && !byTopic.isEmpty()) {
                promoted.put(mirror, Frozen.map(byTopic));
            }
        });
        promotions = Map.copyOf(promoted);
        Map<String, Map<String, TopicDivergence>> diverged = new HashMap<>();
        divergences.forEach((mirror, byTopic) -> {
            if (known.containsKey(mirror) && !byTopic.isEmpty()) {
                diverged.put(mirror, Frozen.map(byTopic));
            }
        });
        divergences = Map.copyOf(diverged);
        serviceConfigs = Map.copyOf(serviceConfigs);
        Map<String, Map<MirrorPartition, Long>> verifiedTo = new HashMap<>();
        verified.forEach((mirror, byPartition) -> {
            if (known.containsKey(mirror) && !byPartition.isEmpty()) {
                verifiedTo.put(mirror, Frozen.map(byPartition));
            }
        });
        verified = Map.copyOf(verifiedTo);
    }
}
