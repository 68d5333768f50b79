package io.clustermirror.state;

import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.PartitionStatus;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/** What a replay of {@code __mirror_state} yields: the mirrors, and the persisted status of each of their partitions. */
public record StateSnapshot(
        Map<String, Mirror> mirrors,
        Map<String, Map<MirrorPartition, PartitionStatus>> partitions,
        Map<String, java.util.Set<io.clustermirror.mirror.AclEntry>> createdAcls) {

    public StateSnapshot {
        Map<String, Mirror> known = Map.copyOf(mirrors);
        mirrors = known;
        Map<String, Map<MirrorPartition, PartitionStatus>> copy = new HashMap<>();
        partitions.forEach((mirror, statuses) -> {
            if (known.containsKey(mirror)) {
                copy.put(mirror, Map.copyOf(new TreeMap<>(statuses)));
            }
        });
        partitions = Map.copyOf(copy);
        Map<String, java.util.Set<io.clustermirror.mirror.AclEntry>> acls = new HashMap<>();
        createdAcls.forEach((mirror, set) -> {
            if (known.containsKey(mirror)) {
                acls.put(mirror, java.util.Set.copyOf(set));
            }
        });
        createdAcls = Map.copyOf(acls);
    }
}
