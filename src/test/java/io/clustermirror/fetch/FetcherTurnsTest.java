package io.clustermirror.fetch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.clustermirror.kafka.WireNetwork;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.MockClient;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * How a fetcher uses the threads it is given: a busy fetcher turns many times on one task of the pool (a task per turn
 * handed it between threads after every answer), yet gives the thread back after a slice and stops within one.
 */
class FetcherTurnsTest {

    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final AtomicInteger tasks = new AtomicInteger();
    private final Fetcher fetcher = new Fetcher(
            0,
            WireNetwork.over("turns", new MockClient(Time.SYSTEM)),
            task -> {
                tasks.incrementAndGet();
                threads.execute(task);
            },
            null);
    private final BusyRounds busy = new BusyRounds();

    /** A data plane that always wants its next round at once (answers keep arriving), counting its rounds. */
    private static final class BusyRounds implements Fetcher.Rounds {
        final AtomicLong rounds = new AtomicLong();
        /** Rounds that ran while another was under way: a fetcher must never hold two threads. */
        final AtomicInteger overlapping = new AtomicInteger();

        private final AtomicInteger inRound = new AtomicInteger();

        @Override
        public long rounds() {
            if (inRound.incrementAndGet() > 1) {
                overlapping.incrementAndGet();
            }
            rounds.incrementAndGet();
            inRound.decrementAndGet();
            return 0;
        }

        @Override
        public boolean running() {
            return true;
        }

        @Override
        public void detached() {}

        @Override
        public void networkDied(String fetcher, Throwable cause) {}
    }

    @AfterEach
    void close() {
        fetcher.close();
        threads.shutdownNow();
    }

    @Test
    void aBusyFetcherShouldTurnManyTimesOnOneTaskAndStillGiveItsThreadBack() {
        // Given a fetcher with a data plane that wants a round at once, every time
        fetcher.reserve();
        fetcher.attach(busy);

        // When it turns for a while (several slices)
        fetcher.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> tasks.get() >= 4);

        // Then each task of the pool carried many turns, not one...
        assertThat(busy.rounds.get()).isGreaterThan(100L * tasks.get());
        // ...yet the fetcher gave its thread back and took a new task after each slice, one thread at a time
        assertThat(busy.overlapping.get()).isZero();
    }

    @Test
    void aClosedFetcherShouldStopWithinASlice() throws Exception {
        // Given a busy fetcher
        fetcher.reserve();
        fetcher.attach(busy);
        fetcher.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> busy.rounds.get() > 1_000);

        // When it is closed
        fetcher.close();

        // Then it stops (its slice ends with the turn under way) and turns no more
        fetcher.stopped.get(Fetcher.SLICE_MS * 20, TimeUnit.MILLISECONDS);
        long rounds = busy.rounds.get();
        await().during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(1)).until(() -> busy.rounds.get() == rounds);
    }
}
