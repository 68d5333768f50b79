package io.clustermirror.fetch;

/**
 * What a source leader's answers say when its log no longer holds what was mirrored from it, in words an
 * operator can act on. A source leader elected uncleanly starts its own history at the offset where its log
 * ended; the mirror sends the epoch of the last batch it fetched with every Fetch, and the leader answers with
 * the epoch's end on its side when that is below the fetch offset (DESIGN §3, EPOCH_FENCING).
 */
final class SourceDivergence {

    private SourceDivergence() {}

    /** The source leader's diverging-epoch answer to a Fetch at {@code fetchOffset} sent with {@code lastFetchedEpoch}. */
    static String describe(int lastFetchedEpoch, long fetchOffset, int divergingEpoch, long endOffset) {
        return "the source no longer holds what was fetched from it: the mirror fetched up to offset " + fetchOffset
                + " with source leader epoch " + lastFetchedEpoch + ", but on the source leader epoch " + divergingEpoch
                + " ends at offset " + endOffset + " (unclean leader election on the source?)";
    }

    /** OFFSET_OUT_OF_RANGE for {@code fetchOffset}; log start and high watermark are -1 when the answer carries none. */
    static String outOfRange(long fetchOffset, long logStartOffset, long highWatermark) {
        if (logStartOffset >= 0 && fetchOffset < logStartOffset) {
            return "source offset " + fetchOffset + " is below the source log start " + logStartOffset
                    + ": deleted by retention before it was mirrored";
        }
        if (highWatermark >= 0 && fetchOffset > highWatermark) {
            return "source offset " + fetchOffset + " is beyond the source log end " + highWatermark
                    + ": the source lost records that were mirrored (unclean leader election on the source?)";
        }
        return "source offset " + fetchOffset
                + " is out of range on the source: deleted by retention before it was mirrored, "
                + "or the source lost records that were mirrored";
    }
}
