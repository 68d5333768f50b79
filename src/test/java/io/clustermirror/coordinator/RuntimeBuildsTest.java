package io.clustermirror.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A mirror's clients are built off the coordinator thread (decisions §37): a source whose build hangs (a DNS look-up, a
 * SASL login) holds up its own mirror only. The coordinator thread and the worker pool are the real ones; the builds are
 * fakes.
 */
class RuntimeBuildsTest {

    private final CoordinatorThread thread = new CoordinatorThread();
    private final WorkerPool pool = new WorkerPool(4);
    private final RuntimeBuilds<String> builds = new RuntimeBuilds<>(thread);
    private final List<String> installed = Collections.synchronizedList(new ArrayList<>());
    private final List<String> discarded = Collections.synchronizedList(new ArrayList<>());
    private final CountDownLatch slowSource = new CountDownLatch(1);

    @AfterEach
    void stop() {
        slowSource.countDown();
        thread.shutdown(() -> {});
        pool.shutdown();
    }

    @Test
    void aBuildThatHangsShouldNotHoldTheCoordinatorThreadNorAnotherMirror() throws Exception {
        CompletableFuture<String> slow = onCoordinator(() -> build("slow", () -> {
            hang(slowSource);
            return "slow runtime";
        }));
        CompletableFuture<String> fast = onCoordinator(() -> build("fast", () -> "fast runtime"));

        // the other mirror's task runs, and its runtime is built and installed, while the slow build still hangs
        assertThat(fast.get(10, TimeUnit.SECONDS)).isEqualTo("fast runtime");
        assertThat(thread.call(() -> "ran").await().atMost(Duration.ofSeconds(5)))
                .isEqualTo("ran");
        assertThat(slow).isNotDone();
        assertThat(installed).containsExactly("fast runtime");

        slowSource.countDown();
        assertThat(slow.get(10, TimeUnit.SECONDS)).isEqualTo("slow runtime");
        assertThat(installed).containsExactly("fast runtime", "slow runtime");
    }

    @Test
    void aCloseThatOvertakesABuildShouldTellWhatWaitsAndDiscardWhatTheBuildBrings() throws Exception {
        CompletableFuture<String> waiting = onCoordinator(() -> build("m", () -> {
            hang(slowSource);
            return "stale runtime";
        }));
        thread.call(() -> {
                    builds.overtake("m"); // a reload closed every runtime meanwhile
                    return null;
                })
                .await()
                .atMost(Duration.ofSeconds(5));
        slowSource.countDown();

        assertThat(waiting)
                .failsWithin(Duration.ofSeconds(5))
                .withThrowableOfType(ExecutionException.class)
                .withCauseInstanceOf(RuntimeBuilds.ClosedMeanwhile.class);
        await().atMost(Duration.ofSeconds(5)).until(() -> discarded.contains("stale runtime"));
        assertThat(installed).isEmpty();
    }

    @Test
    void aBuildShouldWaitForTheMirrorsLastRuntimeToClose() throws Exception {
        CompletableFuture<Void> closed = new CompletableFuture<>();
        builds.closing("m", closed);
        CompletableFuture<String> next = onCoordinator(() -> build("m", () -> "new runtime"));

        thread.call(() -> null).await().atMost(Duration.ofSeconds(5));
        assertThat(next).isNotDone();
        closed.complete(null);
        assertThat(next.get(10, TimeUnit.SECONDS)).isEqualTo("new runtime");
    }

    private CompletableFuture<String> build(String mirror, Supplier<String> build) {
        return builds.build(mirror, pool.forMirror(mirror), build, installed::add, discarded::add);
    }

    /** Asks on the coordinator thread, as the coordinator does. */
    private CompletableFuture<String> onCoordinator(Supplier<CompletableFuture<String>> ask) {
        return thread.call(ask).await().atMost(Duration.ofSeconds(5));
    }

    private static void hang(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
