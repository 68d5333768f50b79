package io.clustermirror.fetch;

import java.util.Set;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.protocol.Errors;

/**
 * How the data plane treats an error code a broker answered for one partition: kafka-clients' own rule decides what
 * retrying cures, not a list of ours; only the producer-identity errors, for which the library has no rule, are named.
 */
final class ErrorRules {

    /**
     * The destination no longer accepts the partition's producer id, epoch or sequence (expired, fenced, or out of
     * step after a lost answer): the partition resumes from the destination's end under a new identity.
     */
    private static final Set<Errors> NEW_IDENTITY = Set.of(
            Errors.OUT_OF_ORDER_SEQUENCE_NUMBER,
            Errors.UNKNOWN_PRODUCER_ID,
            Errors.INVALID_PRODUCER_EPOCH,
            Errors.PRODUCER_FENCED,
            Errors.DUPLICATE_SEQUENCE_NUMBER);

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

    /** The partition's producer identity must be replaced before it can append again. */
    static boolean needsNewIdentity(Errors error) {
        return NEW_IDENTITY.contains(error);
    }
}
