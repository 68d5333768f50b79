package io.clustermirror.fetch;

import io.clustermirror.kafka.WireClient;
import io.clustermirror.kafka.WireNetwork;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.utils.Utils;
import org.jboss.logging.Logger;

/**
 * One fetcher of the {@link FetcherPool}: a {@link WireNetwork} (one kafka-clients network client) carrying the
 * connections of every data plane attached to it (their source lanes, and the destination connections they share), and
 * the turns that drive them. A turn runs the commands posted to it, one fetch and one append round of each data plane,
 * then polls the network once, for at most {@value #POLL_MS} ms (answers wake it at once). A task on the pool's
 * executor (a named Vert.x worker pool in the service) turns for a slice of {@value #SLICE_MS} ms and posts the next,
 * so the fetcher holds a thread only while it turns; nothing of it is ever touched by two threads at once.
 */
final class Fetcher {

    private static final Logger LOGGER = Logger.getLogger(Fetcher.class);

    static final long POLL_MS = 100;
    /** How long a fetcher keeps the thread it was given, turning, before it posts its next task. */
    static final long SLICE_MS = 50;

    /** What a fetcher drives: one mirror's data plane. */
    interface Rounds {
        /**
         * One fetch and one append round; a Throwable escaping here ends this data plane alone.
         *
         * @return how long the fetcher may poll before this data plane wants its next round (at most
         *     {@value Fetcher#POLL_MS} ms are waited anyway)
         */
        long rounds();

        boolean running();

        /** The data plane left the fetcher (closed or dead): nothing of it runs here any more. */
        void detached();

        /** The fetcher's network failed under it: the data plane ends with this reason. */
        void networkDied(String fetcher, Throwable cause);
    }

    final int id;
    final String name;
    final WireNetwork network;
    /** The pool's budget for queued batches, for the data planes on this fetcher. */
    final FetchBudget budget;
    /** Whether this instance may append now, for the data planes on this fetcher. */
    final AppendLease lease;
    /** The data planes' clock for what they keep for hours (System.nanoTime; a test moves it on). */
    final LongSupplier nanoClock;

    private final Executor executor;
    private final ChannelBuilder destinationChannels;
    private final AtomicInteger sourceGroups = new AtomicInteger();
    private final Queue<Runnable> commands = new ConcurrentLinkedQueue<>();
    private final List<Rounds> attached = new ArrayList<>();
    /** The data planes attached here and those reserved a place, for the pool's placement (read from any thread). */
    private final AtomicInteger load = new AtomicInteger();
    /** Of the load: places reserved for data planes being built, not attached yet. */
    private final AtomicInteger reserved = new AtomicInteger();

    private volatile boolean running = true;
    /** Turns so far (fetcher thread only), for rotating which data plane goes first. */
    private int turns;
    /** The thread of the turn under way, or null between turns (for interrupting a stuck data plane). */
    private volatile Thread current;

    final CompletableFuture<Void> stopped = new CompletableFuture<>();

    Fetcher(int id, WireNetwork network, Executor executor, Map<String, ?> destinationConnection) {
        this(id, network, executor, destinationConnection, FetchBudget.UNLIMITED);
    }

    Fetcher(int id, WireNetwork network, Executor executor, Map<String, ?> destinationConnection, FetchBudget budget) {
        this(id, network, executor, destinationConnection, budget, AppendLease.ALWAYS, System::nanoTime);
    }

    Fetcher(
            int id,
            WireNetwork network,
            Executor executor,
            Map<String, ?> destinationConnection,
            FetchBudget budget,
            AppendLease lease,
            LongSupplier nanoClock) {
        this.budget = budget;
        this.lease = lease;
        this.nanoClock = nanoClock;
        this.id = id;
        this.name = "cluster-mirror-fetcher-" + id;
        this.network = network;
        this.executor = executor;
        this.destinationChannels = destinationConnection == null
                ? null
                : WireClient.channelBuilder(name + "-destination", destinationConnection);
    }

    /** Starts turning. */
    Fetcher start() {
        next();
        return this;
    }

    int load() {
        return load.get();
    }

    boolean running() {
        return running;
    }

    Thread current() {
        return current;
    }

    /** A mirror's view of the destination: the connections this fetcher shares among all its data planes. */
    WireClient destinationClient(String clientId, int requestTimeoutMs) {
        return WireClient.on(network, "destination", clientId, destinationChannels, false, requestTimeoutMs);
    }

    /** A mirror's source, over connections of its own on this fetcher's network. */
    WireClient sourceClient(String mirror, String clientId, Map<String, ?> connection, int requestTimeoutMs) {
        return WireClient.on(
                network,
                "source:" + mirror + ":" + sourceGroups.incrementAndGet(),
                clientId,
                connection == null ? null : WireClient.channelBuilder(clientId, connection),
                connection != null,
                requestTimeoutMs);
    }

    /** Runs {@code command} on this fetcher's thread at the start of its next turn. */
    void execute(Runnable command) {
        commands.add(command);
        network.wakeup();
    }

    /**
     * Counts a data plane about to be built for this fetcher in its load at once (the pool's placement, under its lock):
     * data planes placed at the same moment, before any has attached, spread over the fetchers instead of all
     * choosing the one that was least loaded. Its {@link #attach} takes the place; {@link #release} gives it back.
     */
    void reserve() {
        reserved.incrementAndGet();
        load.incrementAndGet();
    }

    /** A reserved place whose data plane was not built. */
    void release() {
        if (reserved.getAndUpdate(r -> Math.max(0, r - 1)) > 0) {
            load.decrementAndGet();
        }
    }

    /** Takes a place {@link #reserve reserved} for the data plane: every data plane is placed before it is built. */
    void attach(Rounds rounds) {
        if (reserved.getAndUpdate(r -> Math.max(0, r - 1)) == 0) {
            // its death gave every reserved place back: the data plane was placed on a fetcher that died meanwhile
            throw new IllegalStateException(
                    !running || stopped.isDone()
                            ? name + " died before the data plane could attach to it; it is replaced, try again"
                            : name + ": a data plane attached without a reserved place");
        }
        execute(() -> attached.add(rounds));
    }

    private void next() {
        try {
            executor.execute(this::turn);
        } catch (RejectedExecutionException e) {
            stop(new IllegalStateException(name + " has no thread to run on (the pool is closing)", e));
        }
    }

    /**
     * Turns for up to {@value #SLICE_MS} ms on the thread it was given, then posts the next task: handing the fetcher
     * to the executor after every answer cost more than the turn itself (a queue hand-off and a thread woken on each),
     * and the pool has a thread per fetcher, so keeping one for a slice takes it from nobody.
     */
    private void turn() {
        current = Thread.currentThread();
        network.turnsOn(current);
        long sliceEnds = System.nanoTime() + SLICE_MS * 1_000_000;
        try {
            do {
                turnOnce();
            } while (running && System.nanoTime() - sliceEnds < 0);
        } catch (Throwable t) {
            // the network client threw (its state is unknown) or a command did: nothing on this network runs on
            stop(t);
            return;
        } finally {
            network.turnsOn(null);
            current = null;
            Thread.interrupted();
        }
        if (running) {
            next();
        } else {
            closeNow();
        }
    }

    private void turnOnce() {
        try {
            for (Runnable command = commands.poll(); command != null; command = commands.poll()) {
                command.run();
            }
            long pollMs = POLL_MS;
            // the first data plane of a turn fills the shared destination connections first: the first place goes round
            List<Rounds> order = new ArrayList<>(attached);
            if (!order.isEmpty()) {
                Collections.rotate(order, -Math.floorMod(turns++, order.size()));
            }
            for (Rounds rounds : order) {
                if (rounds.running()) {
                    pollMs = Math.min(pollMs, rounds.rounds());
                }
                if (!rounds.running()) {
                    attached.remove(rounds);
                    load.decrementAndGet();
                    rounds.detached();
                }
            }
            network.poll(pollMs);
        } finally {
            Thread.interrupted(); // an interrupt meant for a stuck data plane ends with its turn
        }
    }

    private void stop(Throwable cause) {
        if (!running && stopped.isDone()) {
            return;
        }
        running = false;
        // data planes still waiting to be attached end here too
        for (Runnable command = commands.poll(); command != null; command = commands.poll()) {
            try {
                command.run();
            } catch (RuntimeException e) {
                LOGGER.debugf(e, "%s: a command failed while it stopped", name);
            }
        }
        // each data plane on it logs its end with the cause, once
        LOGGER.warnf("%s died (%s): its %d data planes end, and the pool replaces it", name, cause, attached.size());
        for (Rounds rounds : attached) {
            try {
                rounds.networkDied(name, cause);
                rounds.detached();
            } catch (RuntimeException e) {
                LOGGER.errorf(e, "%s: a data plane could not be told that it ended", name);
            }
        }
        attached.clear();
        reserved.set(0);
        load.set(0);
        closeNow();
    }

    /** Stops turning once the current turn is over (a next one is always queued while running); the network closes then. */
    void close() {
        running = false;
        network.wakeup();
    }

    private void closeNow() {
        if (stopped.isDone()) {
            return;
        }
        for (Runnable command = commands.poll(); command != null; command = commands.poll()) {
            command.run(); // an attach still queued: the data plane is detached below like the others
        }
        for (Rounds rounds : attached) {
            rounds.detached();
        }
        attached.clear();
        network.close();
        if (destinationChannels != null) {
            Utils.closeQuietly(destinationChannels, name);
        }
        stopped.complete(null);
    }
}
