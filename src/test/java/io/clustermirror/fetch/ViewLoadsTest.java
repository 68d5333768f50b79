package io.clustermirror.fetch;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.kafka.ClusterView;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A loop's metadata loads: one at a time, and the loop's fetcher woken when one ends. */
class ViewLoadsTest {

    private final CompletableFuture<ClusterView> load = new CompletableFuture<>();
    private final AtomicInteger wakeups = new AtomicInteger();
    private final ViewLoads loads = new ViewLoads(topics -> load, wakeups::incrementAndGet);

    @Test
    void aLoadThatEndsShouldWakeTheFetcherSoThatItsViewIsTakenUpAtOnce() throws Exception {
        // Given a load under way
        assertThat(loads.start(true, () -> Set.of("orders"))).isTrue();
        assertThat(loads.finished()).isNull();
        assertThat(wakeups).hasValue(0);

        // When it ends, on another thread (an Admin's)
        Thread admin = new Thread(() -> load.complete(ClusterView.empty()));
        admin.start();
        admin.join();

        // Then the fetcher is woken, and its next round takes the view up
        assertThat(wakeups).hasValue(1);
        assertThat(loads.finished()).isEqualTo(ClusterView.empty());
    }

    @Test
    void aFailedLoadShouldWakeTheFetcherToo() {
        assertThat(loads.start(true, () -> Set.of("orders"))).isTrue();

        load.completeExceptionally(new IllegalStateException("no metadata"));

        assertThat(wakeups).hasValue(1);
    }

    @Test
    void aSecondLoadShouldNotStartWhileOneIsUnderWay() {
        assertThat(loads.start(true, () -> Set.of("orders"))).isTrue();

        assertThat(loads.start(true, () -> Set.of("orders"))).isFalse();
    }
}
