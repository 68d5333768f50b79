package io.clustermirror.fetch;

import io.clustermirror.kafka.ClusterView;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

/**
 * One loop's metadata loads: at most one under way, at least {@value #SPACING_MS} ms apart (kafka-clients' default
 * {@code retry.backoff.ms}: a partition without a leader asks for a view every round, which must not become a load
 * every few milliseconds), taken up by the loop in a later round. A load that ends wakes the loop's fetcher, so that
 * round comes at once, not after the fetcher's poll (up to 100 ms: measured, the new partitions of a start waited
 * that long for their first Fetch). Owned by the loop's thread.
 */
final class ViewLoads {

    static final long SPACING_MS = 100;

    private final Pipeline.Views views;
    private final Runnable wakeup;
    private CompletableFuture<ClusterView> loading;
    private long startedNanos = System.nanoTime() - SPACING_MS * 1_000_000;

    /** @param wakeup wakes the loop's fetcher (from any thread) */
    ViewLoads(Pipeline.Views views, Runnable wakeup) {
        this.views = views;
        this.wakeup = wakeup;
    }

    /** Starts a load of {@code topics} when {@code wanted}, none is under way and the spacing allows; whether it did. */
    boolean start(boolean wanted, Supplier<Set<String>> topics) {
        if (!wanted || loading != null || System.nanoTime() - startedNanos < SPACING_MS * 1_000_000) {
            return false;
        }
        startedNanos = System.nanoTime();
        loading = views.load(topics.get()).toCompletableFuture();
        loading.whenComplete((view, e) -> wakeup.run());
        return true;
    }

    /** The view of a load that has finished (once), or null while none has; throws what a failed load failed with. */
    ClusterView finished() throws Exception {
        if (loading == null || !loading.isDone()) {
            return null;
        }
        CompletableFuture<ClusterView> loaded = loading;
        loading = null;
        try {
            return loaded.join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }
}
