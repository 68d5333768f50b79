package io.clustermirror.fetch;

import java.util.Optional;

/**
 * What the fast path can append as is: a v2, non-transactional, non-control batch that starts exactly
 * at the next expected offset and has no holes. Anything else would shift offsets, so it is named.
 */
public final class BatchContinuity {

    private BatchContinuity() {
    }

    /** Empty when {@code batch} can be appended at {@code expectedOffset}; otherwise why not. */
    public static Optional<String> check(SourceBatch batch, long expectedOffset) {
        if (!batch.isV2()) {
            return Optional.of("batch at offset " + batch.baseOffset() + " has message format v" + batch.magic()
                    + "; only v2 batches can be mirrored");
        }
        if (batch.control()) {
            return Optional.of("control batch (transaction marker) at offset " + batch.baseOffset()
                    + ": transactional batches at offset " + batch.baseOffset() + " are not supported yet");
        }
        if (batch.transactional()) {
            return Optional.of("transactional batches at offset " + batch.baseOffset() + " are not supported yet");
        }
        if (batch.baseOffset() < expectedOffset) {
            return Optional.of("the destination ends at offset " + expectedOffset + ", inside source batch [" + batch.baseOffset()
                    + ".." + batch.lastOffset() + "]");
        }
        if (batch.baseOffset() > expectedOffset) {
            return Optional.of("source offsets [" + expectedOffset + ", " + batch.baseOffset()
                    + ") have no records (compacted or deleted): gaps between batches are not supported yet");
        }
        if (batch.hasHoles()) {
            return Optional.of("source batch [" + batch.baseOffset() + ".." + batch.lastOffset() + "] holds " + batch.recordCount()
                    + " records for " + (batch.lastOffset() - batch.baseOffset() + 1)
                    + " offsets (compaction holes): holes inside batches are not supported yet");
        }
        return Optional.empty();
    }
}
