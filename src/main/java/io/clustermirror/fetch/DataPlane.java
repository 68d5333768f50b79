package io.clustermirror.fetch;

import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.OpenTransaction;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;

/**
 * One mirror's data plane as its owner drives it: partitions enter at an offset and leave again; what happens to them
 * meanwhile comes back through a {@link Listener}. {@link MirrorFetcher} is the real one; the partition lifecycle is
 * unit-tested against fakes of this interface.
 */
public interface DataPlane {

    /**
     * Starts mirroring the partition at {@code startOffset} (the destination's log end, equal to the source offset);
     * {@code sourceEpoch} is the source leader epoch of the batch just before it (-1: none or unknown), checked by the
     * source leader on every fetch. The partition enters on the data plane's own thread, at the start of its next
     * turn (a command, like {@link #remove}). {@code sourceEnd} is the source's high watermark as last read (by
     * LOG_TRUNCATION; -1: unknown): a partition that enters behind it asks for its producer id at once, before its
     * first batch is fetched. Throws IllegalStateException while the partition is still in the data plane, and once
     * the data plane has ended.
     */
    void add(MirrorPartition partition, long startOffset, int sourceEpoch, long sourceEnd);

    /**
     * Stops fetching the partition; completes, with its last progress, once nothing of it is in flight any more (null
     * when it was not in the data plane). With {@code abortTransactions} (stop), the destination transactions held open
     * for it are aborted first; without (pause), they stay open to be continued.
     */
    CompletableFuture<Progress> remove(MirrorPartition partition, boolean abortTransactions);

    /**
     * Partitions are about to be added (a start is under way, its destination topics and LOG_TRUNCATION ahead of them,
     * or a partition's check before it mirrors on: a resume, EPOCH_FENCING): until the next {@link #add}, or for at
     * most {@value MirrorFetcher#JOINING_MS} ms, the data plane keeps its fetcher lanes free for their first Fetch.
     * Never blocks.
     */
    default void joining() {}

    /** Completes once the partition is out of the data plane (at once when it is not in it). */
    CompletableFuture<Progress> whenGone(MirrorPartition partition);

    /**
     * Why this data plane takes no more partitions (one of its loops died or was stuck; for a {@link ShardedDataPlane},
     * every shard's), or null while it runs. Its owner drops a data plane that says why and builds a new one.
     */
    default String deadReason() {
        return null;
    }

    /** What the data plane tells its owner; called from data-plane threads, must not block. */
    interface Listener {
        void onFailed(MirrorPartition partition, String error);

        /**
         * The source leader no longer holds what was fetched with its last epoch (an unclean leader election on
         * the source): the partition has stopped fetching and waits for EPOCH_FENCING to check the destination.
         */
        void onEpochFenced(MirrorPartition partition, String reason, long epochEndOffset);

        void onAppended(MirrorPartition partition, int records, int bytes);

        /** The source answers with another cluster id than the mirror's: nothing is fetched from it. */
        void onSourceClusterChanged(String actualClusterId);

        /** A Fetch went to a source broker or a Produce to a destination broker ({@code failed}: it failed as a whole). */
        void onRequest(String api, boolean failed);

        /** A Fetch of fetcher lane {@code fetcher} to source broker {@code sourceBroker} answered {@code bytes}. */
        default void onFetched(int sourceBroker, int fetcher, long bytes) {}

        /**
         * Fetcher lane {@code fetcher} to source broker {@code sourceBroker} waited {@code millis} more for the
         * instance's replication budget ({@code mirror.replication.throttled.rate}); reported while the wait lasts.
         */
        default void onThrottled(int sourceBroker, int fetcher, long millis) {}
    }

    /** The two loops of a data plane, which go round one after the other on its fetcher's thread. */
    enum Loop {
        FETCHER,
        APPENDER;

        /** Its name in reasons and in the {@code loop} label of the dead-loop metric: "fetcher", "appender". */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** A loop of a data plane that died or was stuck, and why. */
    record LoopDeath(Loop loop, String reason) {}

    /**
     * What the coordinator's samplers read of a partition in the data plane, every few seconds (volatile fields, no
     * lock): the source high watermark last seen (-1: not yet) and when ({@code sourceSeenAtMs}, wall clock; -1: not
     * yet), the destination end acknowledged, the records and log bytes acknowledged since the partition entered the
     * data plane as {@code instance} (a new instance starts again from 0), and the oldest record not acknowledged yet
     * once fetched ({@code unmirrored}: its offset and timestamp; null before, or stale when its offset is not
     * {@code destinationEnd}).
     */
    record Counts(
            long instance,
            long sourceHighWatermark,
            long destinationEnd,
            long appendedRecords,
            long appendedBytes,
            long sourceSeenAtMs,
            Unmirrored unmirrored) {

        /** Without the recovery-point fields (tests of the rates). */
        public Counts(
                long instance,
                long sourceHighWatermark,
                long destinationEnd,
                long appendedRecords,
                long appendedBytes) {
            this(instance, sourceHighWatermark, destinationEnd, appendedRecords, appendedBytes, -1, null);
        }

        /** The timestamp of the record at {@code destinationEnd}, the oldest not mirrored yet, or -1 when not fetched. */
        public long unmirroredTimestampAt(long destinationEnd) {
            return unmirrored != null && unmirrored.offset() == destinationEnd ? unmirrored.timestamp() : -1;
        }
    }

    /** A fetched record not acknowledged by the destination yet: its offset and timestamp (see SourceBatch#recordTimestamp). */
    record Unmirrored(long offset, long timestamp) {}

    /** Live progress of a partition in the data plane. */
    record Progress(
            long sourceHighWatermark,
            long destinationEnd,
            int lastMirroredEpoch,
            List<OpenTransaction> openTransactions) {}
}
