package io.clustermirror.coordinator;

import io.smallrye.mutiny.Uni;
import java.util.concurrent.Delayed;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * The coordinator's one thread: every change to the mirrors' state is made on it, in order, the way a Kafka
 * coordinator serialises its partition's events, so no change needs a lock. A task that fails is logged with what it
 * was, never lost; once shut down, tasks are dropped (logged at DEBUG).
 */
final class CoordinatorThread {

    private static final Logger LOGGER = Logger.getLogger(CoordinatorThread.class);

    private volatile Thread current;
    private final ScheduledThreadPoolExecutor thread = new ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "mirror-coordinator");
        t.setDaemon(true);
        current = t;
        return t;
    });

    {
        // a retry scheduled for later (a partition's back-off, a fence lift) is dropped at shutdown, not run after the
        // last task, with the shutdown waiting for it
        thread.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /** Whether the caller runs on the coordinator thread. */
    boolean isCurrent() {
        return Thread.currentThread() == current;
    }

    /** The action's result, computed on the coordinator thread when the Uni is subscribed. */
    <T> Uni<T> call(Supplier<T> action) {
        return Uni.createFrom().item(action).runSubscriptionOn(thread);
    }

    /** Runs the task on the coordinator thread. */
    void run(String what, Runnable task) {
        try {
            thread.execute(guarded(what, task));
        } catch (RejectedExecutionException e) {
            LOGGER.debugf("Coordinator is shut down; dropped: %s", what);
        }
    }

    /** Runs the task on the coordinator thread after the delay. */
    void schedule(String what, long delayMs, Runnable task) {
        try {
            thread.schedule(guarded(what, task), delayMs, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            LOGGER.debugf("Coordinator is shut down; dropped: %s", what);
        }
    }

    /**
     * Tasks waiting to run (any thread): those that are due ({@code due}), or those scheduled for later (back-off
     * retries: one per FAILED partition, say). {@code cluster_mirror_coordinator_queued_tasks{when}}.
     */
    long queued(boolean due) {
        return thread.getQueue().stream()
                .filter(task -> (((Delayed) task).getDelay(TimeUnit.NANOSECONDS) <= 0) == due)
                .count();
    }

    boolean isShutdown() {
        return thread.isShutdown();
    }

    /** Runs the last task, then stops, waiting up to 10 s for what is under way. */
    void shutdown(Runnable last) {
        run("shutdown", last);
        thread.shutdown();
        try {
            thread.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static Runnable guarded(String what, Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                LOGGER.errorf(e, "Coordinator task failed: %s", what);
            }
        };
    }
}
