package io.clustermirror.fetch;

import io.clustermirror.kafka.WireClient;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.OpenTransaction;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartition;
import org.jboss.logging.Logger;

/**
 * The data plane of one mirror, on a {@link Fetcher} of the instance's {@link FetcherPool}: its {@link FetchLoop} pulls
 * raw record batches from the source partition leaders (one Fetch in flight per fetcher lane, many partitions each),
 * its {@link AppendLoop} produces the same bytes to the destination leaders over the connections the fetcher shares
 * among its data planes (one batch per partition per request, up to {@value AppendLoop#MAX_IN_FLIGHT_PER_PARTITION} in
 * flight per partition under the partition's own idempotent producer id) and checks that every batch lands at its
 * source offset. Both run as rounds of the fetcher's turns; neither owns a thread. What they share is the
 * {@link Pipeline}; this class is how the coordinator drives them.
 */
public final class MirrorFetcher implements DataPlane, Fetcher.Rounds, AutoCloseable {

    private static final Logger LOGGER = Logger.getLogger(MirrorFetcher.class);

    /** How long partitions are expected at most after {@link #joining}: a start whose partitions never come. */
    static final long JOINING_MS = 5_000;

    private final String mirror;
    private final Fetcher fetcher;
    private final Pipeline pipeline;
    /** The partitions added and not gone yet ({@link Pipeline#admitted}): what this class reads from other threads. */
    private final Map<TopicPartition, FetchPartition> admitted;

    private final WireClient source;
    private final FetchLoop fetchLoop;
    private final AppendLoop appendLoop;
    /** The thread running this data plane's round now, or null: what a stuck check may interrupt. */
    private volatile Thread inRound;
    /** The loop whose round is under way, or null between rounds (for the liveness check). */
    private volatile DataPlane.Loop roundOf;
    /** Completes once the data plane has left its fetcher (closed or dead). */
    private final CompletableFuture<Void> detached = new CompletableFuture<>();

    /** A data plane on the given fetcher and clients (unit tests give them network clients of their own). */
    MirrorFetcher(
            String mirror,
            String sourceClusterId,
            Fetcher fetcher,
            WireClient source,
            WireClient destination,
            Pipeline.Views sourceViews,
            Pipeline.Views destinationViews,
            Admin destinationAdmin,
            Listener listener,
            int fetchersPerBroker,
            int timeoutMs,
            ReplicationThrottle throttle) {
        this.mirror = mirror;
        this.fetcher = fetcher;
        this.source = source;
        this.pipeline = new Pipeline(
                mirror, listener, source, destination, timeoutMs, fetcher.budget, fetcher.lease, fetcher.nanoClock);
        this.admitted = pipeline.admitted;
        this.fetchLoop = new FetchLoop(pipeline, sourceClusterId, sourceViews, fetchersPerBroker, throttle);
        this.appendLoop = new AppendLoop(
                pipeline, destinationViews, new TransactionRecovery(mirror, destinationAdmin, timeoutMs));
        fetcher.attach(this);
    }

    @Override
    public long rounds() {
        inRound = Thread.currentThread();
        try {
            long wait;
            roundOf = DataPlane.Loop.FETCHER;
            try {
                wait = fetchLoop.round();
            } catch (Throwable t) {
                pipeline.loopDied(DataPlane.Loop.FETCHER, "died", t);
                return Long.MAX_VALUE;
            }
            roundOf = DataPlane.Loop.APPENDER;
            try {
                wait = Math.min(wait, appendLoop.round()); // a transaction step due again soon shortens the poll
            } catch (Throwable t) {
                pipeline.loopDied(DataPlane.Loop.APPENDER, "died", t);
            }
            return wait;
        } finally {
            roundOf = null;
            inRound = null;
        }
    }

    @Override
    public boolean running() {
        return pipeline.running;
    }

    @Override
    public void detached() {
        pipeline.detached(); // queued bytes back to the budget, waiters told, no more partitions taken
        source.close(); // this data plane's source connections (the destination ones are the fetcher's)
        detached.complete(null);
    }

    @Override
    public void networkDied(String fetcherName, Throwable cause) {
        pipeline.loopDied(DataPlane.Loop.FETCHER, "died (" + fetcherName + "'s network client failed)", cause);
    }

    @Override
    public String deadReason() {
        return pipeline.deadReason();
    }

    /** Completes once, when a loop of this data plane died or was stuck, after its partitions have failed. */
    public CompletableFuture<LoopDeath> death() {
        return pipeline.death;
    }

    /**
     * The liveness check: a loop that has not gone round for {@code stuckAfterMs} (no loop step waits that long: every
     * remote call has a timeout, the longest back-off is 10 s) is stuck. Like a dead one, it ends the data plane: its
     * partitions fail with the thread's state and where it stands, and the thread is interrupted.
     *
     * @return whether a loop was found stuck now
     */
    public boolean checkLiveness(long stuckAfterMs) {
        if (!pipeline.running) {
            return false;
        }
        long now = System.nanoTime();
        long limit = stuckAfterMs * 1_000_000;
        // the two loops go round one after the other on one thread, so a round that hangs leaves the other loop's beat
        // older than its own: the thread is stuck once neither beat moved for the limit, and the stuck loop is the one
        // whose round is under way (outside a round, in the network poll that runs the answers' handlers: the fetcher)
        if (now - pipeline.fetcherBeat <= limit || now - pipeline.appenderBeat <= limit) {
            return false;
        }
        DataPlane.Loop round = roundOf;
        DataPlane.Loop loop = round == null ? DataPlane.Loop.FETCHER : round;
        Thread stuck = inRound;
        if (stuck == null && fetcher.current() != null) {
            return false; // another data plane's round holds the fetcher's thread: that one is the stuck one
        }
        pipeline.loopDied(
                loop, "is stuck (no progress for over " + stuckAfterMs + " ms)", new StuckLoop(fetcher.name, stuck));
        if (stuck != null && inRound == stuck) {
            stuck.interrupt(); // only while it runs this data plane's round (racy by one round at worst)
        }
        return true;
    }

    /** Where a stuck loop's thread stands, as the cause of its data plane's end. */
    static final class StuckLoop extends Exception {
        private static final long serialVersionUID = 1L;

        StuckLoop(String fetcher, Thread thread) {
            super(
                    thread == null
                            ? fetcher + " has no thread (its turns are not being run)"
                            : fetcher + " on " + thread.getName() + " is " + thread.getState()
                                    + topFrame(thread.getStackTrace()));
            if (thread != null) {
                setStackTrace(thread.getStackTrace());
            }
        }

        private static String topFrame(StackTraceElement[] stack) {
            return stack.length == 0 ? "" : " at " + stack[0];
        }
    }

    /**
     * A Fetch of caught-up partitions alone waits on its broker for up to {@value FetchLoop#FETCH_MAX_WAIT_MS} ms and
     * holds its lane (one Fetch in flight) that long: a partition that joins then waits for it before its first Fetch
     * (measured with 250 ms then: 60-225 ms of a topic start on a mirror with caught-up partitions). From now until the next add, or for at most {@value
     * #JOINING_MS} ms, such Fetches wait {@value FetchLoop#JOINING_WAIT_MS} ms at most, so that a lane is free within
     * that much once the new partitions come.
     */
    @Override
    public void joining() {
        pipeline.joiningUntil = pipeline.nanoClock.getAsLong() + TimeUnit.MILLISECONDS.toNanos(JOINING_MS);
    }

    /**
     * Admits the partition here (refused while it is still here, or once this data plane has ended or closed) and posts
     * the command that takes it up on the fetcher's thread at the start of its next turn, before this data plane's
     * round: the partition is fetched from that round on.
     */
    @Override
    public void add(MirrorPartition partition, long startOffset, int sourceEpoch, long sourceEnd) {
        FetchPartition state = new FetchPartition(
                partition, startOffset, sourceEpoch, pipeline.nextGeneration(), pipeline.budget, pipeline::deadReason);
        state.sourceHighWatermark = sourceEnd;
        synchronized (pipeline) { // the lock loopDied and detached take: refused here, or ended there
            String dead = pipeline.deadReason();
            if (dead != null) {
                throw new IllegalStateException("the data plane of " + mirror + " takes no more partitions: " + dead);
            }
            if (!pipeline.running) {
                throw new IllegalStateException("the data plane of " + mirror + " takes no more partitions: it closed");
            }
            if (admitted.putIfAbsent(state.tp, state) != null) {
                throw new IllegalStateException(
                        partition + " is still in the data plane of " + mirror + "; wait for whenGone()");
            }
        }
        pipeline.joiningUntil = pipeline.nanoClock.getAsLong(); // the expected partitions are here
        fetcher.execute(() -> pipeline.enter(state));
    }

    /**
     * Posts the removal as a command the fetcher runs at the start of its next turn, after an add posted before it and
     * before this data plane's round; the partition's phase changes there, on the fetcher's thread.
     */
    @Override
    public CompletableFuture<Progress> remove(MirrorPartition partition, boolean abortTransactions) {
        FetchPartition state = admitted.get(new TopicPartition(partition.topic(), partition.partition()));
        if (state == null && abortTransactions) {
            return abortLeftOpen(partition);
        }
        if (state == null) {
            return CompletableFuture.completedFuture(null);
        }
        fetcher.execute(() -> pipeline.remove(state, abortTransactions));
        return state.removed;
    }

    /**
     * Stop of a partition that is not in the data plane (FAILED, PAUSED, or after a restart): it passes through the
     * append loop only to have the destination transactions left open on it read back and aborted, like those of a
     * partition being mirrored, on the fetcher's connections. Completes with null once done.
     */
    private CompletableFuture<Progress> abortLeftOpen(MirrorPartition partition) {
        FetchPartition state =
                new FetchPartition(partition, -1, -1, pipeline.nextGeneration(), pipeline.budget, pipeline::deadReason);
        long since = System.nanoTime();
        synchronized (pipeline) { // the lock loopDied and detached take: admitted here, or refused
            if (pipeline.deadReason() != null || !pipeline.running) {
                LOGGER.errorf(
                        "Mirror %s: %s stopped, but the destination transactions left open on it were not aborted (its data "
                                + "plane has ended); the destination aborts them after their transaction timeout",
                        mirror, partition);
                return CompletableFuture.completedFuture(null);
            }
            if (admitted.putIfAbsent(state.tp, state) != null) {
                return whenGone(partition);
            }
        }
        fetcher.execute(() -> pipeline.enterToAbortLeftOpen(state, since));
        return state.removed.thenApply(progress -> null);
    }

    @Override
    public CompletableFuture<Progress> whenGone(MirrorPartition partition) {
        FetchPartition state = admitted.get(new TopicPartition(partition.topic(), partition.partition()));
        return state == null ? CompletableFuture.completedFuture(null) : state.removed;
    }

    public Optional<Progress> progress(MirrorPartition partition) {
        FetchPartition state = admitted.get(new TopicPartition(partition.topic(), partition.partition()));
        return state == null ? Optional.empty() : Optional.of(state.progress());
    }

    /** The partition's phase, while it is in the data plane (tests). */
    Optional<FetchPartition.Phase> phase(MirrorPartition partition) {
        FetchPartition state = admitted.get(new TopicPartition(partition.topic(), partition.partition()));
        return state == null ? Optional.empty() : Optional.of(state.phase());
    }

    /** Whether a pipeline reset of the partition is under way (tests). */
    boolean resetting(MirrorPartition partition) {
        return phase(partition).orElse(null) instanceof FetchPartition.Resetting;
    }

    /** The destination transactions held open over all partitions in the data plane. */
    public List<OpenTransaction> openTransactions() {
        List<OpenTransaction> open = new ArrayList<>();
        admitted.values().forEach(state -> open.addAll(state.transactions.snapshot()));
        return open;
    }

    /** The largest known lag (source high watermark - destination end) over the partitions being mirrored. */
    public long maxLag() {
        return lags().values().stream().mapToLong(Long::longValue).max().orElse(0);
    }

    /** Each partition's lag in records (source high watermark minus destination end), once its source end is known. */
    public Map<MirrorPartition, Long> lags() {
        Map<MirrorPartition, Long> lags = new HashMap<>();
        for (FetchPartition state : admitted.values()) {
            long sourceEnd = state.sourceHighWatermark;
            if (sourceEnd >= 0) {
                lags.put(state.partition, Math.max(0, sourceEnd - state.ackedEnd));
            }
        }
        return lags;
    }

    /** The rate sampler's counters of every partition in this data plane. */
    public Map<MirrorPartition, Counts> counts() {
        Map<MirrorPartition, Counts> counts = new HashMap<>();
        admitted.values().forEach(state -> counts.put(state.partition, state.counts()));
        return counts;
    }

    /** Leaves the fetcher (after the round under way, at most 5 s), closing this data plane's source connections. */
    @Override
    public void close() {
        pipeline.running = false;
        source.wakeup();
        if (Thread.currentThread() != fetcher.current()) {
            try {
                detached.get(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception e) {
                LOGGER.warnf(
                        "Mirror %s: the data plane had not left %s within 5 s (a round of it is still under way); it "
                                + "leaves once that round ends",
                        mirror, fetcher.name);
            }
        }
    }
}
