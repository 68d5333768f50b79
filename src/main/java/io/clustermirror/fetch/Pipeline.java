package io.clustermirror.fetch;

import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.WireClient;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Utils;
import org.jboss.logging.Logger;

/**
 * What the two loops of one mirror's data plane share: its partitions, the flags and views of both clusters' metadata,
 * the wire clients, and the ways a partition enters and leaves the pipeline (entered, removed, failed, fenced, reset).
 * Both loops run on the fetcher's thread, which alone changes a partition ({@link FetchPartition}); what other threads
 * touch is {@link #admitted} and the data plane's end ({@link #loopDied}), both safe from any thread.
 */
final class Pipeline {

    private static final Logger LOGGER = Logger.getLogger(Pipeline.class);

    final String mirror;
    final DataPlane.Listener listener;
    final WireClient source;
    final WireClient destination;
    final long timeoutMs;
    /** The instance's budget for queued batches, shared with every other data plane. */
    final FetchBudget budget;
    /** Whether this instance may append now: nothing is sent to the destination while it is not valid. */
    final AppendLease lease;
    /** System.nanoTime, or a test's clock: when a partition's producer id is a day old ({@link ProducerIds}). */
    final LongSupplier nanoClock;

    /**
     * The partitions the fetcher has taken up and not let go yet, in the order they entered: what the loops go over.
     * The fetcher's thread only.
     */
    final Map<TopicPartition, FetchPartition> partitions = new LinkedHashMap<>();
    /**
     * Every partition added and not gone yet, whether the fetcher has taken it up or not: what the coordinator's thread
     * and readers (progress, lags) see. An add puts it here, its leaving or the data plane's end takes it out; a change
     * of membership and the data plane's end exclude each other under this pipeline's monitor (so an add is either
     * refused or ended with the rest).
     */
    final Map<TopicPartition, FetchPartition> admitted = new ConcurrentHashMap<>();
    /** One counter for every generation of every partition: a re-added partition never reuses a value. */
    private final AtomicInteger generations = new AtomicInteger();

    volatile boolean running = true;
    volatile boolean sourceRefresh = true;
    volatile boolean destinationRefresh = true;
    volatile ClusterView sourceView = ClusterView.empty();
    volatile ClusterView destinationView = ClusterView.empty();
    /**
     * Until when ({@link #nanoClock}) partitions are expected to join ({@link DataPlane#joining}): a Fetch of caught-up
     * partitions alone waits on its broker only briefly meanwhile.
     */
    volatile long joiningUntil;
    /** When ({@link #nanoClock}) a partition last entered. The fetcher's thread only. */
    long lastEntry;
    /** Why this data plane stopped for good (a loop died or was stuck), or null while it runs. */
    private volatile String deadReason;
    /** Completes once, when a loop died or was stuck (after its partitions have failed). */
    final CompletableFuture<DataPlane.LoopDeath> death = new CompletableFuture<>();
    /** When each loop last went round (System.nanoTime), for telling a stuck loop from a busy one. */
    volatile long fetcherBeat = System.nanoTime();

    volatile long appenderBeat = System.nanoTime();

    Pipeline(String mirror, DataPlane.Listener listener, WireClient source, WireClient destination, long timeoutMs) {
        this(
                mirror,
                listener,
                source,
                destination,
                timeoutMs,
                FetchBudget.UNLIMITED,
                AppendLease.ALWAYS,
                System::nanoTime);
    }

    Pipeline(
            String mirror,
            DataPlane.Listener listener,
            WireClient source,
            WireClient destination,
            long timeoutMs,
            FetchBudget budget,
            AppendLease lease,
            LongSupplier nanoClock) {
        this.budget = budget;
        this.lease = lease;
        this.nanoClock = nanoClock;
        this.mirror = mirror;
        this.listener = listener;
        this.source = source;
        this.destination = destination;
        this.timeoutMs = timeoutMs;
        this.joiningUntil = nanoClock.getAsLong();
    }

    /** Whether partitions are expected to join now ({@link DataPlane#joining}). */
    boolean joining() {
        return nanoClock.getAsLong() - joiningUntil < 0;
    }

    /** Whether a partition entered in the last {@value MirrorFetcher#JOINING_MS} ms. The fetcher's thread only. */
    boolean joinedLately() {
        return nanoClock.getAsLong() - lastEntry < TimeUnit.MILLISECONDS.toNanos(MirrorFetcher.JOINING_MS);
    }

    /**
     * The destination connection a partition is pinned to, one of its fetcher's {@value
     * AppendLoop#CONNECTIONS_PER_BROKER} to the leader: every request of the partition goes over it (Produce, retries,
     * read-backs; its InitProducerIds go on {@link ProducerIds}' own connections), so a broker sees them in the order they were sent.
     */
    Node pinned(Node leader, TopicPartition tp) {
        return destination.connection(leader, Utils.abs(tp.hashCode()) % AppendLoop.CONNECTIONS_PER_BROKER);
    }

    int nextGeneration() {
        return generations.incrementAndGet();
    }

    /**
     * Takes an added partition up, on the fetcher's thread (the add command): it is fetched from the next round on.
     * Nothing happens to one that the data plane's end already let go.
     */
    void enter(FetchPartition state) {
        if (admitted.get(state.tp) != state || !running) {
            return; // the data plane ended or was closed before this turn: its end completes the partition
        }
        partitions.put(state.tp, state);
        state.enter();
        lastEntry = nanoClock.getAsLong();
        sourceRefresh = true;
        destinationRefresh = true;
    }

    /**
     * Takes up a stop of a partition outside the data plane (the abort command): it passes through only to have the
     * transactions left open on it read back and aborted.
     */
    void enterToAbortLeftOpen(FetchPartition state, long since) {
        if (admitted.get(state.tp) != state || !running) {
            return;
        }
        partitions.put(state.tp, state);
        state.enterToAbortLeftOpen(since);
        destinationRefresh = true;
    }

    /** The remove command, on the fetcher's thread: the partition leaves once nothing of it is in flight. */
    void remove(FetchPartition state, boolean abortTransactions) {
        if (partitions.get(state.tp) == state) {
            state.remove(abortTransactions);
        }
    }

    /** The partition has left (the caller took it out of {@link #partitions}): whoever waits for it hears it now. */
    void left(FetchPartition state) {
        admitted.remove(state.tp, state);
        state.removed.complete(state.progress());
    }

    /**
     * The fallback when batches cannot be sent again in place ({@link LostAnswers}): drops what is queued and in flight
     * for the partition and resumes from the destination's log end, read back ({@link PipelineReset}), under the next
     * epoch of its producer id. On the fetcher's thread. A transaction of the partition that is open may be writing its
     * marker: the end is read only once the destination says it is done ({@link TransactionRecovery}). Nothing happens
     * to a partition that is resetting or leaving.
     */
    void requestReset(FetchPartition state, String reason) {
        long now = System.nanoTime();
        if (!state.reset(now, new PipelineReset.ReadBack(now), nextGeneration())) {
            return;
        }
        if (!state.transactions.open().isEmpty()) {
            state.transactions.recoveryNeeded = true;
        }
        destinationRefresh = true;
        LOGGER.infof("Mirror %s: %s pipeline reset (%s)", mirror, state.partition, reason);
    }

    /**
     * The destination's view shows no leader of the partition, or no id of its topic, when it has records to append or
     * to fetch:
     * a new view is asked for, and past four request timeouts of that the partition fails with the reason instead of
     * staying MIRRORING without appending (its destination topic deleted, the partition offline). Fetcher thread.
     */
    void leaderless(FetchPartition state) {
        destinationRefresh = true;
        // a look more than two request timeouts after the last (the partition idle meanwhile) starts the count again
        long lasted = state.leaderless.seen(nanoClock.getAsLong(), TimeUnit.MILLISECONDS.toNanos(2 * timeoutMs), true);
        if (lasted > TimeUnit.MILLISECONDS.toNanos(4 * timeoutMs)) {
            fail(
                    state,
                    "the destination has shown no leader of the partition for " + (4 * timeoutMs)
                            + " ms: its topic was deleted or is not known to the destination, or the partition is "
                            + "offline");
        }
    }

    /** The partition stops here; its owner is told, moves it to FAILED and logs it (once, there). */
    void fail(FetchPartition state, String error) {
        if (state.fail(error, nextGeneration()) && state.tellOwnerOnce()) {
            LOGGER.debugf("Mirror %s: %s leaves the pipeline: %s", mirror, state.partition, error);
            listener.onFailed(state.partition, error);
            destination.wakeup();
        }
    }

    /** The source leader's log diverged from what was fetched: the owner moves the partition to EPOCH_FENCING (and logs it). */
    void fence(FetchPartition state, String reason, long epochEndOffset) {
        if (state.fail(reason, nextGeneration()) && state.tellOwnerOnce()) {
            LOGGER.debugf("Mirror %s: %s leaves the pipeline for EPOCH_FENCING: %s", mirror, state.partition, reason);
            listener.onEpochFenced(state.partition, reason, epochEndOffset);
            destination.wakeup();
        }
    }

    String deadReason() {
        return deadReason;
    }

    /**
     * A loop died ({@code cause}: an Error, an exception the loop cannot tell is harmless, a network client in an
     * unknown state) or is stuck: nothing of this data plane can be trusted to run on. Every partition in it fails with
     * the reason (so none stays MIRRORING with only a growing lag to show), the removals waiting on it complete, and
     * then {@link #death} does; the owner builds a new data plane when it next needs one. This may run on another
     * thread than the fetcher's (the liveness check of a stuck one), so it changes no partition: from now on each reads
     * as Failed ({@link FetchPartition#phase}) and takes no transition, and what is queued goes back to the budget when
     * the fetcher lets the data plane go ({@link #detached}).
     */
    void loopDied(DataPlane.Loop loop, String how, Throwable cause) {
        String reason;
        synchronized (this) { // the lock add() takes: a partition is either refused or ended here
            if (deadReason != null || !running) {
                return; // already ended, or closing: a thread interrupted by close() is no death
            }
            reason = "the data plane's " + loop.label() + " thread " + how + ": " + cause;
            deadReason = reason;
        }
        running = false;
        LOGGER.errorf(cause, "Mirror %s: %s; its partitions fail and a new data plane is built", mirror, reason);
        for (FetchPartition state : admitted.values()) {
            if (state.tellOwnerOnce()) {
                listener.onFailed(state.partition, reason);
            }
            state.removed.complete(state.progress());
        }
        admitted.clear();
        death.complete(new DataPlane.LoopDeath(loop, reason));
        source.wakeup();
        destination.wakeup();
    }

    /**
     * The data plane left its fetcher (closed or dead), on the fetcher's thread: it takes no more partitions, what is
     * queued goes back to the instance's budget, and whoever waits for a partition to leave hears it now.
     */
    void detached() {
        synchronized (this) { // the lock add() takes: refused from now on, or let go below
            running = false;
        }
        partitions.values().forEach(FetchPartition::clearQueue);
        partitions.clear();
        admitted.values().forEach(state -> state.removed.complete(state.progress()));
        admitted.clear(); // nothing of a closed data plane is reported (lag gauges) any more
    }

    /**
     * Where a loop reads its cluster's brokers, leaders and topic ids: asynchronously (an Admin's futures), for the loop
     * to take up in a later round, so that no fetcher turn waits for metadata.
     */
    @FunctionalInterface
    interface Views {
        CompletionStage<ClusterView> load(Set<String> topics);

        static Views of(Admin admin, long timeoutMs) {
            return topics -> ClusterView.loadAsync(admin, topics, timeoutMs);
        }
    }

    /** The topics of the partitions in this data plane, for a view. */
    Set<String> topics() {
        return partitions.keySet().stream().map(TopicPartition::topic).collect(Collectors.toSet());
    }
}
