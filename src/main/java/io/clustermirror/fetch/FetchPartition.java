package io.clustermirror.fetch;

import io.clustermirror.batches.SourceBatch;
import io.clustermirror.kafka.ProducerIdentity;
import io.clustermirror.mirror.MirrorPartition;
import java.util.ArrayDeque;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.TopicPartition;

/**
 * The data plane's view of one partition. Fields under "guarded by this" are shared by the fetcher's thread and the
 * coordinator's (add, remove); the others belong to the append loop's rounds alone. A new instance is made each time a
 * partition enters the data plane, so responses to requests of an earlier instance are told apart by identity.
 */
final class FetchPartition {

    private static final AtomicLong INSTANCES = new AtomicLong();

    /**
     * One batch sent to the destination, its bytes restamped with the producer id, epoch and sequence it is sent (and
     * re-sent) under.
     *
     * @param transactionalId the replay producer's, for a transactional batch; null for an idempotent one
     */
    record Sent(SourceBatch batch, int generation, String transactionalId) {}

    /** What a Fetch request was built from, captured under the lock. */
    record FetchTicket(FetchPartition state, int generation, long fetchOffset, int lastFetchedEpoch, int maxBytes) {}

    final MirrorPartition partition;
    final TopicPartition tp;
    /** The instance's budget that this partition's queue counts against. */
    private final FetchBudget budget;

    // guarded by this
    int generation;
    long fetchOffset;
    /**
     * Source leader epoch of the batch that ends just before {@link #fetchOffset} (-1: unknown), sent with every
     * Fetch so that the source leader itself says when its log no longer holds what was fetched (an unclean
     * leader election): it answers with a diverging epoch instead of records.
     */
    int fetchedEpoch;

    final ArrayDeque<SourceBatch> queue = new ArrayDeque<>();
    long queuedBytes;
    boolean removing;
    boolean failed;
    boolean resetPending;
    boolean fetchInFlight;
    /** Whether leaving the data plane aborts the destination transactions held open for this partition (stop, not pause). */
    boolean abortOnRemove;
    /** Why fetching cannot go on past what is queued; the partition fails once the queue has been appended. */
    String blocked;

    // append thread only
    ProducerIdentity identity;
    int nextSequence;
    /** Whether an InitProducerId for {@link #identity} is under way ({@link ProducerIds}). */
    boolean identityRequested;
    /** When the next InitProducerId may go after a lost or retriable one (System.nanoTime). */
    long identityNotBefore = System.nanoTime();
    /** InitProducerId attempts in a row that failed, for the back-off between them. */
    int identityAttempts;

    final ArrayDeque<Sent> inFlight = new ArrayDeque<>();
    /**
     * When a stop of this partition, not in the data plane, asked to abort the destination transactions left open on it
     * (System.nanoTime; 0: a partition being mirrored). It only passes through to have them read back and aborted.
     */
    long leftOpenSince;
    /** The aborts of the destination transactions left open by a stop, once started ({@link TransactionReplay}). */
    TransactionReplay.Aborts aborts;
    /** When the pending reset was requested (System.nanoTime), for giving up on an unreachable destination. */
    long resetRequestedAt;
    /** The pending reset's read-back of the destination under way, or null ({@link PipelineReset}). */
    PipelineReset.ReadBack readBack;
    /** When the next read-back may start after a failed one (System.nanoTime). */
    long readBackNotBefore = System.nanoTime();
    /** Read-backs in a row that failed, for the back-off between them. */
    int readBackAttempts;
    /**
     * Batches sent under the current producer identity whose answer was lost (disconnect, timeout, retriable error), by
     * source base offset: re-sent as they are, in order, until each is acknowledged; read back by a reset.
     */
    final TreeMap<Long, Sent> unconfirmed = new TreeMap<>();
    /** When the first of {@link #unconfirmed} lost its answer (System.nanoTime), for bounding the retries. */
    long retryingSince;
    /** Retries sent since then, for the back-off between them. */
    int retries;
    /** When the next retry may go (System.nanoTime). */
    long retryNotBefore;
    /** The destination transactions replaying this partition's source transactions. */
    final PartitionTransactions transactions = new PartitionTransactions();

    /** Completes, with the last progress, once the partition has left the data plane. */
    final CompletableFuture<DataPlane.Progress> removed = new CompletableFuture<>();

    // read by anyone
    volatile long ackedEnd;
    volatile long sourceHighWatermark = -1;
    volatile int lastEpoch = -1;
    /**
     * Records and log bytes the destination acknowledged for this instance: written by the append loop alone (one
     * writer, once per batch, no lock), read by the coordinator's rate sampler.
     */
    volatile long appendedRecords;

    volatile long appendedBytes;
    /** Tells this instance from the partition's earlier ones in the data plane, whose counters also started at 0. */
    final long instance = INSTANCES.incrementAndGet();

    FetchPartition(MirrorPartition partition, long startOffset, int sourceEpoch, int generation) {
        this(partition, startOffset, sourceEpoch, generation, FetchBudget.UNLIMITED);
    }

    FetchPartition(MirrorPartition partition, long startOffset, int sourceEpoch, int generation, FetchBudget budget) {
        this.budget = budget;
        this.partition = partition;
        this.tp = new TopicPartition(partition.topic(), partition.partition());
        this.fetchOffset = startOffset;
        this.fetchedEpoch = sourceEpoch;
        this.ackedEnd = startOffset;
        this.lastEpoch = sourceEpoch;
        this.generation = generation;
    }

    /**
     * Atomically: may this partition be fetched now (at least {@code minFree} free in its {@code maxQueuedBytes} queue and
     * in the instance's budget), and if so from where and how much: the free space (marks it in flight). Null when not.
     */
    synchronized FetchTicket ticket(long maxQueuedBytes, long minFree) {
        long free = Math.min(maxQueuedBytes - queuedBytes, budget.available());
        if (removing || failed || resetPending || fetchInFlight || blocked != null || free < minFree) {
            return null;
        }
        fetchInFlight = true;
        return new FetchTicket(this, generation, fetchOffset, fetchedEpoch, (int) free);
    }

    /** The partition leaves the data plane once nothing of it is in flight (on the fetcher's thread, as a command). */
    synchronized void removing(boolean abortTransactions) {
        removing = true;
        abortOnRemove = abortTransactions;
        clearQueue();
    }

    synchronized void fetchDone() {
        fetchInFlight = false;
    }

    synchronized SourceBatch pollQueue() {
        SourceBatch batch = queue.poll();
        if (batch != null) {
            queuedBytes -= batch.sizeInBytes();
            budget.release(batch.sizeInBytes());
        }
        return batch;
    }

    /** Queues a fetched batch for the append loop (under this monitor). */
    synchronized void enqueue(SourceBatch batch) {
        queue.add(batch);
        queuedBytes += batch.sizeInBytes();
        budget.add(batch.sizeInBytes());
    }

    /** Drops what is queued (under this monitor). */
    synchronized void clearQueue() {
        queue.clear();
        budget.release(queuedBytes);
        queuedBytes = 0;
    }

    synchronized SourceBatch peekQueue() {
        return queue.peek();
    }

    /** Whether a transactional batch is in flight: nothing else is sent for the partition until it is answered. */
    boolean transactionalInFlight() {
        return !inFlight.isEmpty() && inFlight.peekLast().batch().transactional();
    }

    /** The block reason once everything before it is appended, else null. */
    synchronized String blockedAndDrained() {
        return blocked != null && queue.isEmpty() && inFlight.isEmpty() ? blocked : null;
    }

    synchronized boolean sendable() {
        return !removing && !failed && !resetPending && !queue.isEmpty();
    }

    /** Whether the fast path may send the head of the queue: sendable, and not for the transaction replay. */
    synchronized boolean plainSendable() {
        return sendable() && !TransactionReplay.replayed(queue.peek());
    }

    /**
     * The head of the queue, taken when the fast path may send it and it has at most {@code maxBytes} (one lock per
     * batch on the hot path); else null.
     */
    synchronized SourceBatch pollPlain(int maxBytes) {
        return plainSendable() && queue.peek().sizeInBytes() <= maxBytes ? pollQueue() : null;
    }

    /** The destination acknowledged a batch of {@code records} records, {@code bytes} long (append loop only). */
    void appended(int records, int bytes) {
        appendedRecords += records;
        appendedBytes += bytes;
    }

    /** The counters the rate sampler reads (volatile reads only). */
    DataPlane.Counts counts() {
        return new DataPlane.Counts(instance, sourceHighWatermark, ackedEnd, appendedRecords, appendedBytes);
    }

    DataPlane.Progress progress() {
        return new DataPlane.Progress(sourceHighWatermark, ackedEnd, lastEpoch, transactions.snapshot());
    }
}
