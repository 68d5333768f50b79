package io.clustermirror.coordinator;

import java.util.EnumSet;
import java.util.Set;

import io.clustermirror.mirror.MirrorPartitionState;

/**
 * The topic verbs after start: which state each moves a partition to, from which states it applies,
 * and which states it leaves alone because they are already where the verb leads.
 */
public enum TopicVerb {
    PAUSE(MirrorPartitionState.PAUSING, EnumSet.of(MirrorPartitionState.MIRRORING),
            EnumSet.of(MirrorPartitionState.PAUSING, MirrorPartitionState.PAUSED)),
    RESUME(MirrorPartitionState.MIRRORING, EnumSet.of(MirrorPartitionState.PAUSED), EnumSet.of(MirrorPartitionState.MIRRORING)),
    STOP(MirrorPartitionState.STOPPING, EnumSet.of(MirrorPartitionState.LOG_TRUNCATION, MirrorPartitionState.EPOCH_FENCING,
            MirrorPartitionState.MIRRORING, MirrorPartitionState.PAUSING, MirrorPartitionState.PAUSED, MirrorPartitionState.FAILED),
            EnumSet.of(MirrorPartitionState.STOPPING, MirrorPartitionState.STOPPED)),
    RECOVER(MirrorPartitionState.LOG_TRUNCATION, EnumSet.of(MirrorPartitionState.FAILED),
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
}
