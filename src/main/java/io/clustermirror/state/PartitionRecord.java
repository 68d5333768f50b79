package io.clustermirror.state;

import io.clustermirror.mirror.LossReport;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionStatus;
import java.time.Instant;

/**
 * Value of a partition's {@code __mirror_state} record: its persisted {@link PartitionStatus}. {@code lossAtStop} and
 * {@code waiting} are absent (null) in records written before they existed; an instance of before reads a record with
 * them as well (the state's reader ignores fields it does not know), without them.
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
        LossReport lossAtStop,
        String waiting) {

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
                status.lossAtStop(),
                status.waiting());
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
                lossAtStop,
                waiting);
    }
}
