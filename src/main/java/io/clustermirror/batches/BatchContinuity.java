package io.clustermirror.batches;

import java.util.ArrayList;
import java.util.List;

/**
 * What the data plane appends for one fetched source batch so that every record lands at its source
 * offset: the batch as it is; preceded by filler batches when the source has no batch for the offsets
 * before it; rewritten with fillers when compaction left holes inside it. What cannot be appended
 * without shifting offsets is named instead.
 */
public final class BatchContinuity {

    private BatchContinuity() {}

    /** The batches to append, in order, or (when {@code blocked} is set) why fetching cannot go past this point. */
    public record Plan(List<SourceBatch> batches, String blocked) {

        static Plan blocked(String reason) {
            return new Plan(List.of(), reason);
        }

        public boolean isBlocked() {
            return blocked != null;
        }

        /** The offset after the last planned batch. */
        public long nextOffset() {
            return batches.get(batches.size() - 1).lastOffset() + 1;
        }
    }

    /** The plan for appending {@code batch} when the destination's next offset is {@code expectedOffset}. */
    public static Plan plan(SourceBatch batch, long expectedOffset) {
        if (!batch.isV2()) {
            return Plan.blocked("batch at offset " + batch.baseOffset() + " has message format v" + batch.magic()
                    + "; only v2 batches can be mirrored");
        }
        if (batch.baseOffset() < expectedOffset) {
            return Plan.blocked("the destination ends at offset " + expectedOffset + ", inside source batch ["
                    + batch.baseOffset() + ".." + batch.lastOffset() + "]");
        }
        List<SourceBatch> batches = new ArrayList<>(CompactionHoles.gap(
                expectedOffset, batch.baseOffset(), batch.firstTimestamp(), batch.partitionLeaderEpoch()));
        batches.add(batch.hasHoles() && !batch.control() ? CompactionHoles.fill(batch) : batch);
        return new Plan(List.copyOf(batches), null);
    }
}
