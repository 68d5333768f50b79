package io.clustermirror.coordinator;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The instance's worker threads for the mirrors' blocking control steps (LOG_TRUNCATION, topic preparation and
 * recreation, a stop's config restore): {@code mirror.worker.threads} of them whatever the number of mirrors, started
 * when work arrives and ended after a minute idle. Each mirror takes its share through {@link #forMirror}; see
 * decisions §32 for why a plain {@link ThreadPoolExecutor} and not a Vert.x worker executor.
 */
final class WorkerPool {

    private final ThreadPoolExecutor threads;

    WorkerPool(int size) {
        if (size < 1) {
            throw new IllegalArgumentException("mirror.worker.threads must be at least 1, not " + size);
        }
        AtomicInteger counter = new AtomicInteger();
        this.threads = new ThreadPoolExecutor(size, size, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "mirror-worker-" + counter.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        threads.allowCoreThreadTimeOut(true); // no mirror, no worker thread
    }

    /** A mirror's share of the pool: its own queue, at most {@link MirrorWorkers#PER_MIRROR} tasks at once. */
    MirrorWorkers forMirror(String mirror) {
        return new MirrorWorkers(mirror, threads, Math.min(MirrorWorkers.PER_MIRROR, threads.getMaximumPoolSize()));
    }

    /** At shutdown: running tasks are interrupted, queued ones dropped. */
    void shutdown() {
        threads.shutdownNow();
    }
}
