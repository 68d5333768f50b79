package io.clustermirror.fetch;

import java.util.Set;
import org.apache.kafka.common.errors.InvalidMetadataException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.protocol.Errors;

/**
 * How the data plane treats an error code a broker answered for one partition: kafka-clients' own rule decides what
 * retrying cures, not a list of ours; only the producer-state errors, for which the library has no rule, are named.
 */
final class ErrorRules {

    /** What becomes of a batch, once its answer (or its lost answer) is in. */
    enum Verdict {
        /** Appended: it must sit at its source offset. */
        APPENDED,
        /**
         * Sent again as it is (same producer id, epoch and sequence), in order, once nothing of the partition is in
         * flight: the destination keeps the last five batches of each producer and answers a copy of one with the
         * original's offset, so the batch lands once whether or not the lost attempt landed (decisions §14).
         */
        RETRY,
        /** Retrying in place cannot work (the destination lost or fenced the producer's state): the verified reset. */
        RESET,
        /** Retrying cannot cure it: the partition stops with the error as its reason. */
        FAIL
    }

    /**
     * The destination no longer knows the partition's producer (UNKNOWN_PRODUCER_ID, brokers before 2.5) or holds a
     * newer epoch for it: a copy of a batch can no longer be told apart, so the partition resumes from the
     * destination's end, read back, under a new epoch (for the partition's own batches a newer epoch is a fence:
     * {@link #fenced}).
     */
    private static final Set<Errors> PRODUCER_STATE_LOST =
            Set.of(Errors.UNKNOWN_PRODUCER_ID, Errors.INVALID_PRODUCER_EPOCH, Errors.PRODUCER_FENCED);

    private ErrorRules() {}

    /**
     * Retrying cures it (kafka-clients' {@link RetriableException}, which the stale-metadata errors, a new leader or
     * topic id, extend as {@code InvalidMetadataException}): the loop reads the cluster again and goes on. Anything
     * else, {@code UNKNOWN_SERVER_ERROR} included, stops the partition with the error as its reason. So does
     * {@code CORRUPT_MESSAGE}, which the library calls retriable: the data plane sends the source's bytes as they are,
     * and a corrupt batch sent again is corrupt again (FAILED says so; its retries fetch the batch afresh).
     */
    static boolean retriable(Errors error) {
        return error != Errors.CORRUPT_MESSAGE && error.exception() instanceof RetriableException;
    }

    /** The cluster's metadata must be read again before the retry (a new leader, topic id or epoch). */
    static boolean staleMetadata(Errors error) {
        return error.exception() instanceof InvalidMetadataException;
    }

    /**
     * What the answer {@code error} for one batch means.
     *
     * <ul>
     *   <li>OUT_OF_ORDER_SEQUENCE_NUMBER while an earlier batch of the partition is unanswered or waits for its retry:
     *       that one has not landed yet, so this one could not follow it; both go again, in order. With every earlier
     *       batch acknowledged, the destination lacks what it acknowledged (lost data) or the producer state (expired):
     *       the verified reset judges.
     *   <li>DUPLICATE_SEQUENCE_NUMBER (brokers before 1.0; 4.1 answers a copy of a batch it no longer keeps with
     *       OUT_OF_ORDER_SEQUENCE_NUMBER): the batch landed, but nobody says where: the verified reset reads it back.
     * </ul>
     *
     * @param earlierUnsettled whether a batch sent before this one is still in flight or waits for its retry
     */
    static Verdict verdict(Errors error, boolean earlierUnsettled) {
        if (error == Errors.NONE) {
            return Verdict.APPENDED;
        }
        if (error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER) {
            return earlierUnsettled ? Verdict.RETRY : Verdict.RESET;
        }
        if (error == Errors.DUPLICATE_SEQUENCE_NUMBER || PRODUCER_STATE_LOST.contains(error)) {
            return Verdict.RESET;
        }
        return retriable(error) ? Verdict.RETRY : Verdict.FAIL;
    }

    /**
     * Another holder of the partition's producer id appended with a newer epoch (INVALID_PRODUCER_EPOCH, or
     * PRODUCER_FENCED from older brokers): for the partition's own, non-transactional batches, another instance took
     * the mirror over, and this one must stop, not reset (a reset would take a newer epoch still and fence the owner).
     */
    static boolean fenced(Errors error) {
        return error == Errors.INVALID_PRODUCER_EPOCH || error == Errors.PRODUCER_FENCED;
    }
}
