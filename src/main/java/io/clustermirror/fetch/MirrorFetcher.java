package io.clustermirror.fetch;

import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.OpenTransaction;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartition;
import org.jboss.logging.Logger;

/**
 * The data plane of one mirror: a {@link FetchLoop} thread pulls raw record batches from the source partition leaders
 * (one Fetch in flight per broker, many partitions each), an {@link AppendLoop} thread produces the same bytes to the
 * destination leaders (one batch per partition per request, up to {@value AppendLoop#MAX_IN_FLIGHT_PER_PARTITION} in
 * flight per partition under the partition's own idempotent producer id) and checks that every batch lands at its
 * source offset. Neither thread is an event loop. What they share is the {@link Pipeline}; this class is how the
 * coordinator drives them.
 */
public final class MirrorFetcher implements DataPlane, AutoCloseable {

    private static final Logger LOGGER = Logger.getLogger(MirrorFetcher.class);

    private final String mirror;
    private final Pipeline pipeline;
    private final Map<TopicPartition, FetchPartition> partitions;
    private final TransactionRecovery recovery;
    private final Admin destinationAdmin;
    private final Map<String, ?> destinationConnection;
    private final long timeoutMs;
    private final WireClient source;
    private final WireClient destination;
    private final Thread fetchThread;
    private final Thread appendThread;

    /**
     * @param sourceTimeoutMs request timeout of the source-side wire client ({@code mirror.source.request.timeout.ms})
     * @param timeoutMs request timeout of everything on the destination side ({@code mirror.destination.request.timeout.ms})
     * @param throttle the instance's replication budget, shared by every mirror's fetch loop
     */
    public MirrorFetcher(
            String mirror,
            String sourceClusterId,
            Map<String, ?> sourceConnection,
            Map<String, ?> destinationConnection,
            Admin sourceAdmin,
            Admin destinationAdmin,
            Listener listener,
            int sourceTimeoutMs,
            int destinationTimeoutMs,
            ReplicationThrottle throttle) {
        this(
                mirror,
                sourceClusterId,
                WireClient.create("cluster-mirror-" + mirror + "-fetcher", sourceConnection, sourceTimeoutMs),
                WireClient.create(
                        "cluster-mirror-" + mirror + "-appender", destinationConnection, destinationTimeoutMs),
                Pipeline.Views.of(sourceAdmin, sourceTimeoutMs),
                Pipeline.Views.of(destinationAdmin, destinationTimeoutMs),
                destinationAdmin,
                destinationConnection,
                listener,
                destinationTimeoutMs,
                throttle);
    }

    /** A data plane over the given clients (unit tests give network clients of their own). */
    MirrorFetcher(
            String mirror,
            String sourceClusterId,
            WireClient source,
            WireClient destination,
            Pipeline.Views sourceViews,
            Pipeline.Views destinationViews,
            Admin destinationAdmin,
            Map<String, ?> destinationConnection,
            Listener listener,
            int timeoutMs,
            ReplicationThrottle throttle) {
        this.mirror = mirror;
        this.source = source;
        this.destination = destination;
        this.pipeline = new Pipeline(mirror, listener, source, destination, timeoutMs);
        this.partitions = pipeline.partitions;
        this.recovery = new TransactionRecovery(mirror, destinationAdmin, timeoutMs);
        this.destinationAdmin = destinationAdmin;
        this.destinationConnection = destinationConnection;
        this.timeoutMs = timeoutMs;
        this.fetchThread =
                new Thread(new FetchLoop(pipeline, sourceClusterId, sourceViews, throttle), "mirror-fetcher-" + mirror);
        this.appendThread = new Thread(
                new AppendLoop(pipeline, destinationViews, destinationAdmin, recovery), "mirror-appender-" + mirror);
        // what escapes a loop's own guard (an Error thrown while it reports one) still ends the data plane with a
        // reason
        fetchThread.setUncaughtExceptionHandler((t, e) -> pipeline.loopDied("fetcher", "died", e));
        appendThread.setUncaughtExceptionHandler((t, e) -> pipeline.loopDied("appender", "died", e));
        fetchThread.setDaemon(true);
        appendThread.setDaemon(true);
        fetchThread.start();
        appendThread.start();
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
        Thread stuck = now - pipeline.fetcherBeat > stuckAfterMs * 1_000_000
                ? fetchThread
                : now - pipeline.appenderBeat > stuckAfterMs * 1_000_000 ? appendThread : null;
        if (stuck == null) {
            return false;
        }
        String loop = stuck == fetchThread ? "fetcher" : "appender";
        pipeline.loopDied(loop, "is stuck (no progress for over " + stuckAfterMs + " ms)", new StuckLoop(stuck));
        stuck.interrupt();
        return true;
    }

    /** Where a stuck loop's thread stands, as the cause of its data plane's end. */
    static final class StuckLoop extends Exception {
        private static final long serialVersionUID = 1L;

        StuckLoop(Thread thread) {
            super(thread.getName() + " is " + thread.getState() + topFrame(thread.getStackTrace()));
            setStackTrace(thread.getStackTrace());
        }

        private static String topFrame(StackTraceElement[] stack) {
            return stack.length == 0 ? "" : " at " + stack[0];
        }
    }

    @Override
    public void add(MirrorPartition partition, long startOffset, int sourceEpoch) {
        FetchPartition state = new FetchPartition(partition, startOffset, sourceEpoch, pipeline.nextGeneration());
        FetchPartition previous;
        synchronized (pipeline) { // the lock loopDied takes: refused here, or failed there
            String dead = pipeline.deadReason();
            if (dead != null) {
                throw new IllegalStateException("the data plane of " + mirror + " takes no more partitions: " + dead);
            }
            previous = partitions.putIfAbsent(state.tp, state);
        }
        if (previous != null) {
            throw new IllegalStateException(
                    partition + " is still in the data plane of " + mirror + "; wait for whenGone()");
        }
        pipeline.sourceRefresh = true;
        pipeline.destinationRefresh = true;
        source.wakeup();
        destination.wakeup();
    }

    @Override
    public CompletableFuture<Progress> remove(MirrorPartition partition, boolean abortTransactions) {
        FetchPartition state = partitions.get(new TopicPartition(partition.topic(), partition.partition()));
        if (state == null && abortTransactions) {
            return CompletableFuture.supplyAsync(
                    () -> {
                        abortLeftOpen(partition);
                        return null;
                    },
                    task -> {
                        Thread thread = new Thread(task, "mirror-stop-" + mirror);
                        thread.setDaemon(true);
                        thread.start();
                    });
        }
        if (state == null) {
            return CompletableFuture.completedFuture(null);
        }
        synchronized (state) {
            state.removing = true;
            state.abortOnRemove = abortTransactions;
            state.queue.clear();
            state.queuedBytes = 0;
        }
        destination.wakeup();
        return state.removed;
    }

    /**
     * Stop of a partition that is not in the data plane (FAILED, PAUSED, or after a restart): the destination
     * transactions left open on it are read back and aborted like those of a partition being mirrored.
     */
    private void abortLeftOpen(MirrorPartition partition) {
        FetchPartition state = new FetchPartition(partition, -1, -1, 0);
        try (WireClient client =
                WireClient.create("cluster-mirror-" + mirror + "-stop", destinationConnection, (int) timeoutMs)) {
            ClusterView view = ClusterView.load(destinationAdmin, Set.of(partition.topic()), (int) timeoutMs);
            client.setNodes(view.nodes());
            for (int attempt = 0; state.transactions.recoveryNeeded; attempt++) {
                if (attempt == 100) {
                    throw new IOException("a destination transaction on it is still completing after 10 s");
                }
                recovery.recover(List.of(state), view);
                if (state.transactions.recoveryNeeded) {
                    LoopBackoff.sleep(100);
                }
            }
            TransactionReplay.abortOpen(mirror, state, new DestinationTransactions(client, (int) timeoutMs));
        } catch (Exception e) {
            LOGGER.errorf(
                    "Mirror %s: %s stopped, but the destination transactions left open on it could not be read back or aborted (%s); "
                            + "the destination aborts them after their transaction timeout",
                    mirror, partition, e.toString());
        }
    }

    @Override
    public CompletableFuture<Progress> whenGone(MirrorPartition partition) {
        FetchPartition state = partitions.get(new TopicPartition(partition.topic(), partition.partition()));
        return state == null ? CompletableFuture.completedFuture(null) : state.removed;
    }

    public Optional<Progress> progress(MirrorPartition partition) {
        FetchPartition state = partitions.get(new TopicPartition(partition.topic(), partition.partition()));
        return state == null ? Optional.empty() : Optional.of(state.progress());
    }

    /** The destination transactions held open over all partitions in the data plane. */
    public List<OpenTransaction> openTransactions() {
        List<OpenTransaction> open = new ArrayList<>();
        partitions.values().forEach(state -> open.addAll(state.transactions.snapshot()));
        return open;
    }

    /** The largest known lag (source high watermark - destination end) over the partitions being mirrored. */
    public long maxLag() {
        return lags().values().stream().mapToLong(Long::longValue).max().orElse(0);
    }

    /** Each partition's lag in records (source high watermark minus destination end), once its source end is known. */
    public Map<MirrorPartition, Long> lags() {
        Map<MirrorPartition, Long> lags = new HashMap<>();
        for (FetchPartition state : partitions.values()) {
            long sourceEnd = state.sourceHighWatermark;
            if (sourceEnd >= 0) {
                lags.put(state.partition, Math.max(0, sourceEnd - state.ackedEnd));
            }
        }
        return lags;
    }

    @Override
    public void close() {
        pipeline.running = false;
        source.wakeup();
        destination.wakeup();
        fetchThread.interrupt();
        appendThread.interrupt();
        try {
            fetchThread.join(5000);
            appendThread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        source.close();
        destination.close();
        partitions.clear(); // nothing of a closed data plane is reported (lag gauges) any more
    }
}
