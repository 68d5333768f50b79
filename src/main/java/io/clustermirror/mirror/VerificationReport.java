package io.clustermirror.mirror;

import java.time.Instant;
import java.util.List;

/**
 * Where a consistency verification stands (decisions §46): its partitions' results and its progress.
 *
 * @param verdict IDENTICAL or DIFFERENT once DONE; null while RUNNING and when FAILED
 * @param failure why the verification FAILED (a partition could not be read to its end and none differed), or null
 * @param bytesTotal an estimate until DONE: the bytes compared so far extrapolated over the offsets still to compare
 * @param etaSeconds the time to compare the rest at the current rate, -1 when not known yet
 */
public record VerificationReport(
        String id,
        String mirror,
        State state,
        Verdict verdict,
        String failure,
        Instant startedAt,
        Instant finishedAt,
        long bytesCompared,
        long bytesTotal,
        double bytesPerSecond,
        long etaSeconds,
        List<Partition> partitions) {

    public enum State {
        RUNNING,
        DONE,
        FAILED
    }

    public enum Verdict {
        IDENTICAL,
        DIFFERENT
    }

    public enum Result {
        IDENTICAL,
        DIFFERENT,
        INCOMPLETE
    }

    public VerificationReport {
        partitions = List.copyOf(partitions);
    }

    /**
     * One partition's comparison: the offsets {@code [from, to)} both logs held when it started, how far it got
     * ({@code verifiedTo}), and the first difference.
     *
     * @param result null while it runs
     * @param differenceOffset the first offset that differs, or -1
     * @param reason what differs there (or why the partition is INCOMPLETE), or null
     */
    public record Partition(
            MirrorPartition partition,
            long from,
            long to,
            long verifiedTo,
            long batches,
            long records,
            Result result,
            long differenceOffset,
            String reason) {}
}
