package io.clustermirror.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Each mirror's share of the instance's worker pool keeps what its own two threads gave it. */
class MirrorWorkersTest {

    private WorkerPool pool;

    @AfterEach
    void shutdown() {
        if (pool != null) {
            pool.shutdown();
        }
    }

    @Test
    void oneMirrorShouldRunAtMostTwoTasksAtOnceWhateverThePoolSize() throws Exception {
        // Given a pool of 8 threads
        pool = new WorkerPool(8);
        MirrorWorkers workers = pool.forMirror("a");
        AtomicInteger now = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        CountDownLatch gate = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(6);

        // When one mirror gives it 6 tasks that wait for a gate
        for (int i = 0; i < 6; i++) {
            workers.execute(() -> {
                most.accumulateAndGet(now.incrementAndGet(), Math::max);
                pass(gate);
                now.decrementAndGet();
                done.countDown();
            });
        }

        // Then two run and the others wait, however long; once the gate opens all run, never more than two at once
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5)).until(() -> now.get() == 2);
        gate.countDown();
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(most.get()).isEqualTo(2);
    }

    @Test
    void aMirrorWithABacklogShouldDelayAnotherMirrorsTaskByATaskOrTwoNotByItsWholeQueue() throws Exception {
        // Given a pool of one thread, busy for now (one thread, so that the order the tasks note themselves in is the
        // order they were dispatched in: with two, a task dispatched first can note itself after a few of the other's)
        pool = new WorkerPool(1);
        CountDownLatch gate = new CountDownLatch(1);
        MirrorWorkers busy = pool.forMirror("busy");
        busy.execute(() -> pass(gate));
        await().until(() -> busy.pending() == 1);
        List<String> order = new CopyOnWriteArrayList<>();

        // When mirror a queues 100 tasks, then mirror b one
        MirrorWorkers a = pool.forMirror("a");
        MirrorWorkers b = pool.forMirror("b");
        for (int i = 0; i < 100; i++) {
            a.execute(() -> order.add("a"));
        }
        CountDownLatch bDone = new CountDownLatch(1);
        b.execute(() -> {
            order.add("b");
            bDone.countDown();
        });
        gate.countDown();

        // Then b's task runs among the first few, not after a's hundred
        assertThat(bDone.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(order.indexOf("b")).isLessThanOrEqualTo(3);
        await().until(() -> order.size() == 101);
    }

    @Test
    void closeWhenIdleShouldRunTheTasksGivenThenRefuseNewOnes() throws Exception {
        // Given a mirror with two tasks running and one queued
        pool = new WorkerPool(4);
        MirrorWorkers workers = pool.forMirror("a");
        CountDownLatch gate = new CountDownLatch(1);
        AtomicInteger ran = new AtomicInteger();
        for (int i = 0; i < 3; i++) {
            workers.execute(() -> {
                pass(gate);
                ran.incrementAndGet();
            });
        }

        // When it is closed once idle
        CompletableFuture<Void> idle = workers.closeWhenIdle(Duration.ofSeconds(30));

        // Then a new task is refused (the API's 503), the given ones still run, and only then is it idle
        assertThatThrownBy(() -> workers.execute(() -> {})).isInstanceOf(RejectedExecutionException.class);
        assertThat(idle).isNotDone();
        gate.countDown();
        idle.get(10, TimeUnit.SECONDS);
        assertThat(ran.get()).isEqualTo(3);
    }

    @Test
    void closeWhenIdleShouldGiveUpWaitingAfterTheGrace() throws Exception {
        // Given a task that does not end by itself
        pool = new WorkerPool(2);
        MirrorWorkers workers = pool.forMirror("a");
        CountDownLatch never = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        workers.execute(() -> {
            try {
                never.await();
            } catch (InterruptedException e) {
                interrupted.set(true);
            }
        });
        await().until(() -> workers.pending() == 1);

        // When closed once idle with a grace of 200 ms
        long started = System.nanoTime();
        workers.closeWhenIdle(Duration.ofMillis(200)).get(10, TimeUnit.SECONDS);

        // Then the wait ends at the grace, and the close that follows interrupts the task
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).isGreaterThanOrEqualTo(190);
        workers.close();
        await().atMost(Duration.ofSeconds(5)).untilTrue(interrupted);
    }

    @Test
    void closeShouldInterruptThisMirrorsTasksDropItsQueuedOnesAndLeaveOtherMirrorsAlone() throws Exception {
        // Given mirrors a and b, each with tasks running on the same pool, and a with one more queued
        pool = new WorkerPool(4);
        MirrorWorkers a = pool.forMirror("a");
        MirrorWorkers b = pool.forMirror("b");
        CountDownLatch never = new CountDownLatch(1);
        AtomicInteger aInterrupted = new AtomicInteger();
        AtomicBoolean bInterrupted = new AtomicBoolean();
        AtomicBoolean queuedRan = new AtomicBoolean();
        CountDownLatch bRelease = new CountDownLatch(1);
        for (int i = 0; i < 2; i++) {
            a.execute(() -> {
                try {
                    never.await();
                } catch (InterruptedException e) {
                    aInterrupted.incrementAndGet();
                }
            });
        }
        a.execute(() -> queuedRan.set(true));
        b.execute(() -> {
            try {
                bRelease.await();
            } catch (InterruptedException e) {
                bInterrupted.set(true);
            }
        });
        await().until(() -> a.pending() == 3 && b.pending() == 1);

        // When a is closed
        a.close();

        // Then a's running tasks are interrupted, its queued one never runs, new ones are refused, and b is untouched
        await().atMost(Duration.ofSeconds(5)).until(() -> aInterrupted.get() == 2);
        assertThatThrownBy(() -> a.execute(() -> {})).isInstanceOf(RejectedExecutionException.class);
        bRelease.countDown();
        CountDownLatch bNext = new CountDownLatch(1);
        AtomicBoolean nextSawInterrupt = new AtomicBoolean(true);
        // a's interrupted threads now serve b: none carries a's interrupt into b's task
        for (int i = 0; i < 4; i++) {
            b.execute(() -> {
                nextSawInterrupt.set(Thread.currentThread().isInterrupted());
                bNext.countDown();
            });
        }
        assertThat(bNext.await(5, TimeUnit.SECONDS)).isTrue();
        await().until(() -> b.pending() == 0);
        assertThat(bInterrupted).isFalse();
        assertThat(nextSawInterrupt).isFalse();
        assertThat(queuedRan).isFalse();
    }

    @Test
    void aTaskThatFailsShouldNotStopTheMirrorsNextTasks() throws Exception {
        pool = new WorkerPool(1);
        MirrorWorkers workers = pool.forMirror("a");
        CountDownLatch after = new CountDownLatch(1);

        workers.execute(() -> {
            throw new IllegalStateException("boom");
        });
        workers.execute(after::countDown);

        assertThat(after.await(5, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void aPoolOfNoThreadsShouldBeRefusedAtStart() {
        assertThatThrownBy(() -> new WorkerPool(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("mirror.worker.threads");
    }

    private static void pass(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
