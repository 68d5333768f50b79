package io.clustermirror.fetch;

import io.clustermirror.batches.SourceBatch;
import io.clustermirror.kafka.ProducerIdentity;
import io.clustermirror.mirror.MirrorPartition;
import java.util.ArrayDeque;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;

/**
 * The data plane's view of one partition, owned by the thread of its data plane's fetcher: every field but the
 * volatile ones below is read and written there alone, so none needs a lock. The coordinator never writes it: its add
 * and remove are commands the fetcher runs at the start of a turn ({@link MirrorFetcher}). A new instance is made each
 * time a partition enters the data plane, so responses to requests of an earlier instance are told apart by identity.
 *
 * <p>Where the partition stands is one {@link Phase}, held in one field and changed only by the transition methods
 * below, each of which names the phases it moves from; any other move is a bug and throws IllegalStateException naming
 * both phases:
 *
 * <pre>
 *  Entering ──enter──► Fetching ──block──► Blocked
 *     │                 ▲    │               │
 *     │          resume │    │ reset         │ reset
 *     │                 │    ▼               │
 *     │               Resetting ◄────────────┘
 *     │
 *     └──enterToAbortLeftOpen──► Removing ◄──remove── Fetching, Blocked, Resetting
 *                                Failed   ◄──fail──── Fetching, Blocked, Resetting, Removing
 *  Removing, Failed ──(nothing of it in flight)──► gone (AppendLoop)
 * </pre>
 *
 * A reset of a partition that is resetting or leaving (Resetting, Removing, Failed) and a failure of a failed one
 * change nothing (their callers cannot know); a further removal keeps the partition where it is and adds the abort of
 * its transactions if asked for (Removing, Failed). Once the data plane has died ({@link Pipeline#loopDied}, possibly
 * on another thread while the fetcher's is stuck) every partition of it reads as Failed and takes no transition any
 * more (each is a no-op), so whatever a stuck round still does sends nothing for them.
 */
final class FetchPartition {

    /**
     * What a partition's first Fetch asks for at most. Entering partitions' first batches are what a start waits for:
     * a Fetch of 16 MiB filled four partitions' 4 MiB queues and left the other four of a start for the next Fetch,
     * about 30 ms later (traced); 1 MiB each brings every one of them its first batches in one smaller answer, and
     * the next Fetch asks for the free room as always. Once, whatever comes back: a partition whose first batch is
     * larger gets it with its next Fetch.
     */
    static final long FIRST_FETCH_BYTES = 1L << 20;

    private static final AtomicLong INSTANCES = new AtomicLong();

    /**
     * One batch sent to the destination, its bytes restamped with the producer id, epoch and sequence it is sent (and
     * re-sent) under.
     *
     * @param transactionalId the replay producer's, for a transactional batch; null for an idempotent one
     */
    record Sent(SourceBatch batch, int generation, String transactionalId) {}

    /** What a Fetch request was built from, captured when it was built. */
    record FetchTicket(FetchPartition state, int generation, long fetchOffset, int lastFetchedEpoch, int maxBytes) {}

    /** Where a partition stands in the data plane; see the diagram above. */
    sealed interface Phase permits Entering, Fetching, Blocked, Resetting, Removing, Failed {}

    /** Added by the coordinator, not taken up by the fetcher yet: nothing of it runs. */
    record Entering() implements Phase {}

    /** Fetched and appended. */
    record Fetching() implements Phase {}

    /**
     * Fetching cannot go on past what is queued ({@code reason}, e.g. a message format the destination cannot take at
     * that offset): what is queued is still appended, then the partition fails with the reason.
     */
    record Blocked(String reason) implements Phase {}

    /**
     * A pipeline reset ({@link PipelineReset}): nothing is fetched or sent until the destination has been read back.
     *
     * @param requestedAtNanos when it was asked for (System.nanoTime), for giving up on an unreachable destination
     * @param readBack the read-back of the destination, its tries and their back-off
     */
    record Resetting(long requestedAtNanos, PipelineReset.ReadBack readBack) implements Phase {}

    /**
     * Leaving the data plane (the coordinator's remove), once nothing of it is in flight.
     *
     * @param abortTransactions whether the destination transactions held open for it are aborted first (stop, not
     *     pause)
     * @param resendLost whether batches whose answers were lost are sent again while the removal waits for them (not
     *     after a reset, which had given up on sending them in place: the removal then only waits out their bound)
     * @param leftOpenSinceNanos for a stop of a partition outside the data plane, which only passes through to have the
     *     transactions left open on it read back and aborted: when that stop was asked for (System.nanoTime); 0 else
     */
    record Removing(boolean abortTransactions, boolean resendLost, long leftOpenSinceNanos) implements Phase {}

    /**
     * Stopped for good here (failed, fenced, or its data plane died; the owner is told once): it leaves the data plane
     * once nothing of it is in flight.
     *
     * @param abortTransactions whether a removal asked for the destination transactions held open for it to be aborted
     *     as it leaves
     */
    record Failed(String error, boolean abortTransactions) implements Phase {}

    private static final Phase ENTERING = new Entering();
    private static final Phase FETCHING = new Fetching();

    final MirrorPartition partition;
    final TopicPartition tp;
    /** The instance's budget that this partition's queue counts against (shared by every fetcher, hence atomic). */
    private final FetchBudget budget;
    /** Why this partition's data plane died, or null while it runs. */
    private final Supplier<String> dataPlaneDeath;

    /** Written only by the transition methods, on the fetcher's thread; volatile for readers elsewhere. */
    private volatile Phase phase = ENTERING;
    /** Whether the owner has been told that the partition ended here: once, by whichever thread tells it first. */
    private final AtomicBoolean ended = new AtomicBoolean();

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
    /** Whether a Fetch of this partition is in flight (one at a time). */
    boolean fetchInFlight;
    /** Whether this partition was asked for since it entered: its first Fetch asks for {@value #FIRST_FETCH_BYTES}. */
    private boolean askedBefore;

    ProducerIdentity identity;
    int nextSequence;
    /** The destination's transaction coordinator of the partition's producer id, once found ({@link ProducerIds}). */
    Node identityCoordinator;
    /** When {@link #identity} was given (System.nanoTime), for its daily renewal ({@link ProducerIds#REFRESH_NANOS}). */
    long identitySince;
    /** Whether a FindCoordinator or InitProducerId for {@link #identity} is under way ({@link ProducerIds}). */
    boolean identityRequested;
    /** When the next InitProducerId may go after a lost or retriable one (System.nanoTime). */
    long identityNotBefore = System.nanoTime();
    /** InitProducerId attempts in a row that failed, for the back-off between them. */
    int identityAttempts;
    /**
     * The look-ups for {@link #identity} of a partition with records waiting that failed since it was last given
     * (FindCoordinator answers between them do not count as given): past a bound the partition fails ({@link
     * ProducerIds}).
     */
    final TroubleSpan identityRefusals = new TroubleSpan();
    /** The destination view's looks that showed no leader of the partition ({@link Pipeline#leaderless}). */
    final TroubleSpan leaderless = new TroubleSpan();

    final ArrayDeque<Sent> inFlight = new ArrayDeque<>();
    /** The aborts of the destination transactions left open by a stop, once started ({@link TransactionReplay}). */
    TransactionReplay.Aborts aborts;
    /** The transaction step under way for the batch or marker at the head of the queue ({@link TransactionReplay}). */
    TransactionReplay.Step replayStep;
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

    // read by anyone (progress, lags)
    volatile long ackedEnd;
    volatile long sourceHighWatermark = -1;
    volatile int lastEpoch = -1;
    /**
     * Records and log bytes the destination acknowledged for this instance: written by the append loop alone (one
     * writer, once per batch, no lock), read by the coordinator's rate sampler.
     */
    volatile long appendedRecords;

    volatile long appendedBytes;
    /** When a Fetch answer last brought the source high watermark (wall clock, ms; -1: never). */
    volatile long sourceSeenAtMs = -1;
    /** The oldest fetched record not acknowledged yet (written by the lane's thread alone, read by the RPO sampler). */
    volatile DataPlane.Unmirrored unmirrored;
    /** Tells this instance from the partition's earlier ones in the data plane, whose counters also started at 0. */
    final long instance = INSTANCES.incrementAndGet();

    /** A partition of no data plane (unit tests): its data plane never dies. */
    FetchPartition(MirrorPartition partition, long startOffset, int sourceEpoch, int generation) {
        this(partition, startOffset, sourceEpoch, generation, FetchBudget.UNLIMITED);
    }

    FetchPartition(MirrorPartition partition, long startOffset, int sourceEpoch, int generation, FetchBudget budget) {
        this(partition, startOffset, sourceEpoch, generation, budget, () -> null);
    }

    /**
     * A partition entering a data plane, in {@link Entering}.
     *
     * @param dataPlaneDeath why its data plane died, or null while it runs (read on every look at the phase)
     */
    FetchPartition(
            MirrorPartition partition,
            long startOffset,
            int sourceEpoch,
            int generation,
            FetchBudget budget,
            Supplier<String> dataPlaneDeath) {
        this.budget = budget;
        this.dataPlaneDeath = dataPlaneDeath;
        this.partition = partition;
        this.tp = new TopicPartition(partition.topic(), partition.partition());
        this.fetchOffset = startOffset;
        this.fetchedEpoch = sourceEpoch;
        this.ackedEnd = startOffset;
        this.lastEpoch = sourceEpoch;
        this.generation = generation;
    }

    // ---------------------------------------------------------------- the phase and its transitions

    /** Where the partition stands: its phase, or Failed once its data plane died. Safe from any thread. */
    Phase phase() {
        Phase current = phase;
        String death = current instanceof Failed ? null : dataPlaneDeath.get();
        return death == null ? current : new Failed(death, false);
    }

    /** Entering → Fetching: the fetcher took the partition up (the add command). */
    void enter() {
        if (isDead()) {
            return;
        }
        Phase from = phase;
        if (!(from instanceof Entering)) {
            throw illegal(from, FETCHING);
        }
        phase = FETCHING;
    }

    /**
     * Entering → Removing: a stop of a partition outside the data plane, taken up only to read back and abort the
     * destination transactions left open on it ({@code since}: when the stop was asked for).
     */
    void enterToAbortLeftOpen(long since) {
        if (isDead()) {
            return;
        }
        Phase from = phase;
        Removing to = new Removing(true, false, since);
        if (!(from instanceof Entering)) {
            throw illegal(from, to);
        }
        phase = to;
    }

    /** Fetching → Blocked: fetching stops past what is queued (a fetched batch cannot be mirrored as it is). */
    void block(String reason) {
        if (isDead()) {
            return;
        }
        Phase from = phase;
        Blocked to = new Blocked(reason);
        if (!(from instanceof Fetching)) {
            throw illegal(from, to);
        }
        phase = to;
    }

    /**
     * Fetching or Blocked → Resetting: what is queued is dropped and nothing more is fetched or sent under this
     * generation until {@link #resume}. Resetting, Removing, Failed: nothing changes (a reset under way, or leaving).
     *
     * @return whether the partition moved to Resetting
     */
    boolean reset(long now, PipelineReset.ReadBack readBack, int newGeneration) {
        if (isDead()) {
            return false;
        }
        Phase from = phase;
        if (from instanceof Resetting || from instanceof Removing || from instanceof Failed) {
            return false;
        }
        Resetting to = new Resetting(now, readBack);
        if (!(from instanceof Fetching || from instanceof Blocked)) {
            throw illegal(from, to);
        }
        phase = to;
        generation = newGeneration;
        clearQueue();
        return true;
    }

    /** Resetting → Fetching: the destination was read back; fetching goes on from its end, {@code end}. */
    void resume(long end, int newGeneration) {
        if (isDead()) {
            return;
        }
        Phase from = phase;
        if (!(from instanceof Resetting)) {
            throw illegal(from, FETCHING);
        }
        phase = FETCHING;
        generation = newGeneration;
        clearQueue();
        fetchOffset = end;
        fetchedEpoch = lastEpoch;
    }

    /**
     * Fetching, Blocked or Resetting → Removing (the remove command): nothing more is fetched, what is queued is
     * dropped, and the partition leaves once nothing of it is in flight. Removing or Failed stay where they are, with
     * the abort added if asked for now (a stop after a pause aborts; a pause after a stop does not take it back).
     */
    void remove(boolean abortTransactions) {
        if (isDead()) {
            return;
        }
        Phase from = phase;
        Phase to;
        if (from instanceof Fetching || from instanceof Blocked) {
            to = new Removing(abortTransactions, true, 0);
        } else if (from instanceof Resetting) {
            to = new Removing(abortTransactions, false, 0);
        } else if (from instanceof Removing removing) {
            to = new Removing(
                    removing.abortTransactions() || abortTransactions,
                    removing.resendLost(),
                    removing.leftOpenSinceNanos());
        } else if (from instanceof Failed failed) {
            to = new Failed(failed.error(), failed.abortTransactions() || abortTransactions);
        } else {
            throw illegal(from, new Removing(abortTransactions, true, 0));
        }
        phase = to;
        clearQueue();
    }

    /**
     * Fetching, Blocked, Resetting or Removing → Failed: nothing more is fetched or sent, what is queued is dropped, and
     * the partition leaves once nothing of it is in flight (with the abort a removal asked for). Failed: nothing
     * changes.
     *
     * @return whether the partition moved to Failed now (its owner is to be told, {@link #tellOwnerOnce})
     */
    boolean fail(String error, int newGeneration) {
        if (isDead()) {
            return false;
        }
        Phase from = phase;
        if (from instanceof Failed) {
            return false;
        }
        Failed to = new Failed(error, from instanceof Removing removing && removing.abortTransactions());
        if (from instanceof Entering) {
            throw illegal(from, to);
        }
        phase = to;
        generation = newGeneration;
        clearQueue();
        return true;
    }

    /** Whether the owner is to be told now that the partition ended here (true once, on whichever thread asks first). */
    boolean tellOwnerOnce() {
        return ended.compareAndSet(false, true);
    }

    private boolean isDead() {
        return dataPlaneDeath.get() != null;
    }

    private IllegalStateException illegal(Phase from, Phase to) {
        return new IllegalStateException(
                tp + ": no transition from " + from + " to " + to + " (a bug in the data plane)");
    }

    // ---------------------------------------------------------------- the queue

    /**
     * May this partition be fetched now (Fetching, no Fetch of it in flight, at least {@code minFree} free in its
     * {@code maxQueuedBytes} queue and in the instance's budget), and if so from where and how much: the free space,
     * at most {@value #FIRST_FETCH_BYTES} the first time (marks it in flight). Null when not.
     */
    FetchTicket ticket(long maxQueuedBytes, long minFree) {
        long free = Math.min(maxQueuedBytes - queuedBytes, budget.available());
        if (fetchInFlight || free < minFree || !(phase() instanceof Fetching)) {
            return null;
        }
        fetchInFlight = true;
        long asked = askedBefore ? free : Math.min(free, FIRST_FETCH_BYTES);
        askedBefore = true;
        return new FetchTicket(this, generation, fetchOffset, fetchedEpoch, (int) asked);
    }

    void fetchDone() {
        fetchInFlight = false;
    }

    /**
     * Whether this partition has more to fetch than its queue has room for: Fetching, not being fetched, behind the
     * source's high watermark as last seen, and less than {@code minFree} free. Its room comes back as its queued
     * batches are appended.
     */
    boolean waitsForRoom(long maxQueuedBytes, long minFree) {
        return !fetchInFlight
                && behind()
                && Math.min(maxQueuedBytes - queuedBytes, budget.available()) < minFree
                && phase() instanceof Fetching;
    }

    /** Whether the source had nothing beyond {@link #fetchOffset} at its last answer: a Fetch of it waits on the broker. */
    boolean caughtUp() {
        return sourceHighWatermark >= 0 && fetchOffset >= sourceHighWatermark;
    }

    /** Whether the source had records beyond {@link #fetchOffset} at its last answer (or LOG_TRUNCATION's read). */
    boolean behind() {
        return fetchOffset < sourceHighWatermark;
    }

    SourceBatch pollQueue() {
        SourceBatch batch = queue.poll();
        if (batch != null) {
            queuedBytes -= batch.sizeInBytes();
            budget.release(batch.sizeInBytes());
        }
        return batch;
    }

    /** Queues a fetched batch for the append loop. */
    void enqueue(SourceBatch batch) {
        queue.add(batch);
        queuedBytes += batch.sizeInBytes();
        budget.add(batch.sizeInBytes());
    }

    /** Drops what is queued, its bytes back to the budget. */
    void clearQueue() {
        queue.clear();
        budget.release(queuedBytes);
        queuedBytes = 0;
    }

    SourceBatch peekQueue() {
        return queue.peek();
    }

    /** Whether a transactional batch is in flight: nothing else is sent for the partition until it is answered. */
    boolean transactionalInFlight() {
        return !inFlight.isEmpty() && inFlight.peekLast().batch().transactional();
    }

    /** The block reason once everything before it is appended and answered, else null. */
    String blockedAndDrained() {
        return phase() instanceof Blocked blocked && queue.isEmpty() && inFlight.isEmpty() && unconfirmed.isEmpty()
                ? blocked.reason()
                : null;
    }

    /** Whether the head of the queue may be sent: Fetching or Blocked (what was queued before the block still goes). */
    boolean sendable() {
        return !queue.isEmpty() && sending();
    }

    /** Whether the partition's batches go to the destination now: neither resetting nor leaving. */
    boolean sending() {
        Phase current = phase();
        return current instanceof Fetching || current instanceof Blocked;
    }

    /**
     * Whether batches whose answers were lost are sent again ({@link LostAnswers}): while the partition is fetched or
     * blocked, or being removed (the removal waits for them); not once it failed or is reset, nor while a removal that
     * came during a reset lets it go.
     */
    boolean resendsLost() {
        Phase current = phase();
        return current instanceof Fetching
                || current instanceof Blocked
                || current instanceof Removing removing && removing.resendLost();
    }

    /**
     * Whether the fast path may send the head of the queue: sendable, not for the transaction replay, and no
     * transaction step under way (a marker taken off the queue is written and read back before the batch after it).
     */
    boolean plainSendable() {
        return replayStep == null && sendable() && !TransactionReplay.replayed(queue.peek());
    }

    /**
     * The head of the queue, taken when the fast path may send it and it has at most {@code maxBytes}; else null.
     */
    SourceBatch pollPlain(int maxBytes) {
        return plainSendable() && queue.peek().sizeInBytes() <= maxBytes ? pollQueue() : null;
    }

    /** The destination acknowledged a batch of {@code records} records, {@code bytes} long (append loop only). */
    void appended(int records, int bytes) {
        appendedRecords += records;
        appendedBytes += bytes;
    }

    /**
     * Notes the timestamp of the record at {@link #ackedEnd}, the oldest not acknowledged, once a batch holding it is
     * fetched (queued, in flight or waiting for a retry); lane thread only, after the queue or the acknowledged end moved.
     */
    void noteUnmirrored() {
        long at = ackedEnd;
        DataPlane.Unmirrored current = unmirrored;
        if (current != null && current.offset() == at) {
            return;
        }
        SourceBatch holding = holding(at, queue.peek());
        for (var sent = inFlight.iterator(); holding == null && sent.hasNext(); ) { // at most a few per partition
            holding = holding(at, sent.next().batch());
        }
        var retried = unconfirmed.floorEntry(at);
        if (holding == null && retried != null) {
            holding = holding(at, retried.getValue().batch());
        }
        if (holding != null) {
            unmirrored = new DataPlane.Unmirrored(at, holding.recordTimestamp());
        }
    }

    private static SourceBatch holding(long offset, SourceBatch batch) {
        return batch != null && batch.baseOffset() <= offset && offset <= batch.lastOffset() ? batch : null;
    }

    /** The counters the samplers read (volatile reads only). */
    DataPlane.Counts counts() {
        return new DataPlane.Counts(
                instance, sourceHighWatermark, ackedEnd, appendedRecords, appendedBytes, sourceSeenAtMs, unmirrored);
    }

    DataPlane.Progress progress() {
        return new DataPlane.Progress(sourceHighWatermark, ackedEnd, lastEpoch, transactions.snapshot());
    }
}
