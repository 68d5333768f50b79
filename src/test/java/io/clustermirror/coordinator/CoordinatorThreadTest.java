package io.clustermirror.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class CoordinatorThreadTest {

    @Test
    void aShutdownShouldRunTheLastTaskAndDropTheRetriesScheduledForLaterWithoutWaitingForThem() {
        CoordinatorThread thread = new CoordinatorThread();
        AtomicBoolean retried = new AtomicBoolean();
        AtomicBoolean last = new AtomicBoolean();
        thread.schedule("a partition's retry", TimeUnit.SECONDS.toMillis(8), () -> retried.set(true));

        thread.shutdown(() -> last.set(true)); // waits up to 10 s for what is under way

        assertThat(last).isTrue();
        assertThat(retried)
                .as("run after the last task, the shutdown waiting for it")
                .isFalse();
        assertThat(thread.isShutdown()).isTrue();
    }
}
