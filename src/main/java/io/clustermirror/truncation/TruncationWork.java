package io.clustermirror.truncation;

import io.clustermirror.batches.SourceBatch;
import io.clustermirror.mirror.TruncationProgress;
import io.clustermirror.mirror.TruncationProgress.Step;
import io.clustermirror.truncation.LogTruncation.Outcome;
import io.clustermirror.truncation.PrefixCheck.Check;
import java.util.Optional;
import org.apache.kafka.common.TopicPartition;

/**
 * One partition's LOG_TRUNCATION check in a batch ({@link LogTruncation#check}): what was read for it so far, and its
 * outcome or failure once decided. Used by one worker thread at a time, the batch's.
 */
final class TruncationWork {
    final Check check;
    final TopicPartition tp;
    long sourceStart;
    long sourceEnd;
    long destinationStart;
    long destinationEnd;
    /** The destination's last batch (a non-empty destination) or the source's first batch (an empty one). */
    Optional<SourceBatch> batch = Optional.empty();

    Outcome outcome;
    Exception failure;

    TruncationWork(Check check) {
        this.check = check;
        this.tp =
                new TopicPartition(check.partition().topic(), check.partition().partition());
    }

    boolean open() {
        return outcome == null && failure == null;
    }

    /**
     * Reports the step with the offsets read; LOG_START_ALIGNMENT counts {@code done} of the offsets up to the
     * source log start, DIVERGENCE_CHECK none (-1).
     */
    void note(Step step, boolean complete, long done) {
        long total = step == Step.LOG_START_ALIGNMENT ? Math.max(0, sourceStart - destinationEnd) : -1;
        report(step, complete, done, total);
    }

    void report(Step step, boolean complete, long done, long total) {
        check.progress()
                .accept(new TruncationProgress(
                        step, complete, sourceStart, sourceEnd, destinationStart, destinationEnd, done, total));
    }

    /** A divergence search of this partition settled {@code done} of its {@code total} offsets. */
    void searched(long done, long total) {
        report(Step.DIVERGENCE_SEARCH, false, done, total);
    }

    /** The first failure of a read decides; later reads of a failed partition are not asked for. */
    void fail(Exception e) {
        if (open()) {
            failure = e;
        }
    }
}
