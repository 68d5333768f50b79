package io.clustermirror.fetch;

import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.WireClient;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Utils;
import org.jboss.logging.Logger;

/**
 * What the two loops of one mirror's data plane share: its partitions, the flags and views of both clusters' metadata,
 * the wire clients, and the ways a partition leaves the pipeline (failed, fenced, reset). A partition's own fields are
 * guarded by its monitor; these are safe from either loop.
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

    final Map<TopicPartition, FetchPartition> partitions = new ConcurrentHashMap<>();
    /** One counter for every generation of every partition: a re-added partition never reuses a value. */
    private final AtomicInteger generations = new AtomicInteger();

    volatile boolean running = true;
    volatile boolean sourceRefresh = true;
    volatile boolean destinationRefresh = true;
    volatile ClusterView sourceView = ClusterView.empty();
    volatile ClusterView destinationView = ClusterView.empty();
    /** Why this data plane stopped for good (a loop died or was stuck), or null while it runs. */
    private volatile String deadReason;
    /** Completes once, when a loop died or was stuck (after its partitions have failed). */
    final CompletableFuture<DataPlane.LoopDeath> death = new CompletableFuture<>();
    /** When each loop last went round (System.nanoTime), for telling a stuck loop from a busy one. */
    volatile long fetcherBeat = System.nanoTime();

    volatile long appenderBeat = System.nanoTime();

    Pipeline(String mirror, DataPlane.Listener listener, WireClient source, WireClient destination, long timeoutMs) {
        this(mirror, listener, source, destination, timeoutMs, FetchBudget.UNLIMITED);
    }

    Pipeline(
            String mirror,
            DataPlane.Listener listener,
            WireClient source,
            WireClient destination,
            long timeoutMs,
            FetchBudget budget) {
        this.budget = budget;
        this.mirror = mirror;
        this.listener = listener;
        this.source = source;
        this.destination = destination;
        this.timeoutMs = timeoutMs;
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
     * The fallback when batches cannot be sent again in place ({@link LostAnswers}): drops what is queued and in flight
     * for the partition and resumes from the destination's log end, read back ({@link PipelineReset}), under the next
     * epoch of its producer id. On the append thread. A transaction of the partition that is open may be writing its
     * marker: the end is read only once the destination says it is done ({@link TransactionRecovery}).
     */
    void requestReset(FetchPartition state, String reason) {
        synchronized (state) {
            if (state.resetPending || state.removing || state.failed) {
                return;
            }
            state.resetPending = true;
            state.resetRequestedAt = System.nanoTime();
            state.readBack = null;
            state.readBackAttempts = 0;
            state.readBackNotBefore = state.resetRequestedAt;
            state.blocked = null;
            state.generation = nextGeneration();
            state.clearQueue();
        }
        if (!state.transactions.open().isEmpty()) {
            state.transactions.recoveryNeeded = true;
        }
        destinationRefresh = true;
        LOGGER.infof("Mirror %s: %s pipeline reset (%s)", mirror, state.partition, reason);
    }

    /** The partition stops here; its owner is told, moves it to FAILED and logs it (once, there). */
    void fail(FetchPartition state, String error) {
        if (halt(state)) {
            LOGGER.debugf("Mirror %s: %s leaves the pipeline: %s", mirror, state.partition, error);
            listener.onFailed(state.partition, error);
            destination.wakeup();
        }
    }

    /** The source leader's log diverged from what was fetched: the owner moves the partition to EPOCH_FENCING (and logs it). */
    void fence(FetchPartition state, String reason, long epochEndOffset) {
        if (halt(state)) {
            LOGGER.debugf("Mirror %s: %s leaves the pipeline for EPOCH_FENCING: %s", mirror, state.partition, reason);
            listener.onEpochFenced(state.partition, reason, epochEndOffset);
            destination.wakeup();
        }
    }

    /** Stops fetching and sending for the partition, once; false when it was already stopped. */
    private boolean halt(FetchPartition state) {
        synchronized (state) {
            if (state.failed) {
                return false;
            }
            state.failed = true;
            state.generation = nextGeneration();
            state.clearQueue();
        }
        return true;
    }

    String deadReason() {
        return deadReason;
    }

    /**
     * A loop died ({@code cause}: an Error, an exception the loop cannot tell is harmless, a network client in an
     * unknown state) or is stuck: nothing of this data plane can be trusted to run on. Every partition in it fails with
     * the reason (so none stays MIRRORING with only a growing lag to show), the removals waiting on it complete, and
     * then {@link #death} does; the owner builds a new data plane when it next needs one.
     */
    void loopDied(String loop, String how, Throwable cause) {
        String reason;
        synchronized (this) { // the lock add() takes: a partition is either refused or failed here
            if (deadReason != null || !running) {
                return; // already ended, or closing: a thread interrupted by close() is no death
            }
            reason = "the data plane's " + loop + " thread " + how + ": " + cause;
            deadReason = reason;
        }
        running = false;
        LOGGER.errorf(cause, "Mirror %s: %s; its partitions fail and a new data plane is built", mirror, reason);
        for (FetchPartition state : partitions.values()) {
            fail(state, reason);
            state.removed.complete(state.progress());
        }
        partitions.clear();
        death.complete(new DataPlane.LoopDeath(loop, reason));
        source.wakeup();
        destination.wakeup();
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
