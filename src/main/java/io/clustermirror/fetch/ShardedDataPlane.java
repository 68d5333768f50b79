package io.clustermirror.fetch;

import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.OpenTransaction;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartition;
import org.jboss.logging.Logger;

/**
 * One mirror's data plane spread over the fetcher pool (decisions §8): its fetcher lanes are grouped into shards, each
 * shard a {@link MirrorFetcher} of its own (its own source connections, fetch sessions, pipeline and metadata loads) on
 * its own fetcher, so that one mirror's lanes turn on as many threads as the pool has. The coordinator sees one
 * {@link DataPlane}: each call goes to the shard of the partition's lane, and progress, lags, open transactions, death
 * and close are gathered over all shards.
 *
 * <p>Routing: a partition's lane is Kafka's replica fetcher rule ({@link FetchLanes#laneIndex}, n =
 * {@code mirror.num.replica.fetchers}), its shard that lane modulo the shard count, and the shard count is
 * min(n, {@code mirror.fetcher.threads}). More shards than threads would buy no parallelism (two shards on one fetcher
 * run one after the other in its turn), but would split that fetcher's Produce requests into more, smaller ones (each
 * shard's append loop builds its own) and multiply the metadata loads; fewer would leave threads idle. Every shard
 * keeps n as its lanes per broker, so a lane's index, its connection and its {@code fetcher} label are the same as
 * with one shard: a source broker still sees n connections per mirror.
 *
 * <p>Failure: a shard that dies or is stuck fails its own partitions with the reason (§29) and the other shards keep
 * running. The dead shard is replaced, with new connections on the least loaded fetcher, when the next partition is
 * routed to it (the coordinator's retry of its failed partitions brings them); until then its lanes count as dead
 * ({@link #deadLanes()}). The replacement's clients (DNS, config providers, a SASL login) are built on the mirror's
 * workers, never on the thread that routes the partition (the coordinator's): partitions routed to the shard while it
 * is built enter it once it is, or fail with the dead shard's reason when it could not be built. {@link #deadReason()} is non-null only when every shard is dead: the data plane as a whole
 * takes nothing more and its runtime is dropped and rebuilt, as a single data plane's was.
 */
public final class ShardedDataPlane implements DataPlane, AutoCloseable {

    private static final Logger LOGGER = Logger.getLogger(ShardedDataPlane.class);

    /** Builds one shard's data plane on the given fetcher. */
    @FunctionalInterface
    interface ShardFactory {
        MirrorFetcher on(Fetcher fetcher);
    }

    private final int fetchersPerBroker;
    private final ShardFactory factory;
    /** Reserves the least loaded fetcher not in the given set (the pool's {@link FetcherPool#reserve}). */
    private final Function<Set<Fetcher>, Fetcher> placement;
    /** Guarded by this: the current shard of each group of lanes (a replaced one leaves). */
    private final MirrorFetcher[] shards;
    /** Guarded by this: the fetcher each shard runs on. */
    private final Fetcher[] placedOn;

    private final List<Consumer<LoopDeath>> deathWatchers = new ArrayList<>();
    private final List<LoopDeath> deaths = new ArrayList<>();
    /** Where a dead shard's replacement is built, off the thread that routes partitions. */
    private final Executor builds;
    /** Told of a partition that could not enter a shard that was being replaced when it was routed. */
    private final Listener listener;
    /** Guarded by this: the replacement under way for each shard, or null. */
    private final Replacement[] replacing;

    private boolean closed;

    /**
     * The data plane of a mirror over {@code pool}, one shard per fetcher up to {@code fetchersPerBroker}.
     *
     * @param fetchersPerBroker fetcher lanes per source broker ({@code mirror.num.replica.fetchers})
     * @param sourceTimeoutMs request timeout of the source-side wire client ({@code mirror.source.request.timeout.ms})
     * @param destinationTimeoutMs request timeout of everything on the destination side ({@code
     *     mirror.destination.request.timeout.ms})
     * @param throttle the instance's replication budget, shared by every mirror's fetch loop
     */
    public static ShardedDataPlane on(
            FetcherPool pool,
            String mirror,
            String sourceClusterId,
            Map<String, ?> sourceConnection,
            Admin sourceAdmin,
            Admin destinationAdmin,
            Listener listener,
            int fetchersPerBroker,
            int sourceTimeoutMs,
            int destinationTimeoutMs,
            ReplicationThrottle throttle,
            Executor builds) {
        Pipeline.Views sourceViews = Pipeline.Views.of(sourceAdmin, sourceTimeoutMs);
        Pipeline.Views destinationViews = Pipeline.Views.of(destinationAdmin, destinationTimeoutMs);
        return new ShardedDataPlane(
                Math.min(fetchersPerBroker, pool.size()),
                fetchersPerBroker,
                pool::reserve,
                fetcher -> new MirrorFetcher(
                        mirror,
                        sourceClusterId,
                        fetcher,
                        fetcher.sourceClient(
                                mirror, "cluster-mirror-" + mirror + "-fetcher", sourceConnection, sourceTimeoutMs),
                        fetcher.destinationClient("cluster-mirror-" + mirror + "-appender", destinationTimeoutMs),
                        sourceViews,
                        destinationViews,
                        destinationAdmin,
                        listener,
                        fetchersPerBroker,
                        destinationTimeoutMs,
                        throttle),
                builds,
                listener);
    }

    /**
     * @param shardCount how many shards (at least 1, at most {@code fetchersPerBroker})
     * @param placement reserves the least loaded fetcher not among those given
     * @param builds where a dead shard's replacement is built
     * @param listener told of a partition that could not enter a shard being replaced
     */
    ShardedDataPlane(
            int shardCount,
            int fetchersPerBroker,
            Function<Set<Fetcher>, Fetcher> placement,
            ShardFactory factory,
            Executor builds,
            Listener listener) {
        if (fetchersPerBroker < 1) {
            throw new IllegalArgumentException(
                    "mirror.num.replica.fetchers must be at least 1, was " + fetchersPerBroker);
        }
        if (shardCount < 1 || shardCount > fetchersPerBroker) {
            throw new IllegalArgumentException(
                    "a data plane has 1 to " + fetchersPerBroker + " shards, not " + shardCount);
        }
        this.fetchersPerBroker = fetchersPerBroker;
        this.factory = factory;
        this.placement = placement;
        this.shards = new MirrorFetcher[shardCount];
        this.placedOn = new Fetcher[shardCount];
        this.replacing = new Replacement[shardCount];
        this.builds = builds;
        this.listener = listener;
        synchronized (this) {
            try {
                Set<Fetcher> taken = new HashSet<>();
                for (int i = 0; i < shardCount; i++) {
                    Fetcher fetcher = placement.apply(taken);
                    taken.add(fetcher);
                    start(i, fetcher);
                }
            } catch (RuntimeException e) {
                // the shards already built leave their fetchers again: a retried build must not leak them
                for (MirrorFetcher shard : shards) {
                    if (shard != null) {
                        shard.close();
                    }
                }
                throw e;
            }
        }
    }

    private void start(int index, Fetcher fetcher) {
        install(index, fetcher, built(fetcher));
    }

    /** A shard on the fetcher reserved for it; the reservation is given back when it cannot be built. */
    private MirrorFetcher built(Fetcher fetcher) {
        try {
            return factory.on(fetcher);
        } catch (RuntimeException | Error e) {
            fetcher.release();
            throw e;
        }
    }

    private void install(int index, Fetcher fetcher, MirrorFetcher shard) {
        shards[index] = shard;
        placedOn[index] = fetcher;
        shard.death().thenAccept(this::died);
    }

    /** The shard of the partition's lane. */
    int shardOf(MirrorPartition partition) {
        return FetchLanes.laneIndex(new TopicPartition(partition.topic(), partition.partition()), fetchersPerBroker)
                % shards.length;
    }

    int shardCount() {
        return shards.length;
    }

    /** Which fetcher runs shard {@code index} now (tests). */
    synchronized Fetcher fetcherOf(int index) {
        return placedOn[index];
    }

    private synchronized MirrorFetcher shard(int index) {
        return shards[index];
    }

    /**
     * The shard for a partition entering the data plane: a dead one is replaced first, once it has failed all its
     * partitions (its death is complete) and while another shard still runs; otherwise the dead one answers, with its
     * reason. Completed at once unless a replacement is being built (on {@link #builds}); then once it is, with the new
     * shard, or with the dead one when it could not be built (the next partition routed to it tries again).
     */
    private synchronized CompletableFuture<MirrorFetcher> liveShard(int index) {
        MirrorFetcher shard = shards[index];
        if (closed || shard.deadReason() == null || !shard.death().isDone() || allDead()) {
            return CompletableFuture.completedFuture(shard);
        }
        if (replacing[index] != null) {
            return replacing[index].built;
        }
        Set<Fetcher> taken = new HashSet<>();
        for (int i = 0; i < shards.length; i++) {
            if (i != index && shards[i].deadReason() == null) {
                taken.add(placedOn[i]);
            }
        }
        Replacement replacement = new Replacement(placement.apply(taken));
        replacing[index] = replacement;
        try {
            builds.execute(() -> replace(index, replacement));
        } catch (RejectedExecutionException e) {
            replacement.fetcher.release();
            replacing[index] = null; // the mirror's runtime is closing: the dead shard answers
            return CompletableFuture.completedFuture(shard);
        }
        return replacement.built;
    }

    /** A dead shard's replacement: queued on {@link #builds} with its fetcher reserved, then built. */
    private static final class Replacement {
        final Fetcher fetcher;
        final CompletableFuture<MirrorFetcher> built = new CompletableFuture<>();
        /** Guarded by the data plane: its build began (the reservation is no longer close()'s to give back). */
        boolean begun;

        Replacement(Fetcher fetcher) {
            this.fetcher = fetcher;
        }
    }

    /** Builds and installs shard {@code index}'s replacement (a worker thread); completes it either way. */
    private void replace(int index, Replacement underway) {
        synchronized (this) {
            if (replacing[index] != underway) {
                return; // closed before this build began: close() gave the reservation back and answered
            }
            underway.begun = true;
        }
        Fetcher fetcher = underway.fetcher;
        MirrorFetcher replacement = null;
        try {
            replacement = built(fetcher);
        } catch (RuntimeException | Error e) {
            // its clients could not be built (a SASL login, a key store, a class that cannot be loaded): the dead shard
            // answers with its reason, and the next partition routed to it tries again; whoever waits is answered
            LOGGER.warnf("Mirror data plane: shard %d could not be replaced: %s", index, e.toString());
        }
        MirrorFetcher answering;
        boolean unwanted;
        synchronized (this) {
            replacing[index] = null;
            unwanted = closed && replacement != null;
            if (replacement != null && !closed) {
                install(index, fetcher, replacement);
            }
            answering = shards[index];
        }
        if (unwanted) {
            replacement.close(); // the data plane was closed while it was built
        }
        underway.built.complete(answering);
    }

    private boolean allDead() {
        for (MirrorFetcher shard : shards) {
            if (shard.deadReason() == null) {
                return false;
            }
        }
        return true;
    }

    /** Every shard keeps its lanes free: which shards the coming partitions go to is not known yet. */
    @Override
    public void joining() {
        for (int i = 0; i < shards.length; i++) {
            shard(i).joining();
        }
    }

    /**
     * Adds the partition to its shard: at once, throwing as {@link MirrorFetcher#add} does, unless the shard is being
     * replaced; then once it is, and a partition that cannot enter it then fails through the listener with the reason.
     */
    @Override
    public void add(MirrorPartition partition, long startOffset, int sourceEpoch, long sourceEnd) {
        CompletableFuture<MirrorFetcher> shard = liveShard(shardOf(partition));
        if (shard.isDone()) {
            shard.join().add(partition, startOffset, sourceEpoch, sourceEnd);
            return;
        }
        shard.thenAccept(s -> {
            try {
                s.add(partition, startOffset, sourceEpoch, sourceEnd);
            } catch (RuntimeException e) {
                listener.onFailed(partition, e.getMessage());
            }
        });
    }

    @Override
    public CompletableFuture<Progress> remove(MirrorPartition partition, boolean abortTransactions) {
        int index = shardOf(partition);
        // a stop aborts the transactions left open on a partition on its shard's connections: a live shard is needed
        return abortTransactions
                ? liveShard(index).thenCompose(s -> s.remove(partition, true))
                : shard(index).remove(partition, false);
    }

    @Override
    public CompletableFuture<Progress> whenGone(MirrorPartition partition) {
        return shard(shardOf(partition)).whenGone(partition);
    }

    /** Null while a shard runs; once every shard is dead, their reasons (one, when all died of the same). */
    @Override
    public synchronized String deadReason() {
        Set<String> reasons = new LinkedHashSet<>();
        for (MirrorFetcher shard : shards) {
            String reason = shard.deadReason();
            if (reason == null) {
                return null;
            }
            reasons.add(reason);
        }
        return String.join("; ", reasons);
    }

    /**
     * The fetcher lanes (the KIP's fetcher ids, the {@code fetcher} label of the fetcher metrics) whose shard died or
     * was stuck and has not been replaced yet.
     */
    public synchronized int deadLanes() {
        int dead = 0;
        for (int lane = 0; lane < fetchersPerBroker; lane++) {
            if (shards[lane % shards.length].deadReason() != null) {
                dead++;
            }
        }
        return dead;
    }

    /** Calls {@code watcher} for every shard that dies or is found stuck, those before this call included. */
    public synchronized void onDeath(Consumer<LoopDeath> watcher) {
        deaths.forEach(watcher);
        deathWatchers.add(watcher);
    }

    private void died(LoopDeath death) {
        List<Consumer<LoopDeath>> watchers;
        synchronized (this) {
            deaths.add(death);
            watchers = List.copyOf(deathWatchers);
        }
        watchers.forEach(w -> w.accept(death));
    }

    /** The liveness check of every shard ({@link MirrorFetcher#checkLiveness}); whether one was found stuck now. */
    public boolean checkLiveness(long stuckAfterMs) {
        boolean stuck = false;
        for (MirrorFetcher shard : snapshot()) {
            stuck |= shard.checkLiveness(stuckAfterMs);
        }
        return stuck;
    }

    public Optional<Progress> progress(MirrorPartition partition) {
        return shard(shardOf(partition)).progress(partition);
    }

    /** The destination transactions held open over all partitions of every shard. */
    public List<OpenTransaction> openTransactions() {
        List<OpenTransaction> open = new ArrayList<>();
        snapshot().forEach(shard -> open.addAll(shard.openTransactions()));
        return open;
    }

    /** The largest known lag over the partitions being mirrored, on any shard. */
    public long maxLag() {
        return snapshot().stream().mapToLong(MirrorFetcher::maxLag).max().orElse(0);
    }

    /** Each partition's lag in records, over every shard. */
    public Map<MirrorPartition, Long> lags() {
        Map<MirrorPartition, Long> lags = new HashMap<>();
        snapshot().forEach(shard -> lags.putAll(shard.lags()));
        return lags;
    }

    /** The rate sampler's counters of every partition, over every shard. */
    public Map<MirrorPartition, Counts> counts() {
        Map<MirrorPartition, Counts> counts = new HashMap<>();
        snapshot().forEach(shard -> counts.putAll(shard.counts()));
        return counts;
    }

    private synchronized List<MirrorFetcher> snapshot() {
        return List.of(shards);
    }

    /** Every shard leaves its fetcher (each after its round under way, at most 5 s); no shard is replaced after. */
    @Override
    public void close() {
        List<MirrorFetcher> all;
        List<Runnable> unbuilt = new ArrayList<>();
        synchronized (this) {
            closed = true;
            all = List.of(shards);
            // a replacement queued on the mirror's workers that has not begun may never run (closing the runtime drops
            // its queued tasks): its fetcher's reservation goes back, and who waits for it gets the dead shard
            for (int i = 0; i < shards.length; i++) {
                Replacement queued = replacing[i];
                if (queued != null && !queued.begun) {
                    replacing[i] = null;
                    MirrorFetcher dead = shards[i];
                    unbuilt.add(() -> {
                        queued.fetcher.release();
                        queued.built.complete(dead);
                    });
                }
            }
        }
        unbuilt.forEach(Runnable::run);
        all.forEach(MirrorFetcher::close);
    }
}
