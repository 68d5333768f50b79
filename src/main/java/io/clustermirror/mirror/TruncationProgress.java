package io.clustermirror.mirror;

import java.util.Objects;

/**
 * Where a partition's LOG_TRUNCATION check (DESIGN §4.3; also EPOCH_FENCING's and a resume's) stands: its step, the
 * four log ends it read, and how far the step is. Reported by the truncation room as it goes, shown by describe, and
 * rendered into describe's sentence by {@link #sentence()} (the only place that words it).
 *
 * @param complete whether the step finished with the destination a prefix of the source (mirroring starts at its end)
 * @param offsetsDone LOG_START_ALIGNMENT: destination offsets written towards the source log start (fillers, and the
 *     source's first batch when the log starts inside it); DIVERGENCE_SEARCH: offsets of the searched range settled;
 *     -1 for DIVERGENCE_CHECK (it compares one batch)
 * @param offsetsTotal the offsets the step covers: up to the source log start, or the searched range; -1 for
 *     DIVERGENCE_CHECK
 */
public record TruncationProgress(
        Step step,
        boolean complete,
        long sourceLogStart,
        long sourceLogEnd,
        long destinationLogStart,
        long destinationLogEnd,
        long offsetsDone,
        long offsetsTotal) {

    /** What LOG_TRUNCATION does, in the order it does it (the KIP's "truncates to align the local log"). */
    public enum Step {
        /** An empty destination before the source log start: filler records up to it, then DeleteRecords. */
        LOG_START_ALIGNMENT,
        /** A non-empty destination: its last batch compared with the source's at the same offsets. */
        DIVERGENCE_CHECK,
        /** The destination is not a prefix: binary search for the first offset where the two logs differ. */
        DIVERGENCE_SEARCH
    }

    public TruncationProgress {
        Objects.requireNonNull(step, "step");
    }

    /** The human sentence describe shows for this check. */
    public String sentence() {
        return switch (step) {
            case LOG_START_ALIGNMENT -> {
                if (complete && offsetsTotal == 0) {
                    yield "destination is empty at the source log start " + sourceLogStart + ": mirroring starts there";
                }
                yield complete
                        ? "aligned to the source log start " + sourceLogStart + " (" + offsetsTotal + " offsets filled)"
                        : "aligning to the source log start " + sourceLogStart + ": " + offsetsDone + " of "
                                + offsetsTotal + " offsets filled";
            }
            case DIVERGENCE_CHECK ->
                complete
                        ? "destination is a prefix of the source up to " + destinationLogEnd
                        : "checking that the destination [" + destinationLogStart + ", " + destinationLogEnd
                                + ") is a prefix of the source [" + sourceLogStart + ", " + sourceLogEnd + ")";
            case DIVERGENCE_SEARCH ->
                "searching where the destination [" + destinationLogStart + ", " + destinationLogEnd
                        + ") diverges from the source: " + offsetsDone + " of " + offsetsTotal + " offsets settled";
        };
    }
}
