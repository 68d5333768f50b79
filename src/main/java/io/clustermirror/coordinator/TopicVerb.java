package io.clustermirror.coordinator;

import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionStatus;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The topic verbs after start: which state each moves a partition to, from which states it applies,
 * and which states it leaves alone because they are already where the verb leads.
 */
public enum TopicVerb {
    PAUSE(
            MirrorPartitionState.PAUSING,
            EnumSet.of(MirrorPartitionState.MIRRORING),
            EnumSet.of(MirrorPartitionState.PAUSING, MirrorPartitionState.PAUSED)),
    RESUME(
            MirrorPartitionState.MIRRORING,
            EnumSet.of(MirrorPartitionState.PAUSED),
            EnumSet.of(MirrorPartitionState.MIRRORING)),
    STOP(
            MirrorPartitionState.STOPPING,
            EnumSet.of(
                    MirrorPartitionState.LOG_TRUNCATION,
                    MirrorPartitionState.EPOCH_FENCING,
                    MirrorPartitionState.MIRRORING,
                    MirrorPartitionState.PAUSING,
                    MirrorPartitionState.PAUSED,
                    MirrorPartitionState.FAILED),
            EnumSet.of(MirrorPartitionState.STOPPING, MirrorPartitionState.STOPPED)),
    RECOVER(
            MirrorPartitionState.LOG_TRUNCATION,
            EnumSet.of(MirrorPartitionState.FAILED),
            EnumSet.complementOf(EnumSet.of(MirrorPartitionState.FAILED)));

    private final MirrorPartitionState target;
    private final Set<MirrorPartitionState> accepted;
    private final Set<MirrorPartitionState> skipped;

    TopicVerb(MirrorPartitionState target, Set<MirrorPartitionState> accepted, Set<MirrorPartitionState> skipped) {
        this.target = target;
        this.accepted = accepted;
        this.skipped = skipped;
    }

    public MirrorPartitionState target() {
        return target;
    }

    public boolean accepts(MirrorPartitionState state) {
        return accepted.contains(state);
    }

    public boolean skips(MirrorPartitionState state) {
        return skipped.contains(state);
    }

    /**
     * What the verb does to the named topics of a mirror, all or nothing: the partitions it moves, with their next
     * status; partitions already where it leads are left out. Refused when a topic is not in the mirror
     * (TOPIC_NOT_IN_CLUSTER_MIRROR), a stop finds a topic already stopped (MIRROR_TOPIC_ALREADY_STOPPED), or a
     * partition is in a state the verb does not apply to (INVALID_MIRROR_PARTITION_STATE, naming up to 20).
     */
    Map<MirrorPartition, PartitionStatus> plan(
            String mirror,
            Map<MirrorPartition, PartitionStatus> owned,
            Collection<String> topics,
            String reason,
            Instant now) {
        Map<MirrorPartition, PartitionStatus> changed = new TreeMap<>();
        List<String> illegal = new ArrayList<>();
        for (String topic : new TreeSet<>(topics)) {
            Map<MirrorPartition, PartitionStatus> ofTopic = new TreeMap<>();
            owned.forEach((p, s) -> {
                if (p.topic().equals(topic)) {
                    ofTopic.put(p, s);
                }
            });
            if (ofTopic.isEmpty()) {
                throw new MirrorException(
                        MirrorError.TOPIC_NOT_IN_CLUSTER_MIRROR,
                        "Topic '" + topic + "' is not in mirror '" + mirror + "'",
                        "topics");
            }
            if (this == STOP && ofTopic.values().stream().allMatch(s -> s.state() == MirrorPartitionState.STOPPED)) {
                throw new MirrorException(
                        MirrorError.MIRROR_TOPIC_ALREADY_STOPPED, "Topic '" + topic + "' is already stopped", "topics");
            }
            ofTopic.forEach((p, s) -> {
                if (skips(s.state())) {
                    return;
                }
                if (!s.state().canMoveTo(target) || !accepts(s.state())) {
                    illegal.add(p + " is " + s.state());
                    return;
                }
                PartitionStatus next = s.moveTo(target, reason, now);
                changed.put(p, this == RECOVER ? next.withRetryAttempt(0) : next);
            });
        }
        if (!illegal.isEmpty()) {
            throw new MirrorException(
                    MirrorError.INVALID_MIRROR_PARTITION_STATE,
                    "Cannot " + name().toLowerCase(Locale.ROOT) + ": "
                            + String.join(", ", illegal.subList(0, Math.min(20, illegal.size()))),
                    "topics");
        }
        return changed;
    }
}
