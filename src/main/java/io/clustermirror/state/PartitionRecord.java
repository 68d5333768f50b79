package io.clustermirror.state;

import io.clustermirror.mirror.LossReport;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionStatus;
import java.time.Instant;

/**
 * Value of a partition's {@code __mirror_state} record: its persisted {@link PartitionStatus}. {@code lossAtStop} is
 * absent (null) in records written before it existed.
 */
public record PartitionRecord(
        int v,
        String state,
        String previousState,
        int stateEpoch,
        int retryAttempt,
        int lastMirroredEpoch,
        String error,
        Instant updatedAt,
        LossReport lossAtStop) {

    public static PartitionRecord of(PartitionStatus status) {
        return new PartitionRecord(
                StateSerde.FORMAT_VERSION,
                status.state().name(),
                status.previousState().name(),
                status.stateEpoch(),
                status.retryAttempt(),
                status.lastMirroredEpoch(),
                status.error(),
                status.updatedAt(),
                status.lossAtStop());
    }

    public PartitionStatus toStatus() {
        return new PartitionStatus(
                MirrorPartitionState.valueOf(state),
                MirrorPartitionState.valueOf(previousState),
                stateEpoch,
                retryAttempt,
                lastMirroredEpoch,
                error,
                updatedAt,
                lossAtStop);
    }
}
