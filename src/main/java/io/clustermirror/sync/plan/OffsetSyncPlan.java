package io.clustermirror.sync.plan;

import io.clustermirror.mirror.MirrorPartition;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Group offsets to commit on the destination: the source's committed offsets with their metadata, unchanged (identical
 * offsets need no translation), only for partitions this mirror mirrors, clamped to the destination's log end (the
 * broker does not check), and only where they (offset or metadata) differ from what the destination group already
 * has.
 */
public final class OffsetSyncPlan {

    private OffsetSyncPlan() {}

    /**
     * @param source committed offsets per group on the source
     * @param destinationEnds log end of each mirrored destination partition
     * @param destinationCommitted what each group has committed on the destination today
     * @param groups the mirror's group include/exclude patterns
     * @return per group, the offsets to commit (groups with nothing to do are left out)
     */
    public static Map<String, Map<MirrorPartition, CommittedOffset>> plan(
            Map<String, Map<MirrorPartition, CommittedOffset>> source,
            Map<MirrorPartition, Long> destinationEnds,
            Map<String, Map<MirrorPartition, CommittedOffset>> destinationCommitted,
            NameFilter groups) {
        Map<String, Map<MirrorPartition, CommittedOffset>> commits = new TreeMap<>();
        source.forEach((group, offsets) -> {
            if (!groups.matches(group)) {
                return;
            }
            Map<MirrorPartition, CommittedOffset> current = destinationCommitted.getOrDefault(group, Map.of());
            Map<MirrorPartition, CommittedOffset> toCommit = new TreeMap<>();
            offsets.forEach((partition, committed) -> {
                Long end = destinationEnds.get(partition);
                if (end == null || committed.offset() < 0) {
                    return; // not mirrored by this mirror, or no offset
                }
                CommittedOffset clamped = committed.clampedTo(end);
                if (!clamped.equals(current.get(partition))) {
                    toCommit.put(partition, clamped);
                }
            });
            if (!toCommit.isEmpty()) {
                commits.put(group, toCommit);
            }
        });
        return commits;
    }

    /** The partitions of a plan, for the destination end-offset look-up. */
    public static Set<MirrorPartition> partitions(Map<String, Map<MirrorPartition, CommittedOffset>> source) {
        Set<MirrorPartition> partitions = new TreeSet<>();
        source.values().forEach(offsets -> partitions.addAll(offsets.keySet()));
        return partitions;
    }
}
