package io.clustermirror.truncation;

import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.TruncationProgress;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * LOG_TRUNCATION's question: is the destination partition a prefix of the source's, and where does mirroring go on?
 * Blocking (it reads both clusters); {@link LogTruncation} is the real one, the partition lifecycle's unit tests use
 * fakes.
 */
public interface PrefixCheck {

    /** The full check; {@code progress} receives where it stands, step by step, for describe. */
    LogTruncation.Outcome run(String mirror, MirrorPartition partition, Consumer<TruncationProgress> progress)
            throws Exception;

    /**
     * EPOCH_FENCING's check: the source leader said the epoch last fetched ends at {@code epochEndOffset} on its side.
     * A destination ending beyond that holds records the source lost; else the full check decides.
     */
    LogTruncation.Outcome afterEpochFencing(
            String mirror, MirrorPartition partition, long epochEndOffset, Consumer<TruncationProgress> progress)
            throws Exception;

    /**
     * One partition of a batch: the full check ({@code epochEndOffset} -1) or EPOCH_FENCING's (the source epoch's end).
     */
    record Check(MirrorPartition partition, long epochEndOffset, Consumer<TruncationProgress> progress) {

        public static Check full(MirrorPartition partition, Consumer<TruncationProgress> progress) {
            return new Check(partition, -1, progress);
        }
    }

    /**
     * One partition's answer in a batch: its outcome, or the exception that kept it from one (what {@link #run} would
     * have thrown for it alone). Exactly one of the two is set.
     */
    record Answer(LogTruncation.Outcome outcome, Exception failure) {

        public Answer {
            if ((outcome == null) == (failure == null)) {
                throw new IllegalArgumentException("an answer is an outcome or a failure");
            }
        }

        public static Answer of(LogTruncation.Outcome outcome) {
            return new Answer(outcome, null);
        }

        public static Answer failed(Exception failure) {
            return new Answer(null, failure);
        }
    }

    /**
     * The checks of many partitions at once (distinct partitions), an answer for each: one partition's failure is its
     * own answer, never the batch's. This default asks one partition at a time; {@link LogTruncation} reads the clusters
     * once per batch and broker. Throws only when nothing could be checked at all.
     */
    default Map<MirrorPartition, Answer> check(String mirror, List<Check> checks) throws Exception {
        Map<MirrorPartition, Answer> answers = new LinkedHashMap<>();
        for (Check check : checks) {
            try {
                answers.put(
                        check.partition(),
                        Answer.of(
                                check.epochEndOffset() >= 0
                                        ? afterEpochFencing(
                                                mirror, check.partition(), check.epochEndOffset(), check.progress())
                                        : run(mirror, check.partition(), check.progress())));
            } catch (Exception e) {
                answers.put(check.partition(), Answer.failed(e));
            }
        }
        return answers;
    }
}
