package io.clustermirror.coordinator;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * One mirror's share of the {@link WorkerPool}: what its runtime's two threads of its own gave it before (decisions
 * §32). Tasks wait in the mirror's own queue; at most {@link #PER_MIRROR} of them run at once, each on a pool thread,
 * and after each task the mirror goes to the back of the pool's queue, so a mirror with a thousand LOG_TRUNCATIONs
 * queued delays another mirror's stop by one task, not a thousand. No caller relies on an order (two threads never
 * gave one); the cap keeps what one mirror puts on its clusters at once where it was.
 *
 * <p>Closing is per mirror: {@link #closeWhenIdle} refuses new tasks and lets those given run, {@link #close} refuses,
 * drops the queued ones and interrupts this mirror's running ones, never another mirror's.
 */
final class MirrorWorkers implements Executor {

    private static final Logger LOGGER = Logger.getLogger(MirrorWorkers.class);
    /** Tasks of one mirror that run at once: the two threads each mirror had. */
    static final int PER_MIRROR = 2;

    private final String mirror;
    private final Executor pool;
    private final int parallelism;
    private final ArrayDeque<Runnable> queued = new ArrayDeque<>();
    /** The pool threads running this mirror's tasks now (guarded by this). */
    private final Set<Thread> running = new HashSet<>();
    /** Turns of this mirror in the pool's queue or running (guarded by this). */
    private int turns;

    private boolean refusing;
    private boolean closed;
    /** Completes once refusing and no task of this mirror is queued or running. */
    private final CompletableFuture<Void> idle = new CompletableFuture<>();

    MirrorWorkers(String mirror, Executor pool, int parallelism) {
        this.mirror = mirror;
        this.pool = pool;
        this.parallelism = parallelism;
    }

    /**
     * Queues the task.
     *
     * @throws RejectedExecutionException once closing or closed (the API answers 503: the mirror's runtime was dropped
     *     while a request used it), or when the pool is shut down
     */
    @Override
    public void execute(Runnable task) {
        Objects.requireNonNull(task);
        synchronized (this) {
            if (refusing) {
                throw new RejectedExecutionException("the workers of mirror " + mirror + " are closed");
            }
            queued.add(task);
            if (turns >= parallelism) {
                return; // a turn already queued or running takes it
            }
            turns++;
        }
        try {
            pool.execute(this::turn);
        } catch (RejectedExecutionException e) {
            synchronized (this) {
                turns--;
                queued.removeLastOccurrence(task);
            }
            throw e;
        }
    }

    /** One task of this mirror, on a pool thread; then the mirror queues again at the back if it has more. */
    private void turn() {
        Thread self = Thread.currentThread();
        Runnable task;
        synchronized (this) {
            task = closed ? null : queued.poll();
            if (task == null) {
                turns--;
                checkIdle();
                return;
            }
            running.add(self);
        }
        try {
            task.run();
        } catch (RuntimeException | Error e) {
            LOGGER.errorf(e, "Mirror %s: a worker task failed", mirror);
        } finally {
            boolean again;
            synchronized (this) {
                running.remove(self);
                // an interrupt from close() was for this task: the next task on this thread is someone else's
                Thread.interrupted();
                again = !closed && !queued.isEmpty();
                if (!again) {
                    turns--;
                    checkIdle();
                }
            }
            if (again) {
                requeue();
            }
        }
    }

    private void requeue() {
        try {
            pool.execute(this::turn);
        } catch (RejectedExecutionException e) {
            // only a pool shut down refuses, at service shutdown: what this mirror had queued will not run
            int dropped;
            synchronized (this) {
                turns--;
                dropped = queued.size();
                queued.clear();
                closed = refusing = true;
                checkIdle();
            }
            LOGGER.debugf("Mirror %s: the worker pool is shut down; dropped %d queued task(s)", mirror, dropped);
        }
    }

    /** Guarded by this. */
    private void checkIdle() {
        if (refusing && queued.isEmpty() && running.isEmpty()) {
            idle.complete(null);
        }
    }

    /**
     * Refuses new tasks from now on; completes once the tasks already given have run, or after {@code grace},
     * whichever comes first. Nothing waits on the calling thread.
     */
    CompletableFuture<Void> closeWhenIdle(Duration grace) {
        synchronized (this) {
            refusing = true;
            checkIdle();
        }
        return idle.copy().completeOnTimeout(null, grace.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Refuses new tasks, drops the queued ones (they never run) and interrupts this mirror's running ones. */
    void close() {
        int dropped;
        synchronized (this) {
            refusing = closed = true;
            dropped = queued.size();
            queued.clear();
            running.forEach(Thread::interrupt);
            checkIdle();
        }
        if (dropped > 0) {
            LOGGER.debugf("Mirror %s: its runtime closed; dropped %d queued worker task(s)", mirror, dropped);
        }
    }

    /** Tasks queued and running now (tests). */
    synchronized int pending() {
        return queued.size() + running.size();
    }
}
