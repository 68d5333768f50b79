package io.clustermirror.fetch;

import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.TopicPartition;

import io.clustermirror.mirror.MirrorPartition;

/**
 * The data plane's view of one partition. Fields under "guarded by this" are shared by the fetch and
 * append threads; the others belong to the append thread alone.
 */
final class FetchPartition {

    /** One batch sent to the destination and not yet answered. */
    record Sent(SourceBatch batch, int generation) {
    }

    final MirrorPartition partition;
    final TopicPartition tp;

    // guarded by this
    int generation;
    long fetchOffset;
    final ArrayDeque<SourceBatch> queue = new ArrayDeque<>();
    long queuedBytes;
    boolean removing;
    boolean failed;
    boolean resetPending;
    boolean fetchInFlight;
    /** Why fetching cannot go on past what is queued; the partition fails once the queue has been appended. */
    String blocked;

    // append thread only
    ProducerIdentity identity;
    int nextSequence;
    final ArrayDeque<Sent> inFlight = new ArrayDeque<>();
    final CompletableFuture<Void> removed = new CompletableFuture<>();

    // read by anyone
    volatile long ackedEnd;
    volatile long sourceHighWatermark = -1;
    volatile int lastEpoch = -1;

    FetchPartition(MirrorPartition partition, long startOffset) {
        this.partition = partition;
        this.tp = new TopicPartition(partition.topic(), partition.partition());
        this.fetchOffset = startOffset;
        this.ackedEnd = startOffset;
    }

    synchronized boolean fetchable(long maxQueuedBytes) {
        return !removing && !failed && !resetPending && !fetchInFlight && blocked == null && queuedBytes < maxQueuedBytes;
    }

    synchronized SourceBatch pollQueue() {
        SourceBatch batch = queue.poll();
        if (batch != null) {
            queuedBytes -= batch.sizeInBytes();
        }
        return batch;
    }

    /** The block reason once everything before it is appended, else null. */
    synchronized String blockedAndDrained() {
        return blocked != null && queue.isEmpty() && inFlight.isEmpty() ? blocked : null;
    }

    synchronized boolean sendable() {
        return !removing && !failed && !resetPending && !queue.isEmpty();
    }
}
