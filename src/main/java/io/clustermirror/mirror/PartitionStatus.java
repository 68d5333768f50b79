package io.clustermirror.mirror;

import java.time.Instant;
import java.util.Objects;

/**
 * What is known and persisted about one mirrored partition. Changed only through {@link #moveTo},
 * which enforces the transition table and counts the state epoch.
 *
 * @param stateEpoch +1 on every transition
 * @param retryAttempt automatic retries of a FAILED partition so far; -1 once retries are exhausted (waits for recover)
 * @param lastMirroredEpoch source partition leader epoch of the last batch mirrored (LME), -1 if none
 * @param error the last error, for operators; null when none
 * @param lossAtStop while STOPPED: what the stop may have left on the source ({@link LossReport}); null otherwise, and
 *     for partitions stopped before it was recorded
 * @param waiting what the move under way waits for (a stop waiting for the mirror's clients or its data plane), kept
 *     beside the error, which goes on saying why the partition is in its state; null when nothing waits, and gone with
 *     the next move
 */
public record PartitionStatus(
        MirrorPartitionState state,
        MirrorPartitionState previousState,
        int stateEpoch,
        int retryAttempt,
        int lastMirroredEpoch,
        String error,
        Instant updatedAt,
        LossReport lossAtStop,
        String waiting) {

    public PartitionStatus {
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(previousState, "previousState");
        Objects.requireNonNull(updatedAt, "updatedAt");
    }

    public static PartitionStatus initial(Instant now) {
        return new PartitionStatus(
                MirrorPartitionState.UNKNOWN, MirrorPartitionState.UNKNOWN, 0, 0, -1, null, now, null, null);
    }

    /**
     * The status after a move to {@code target}; {@link MirrorError#INVALID_MIRROR_PARTITION_STATE} when the table forbids it.
     * The retry count is kept: it is reset by an operator's recover, or once the partition mirrors data again.
     */
    public PartitionStatus moveTo(MirrorPartitionState target, String newError, Instant now) {
        if (!state.canMoveTo(target)) {
            throw new MirrorException(
                    MirrorError.INVALID_MIRROR_PARTITION_STATE,
                    "A partition in state " + state + " cannot move to " + target);
        }
        return new PartitionStatus(
                target, state, stateEpoch + 1, retryAttempt, lastMirroredEpoch, newError, now, null, null);
    }

    public PartitionStatus withRetryAttempt(int attempt) {
        return new PartitionStatus(
                state, previousState, stateEpoch, attempt, lastMirroredEpoch, error, updatedAt, lossAtStop, waiting);
    }

    public PartitionStatus withLastMirroredEpoch(int epoch) {
        return new PartitionStatus(
                state, previousState, stateEpoch, retryAttempt, epoch, error, updatedAt, lossAtStop, waiting);
    }

    /** The same status with the stop's loss report (a move to another state drops it). */
    public PartitionStatus withLossAtStop(LossReport loss) {
        return new PartitionStatus(
                state, previousState, stateEpoch, retryAttempt, lastMirroredEpoch, error, updatedAt, loss, waiting);
    }

    /**
     * The same state, moved again (epoch +1), with a failure said after its error (a stop's reason stays first; the failure
     * said last is not said again), still waiting for what it waited for: a data-plane failure while STOPPING.
     */
    public PartitionStatus withFailure(String failure, Instant now) {
        String said = failure == null || failure.isBlank() ? "the data plane failed without a message" : failure;
        String joined =
                error == null ? said : error.equals(said) || error.endsWith("; " + said) ? error : error + "; " + said;
        return new PartitionStatus(
                state, state, stateEpoch + 1, retryAttempt, lastMirroredEpoch, joined, now, lossAtStop, waiting);
    }

    /**
     * The same state, moved again (epoch +1, its error kept), now waiting for {@code reason}: what a stop that cannot
     * finish yet records, so that its reason for stopping is not lost.
     */
    public PartitionStatus waitingFor(String reason, Instant now) {
        return new PartitionStatus(
                state, state, stateEpoch + 1, retryAttempt, lastMirroredEpoch, error, now, lossAtStop, reason);
    }
}
