package io.clustermirror.fetch;

import io.clustermirror.kafka.WireNetwork;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * The instance's fetcher pool: a fixed number of {@link Fetcher}s, shared by every mirror, each one network client and
 * at most one thread of the executor at a time. A mirror's data plane is split into shards by fetcher lane
 * ({@link ShardedDataPlane}), each placed on a different fetcher, the least loaded first; so one mirror runs on every
 * thread, and 40 mirrors add connections, not threads. A fetcher whose network died is replaced by a new one, for the
 * data planes built after.
 */
public final class FetcherPool implements AutoCloseable {

    private final Fetcher[] fetchers;
    private final IntFunction<Fetcher> factory;
    private int generation;

    /**
     * @param threads the number of fetchers ({@code mirror.fetcher.threads}): the most threads the data plane holds
     * @param executor where fetchers turn (a pool of at least {@code threads} threads)
     * @param destinationConnection the destination's connection properties, shared by every mirror
     * @param budget the instance's budget for fetched batches waiting to be appended
     * @param lease whether this instance may append now
     */
    public FetcherPool(
            int threads,
            Executor executor,
            Map<String, ?> destinationConnection,
            int destinationTimeoutMs,
            FetchBudget budget,
            AppendLease lease) {
        this(
                threads,
                id -> new Fetcher(
                        id,
                        WireNetwork.create("cluster-mirror-fetcher-" + id, destinationTimeoutMs),
                        executor,
                        destinationConnection,
                        budget,
                        lease,
                        System::nanoTime));
    }

    /** A pool of fetchers that {@code factory} makes (unit tests give fetchers over kafka-clients' MockClient). */
    FetcherPool(int threads, IntFunction<Fetcher> factory) {
        if (threads < 1) {
            throw new IllegalArgumentException("mirror.fetcher.threads must be at least 1, was " + threads);
        }
        this.factory = factory;
        this.fetchers = new Fetcher[threads];
        for (int i = 0; i < threads; i++) {
            fetchers[i] = factory.apply(generation++).start();
        }
    }

    /**
     * The fetcher for a data plane about to be built, reserved for it at once ({@link Fetcher#reserve}): the least
     * loaded one not in {@code avoid} (the fetchers of the mirror's other shards), or the least loaded one when every
     * fetcher is in it. The caller attaches a data plane to it, or {@link Fetcher#release releases} it.
     */
    synchronized Fetcher reserve(Set<Fetcher> avoid) {
        List<Fetcher> fetchers = byLoad();
        Fetcher chosen =
                fetchers.stream().filter(f -> !avoid.contains(f)).findFirst().orElse(fetchers.get(0));
        chosen.reserve();
        return chosen;
    }

    /**
     * Every fetcher, the least loaded first (ties in pool order), dead ones replaced first (placement uses {@link
     * #reserve}, which chooses from this under the same lock).
     */
    synchronized List<Fetcher> byLoad() {
        for (int i = 0; i < fetchers.length; i++) {
            if (!fetchers[i].running()) {
                fetchers[i] = factory.apply(generation++).start();
            }
        }
        return Arrays.stream(fetchers)
                .sorted(Comparator.comparingInt(Fetcher::load))
                .toList();
    }

    public int size() {
        return fetchers.length;
    }

    @Override
    public synchronized void close() {
        Arrays.stream(fetchers).forEach(Fetcher::close);
        try {
            CompletableFuture.allOf(Arrays.stream(fetchers).map(f -> f.stopped).toArray(CompletableFuture[]::new))
                    .get(Duration.ofSeconds(5).toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            // a fetcher still in a turn: its network closes when that turn ends
        }
    }
}
