package io.clustermirror.fetch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.WireNetwork;
import io.clustermirror.mirror.MirrorPartition;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.MockClient;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A data plane whose loop dies, is stuck, or whose response handler throws: its partitions fail with the reason instead
 * of staying MIRRORING with only a growing lag to show. The network is kafka-clients' {@link MockClient}.
 */
class DataPlaneLivenessTest {

    private static final Node BROKER = new Node(1, "localhost", 9092);
    static final MirrorPartition PARTITION = new MirrorPartition("orders", 0);
    private static final Uuid TOPIC_ID = Uuid.randomUuid();
    private static final ClusterView SOURCE = new ClusterView(
            "source-cluster",
            List.of(BROKER),
            Map.of(new TopicPartition("orders", 0), BROKER),
            Map.of("orders", TOPIC_ID),
            Map.of(TOPIC_ID, "orders"));

    private final MockClient sourceNetwork = new MockClient(Time.SYSTEM);
    private final RecordingListener listener = new RecordingListener();
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private MirrorFetcher fetcher;

    @AfterEach
    void close() {
        if (fetcher != null) {
            fetcher.close();
        }
        threads.shutdownNow();
    }

    @Test
    void aLoopThatDiesShouldFailItsPartitionsWithTheReasonAndTakeNoMore() {
        listener.onFetch = failed -> {
            throw new OutOfMemoryError("simulated");
        };
        fetcher = start();

        fetcher.add(PARTITION, 0, -1, -1);

        assertThat(fetcher.death())
                .succeedsWithin(Duration.ofSeconds(10))
                .extracting(DataPlane.LoopDeath::loop)
                .isEqualTo(DataPlane.Loop.FETCHER);
        assertThat(listener.failures.get(PARTITION)) // failed before the death completes
                .contains("the data plane's fetcher thread died")
                .contains("OutOfMemoryError: simulated");
        assertThat(fetcher.deadReason()).contains("fetcher thread died");
        assertThat(fetcher.whenGone(PARTITION)).isDone();
        assertThatThrownBy(() -> fetcher.add(new MirrorPartition("orders", 1), 0, -1, -1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("takes no more partitions");
    }

    @Test
    void anExceptionInAResponseHandlerShouldFailThePartitionsOfThatRequest() {
        // kafka-clients only logs what a completion handler throws: the partition would wait for good
        listener.onFetch = failed -> {
            if (failed) {
                throw new IllegalStateException("a bug while handling the answer");
            }
        };
        sourceNetwork.prepareResponse(null, true); // the Fetch is answered by a disconnect
        fetcher = start();

        fetcher.add(PARTITION, 0, -1, -1);

        await().atMost(Duration.ofSeconds(10)).until(() -> listener.failures.containsKey(PARTITION));
        assertThat(listener.failures.get(PARTITION))
                .contains("handling the Fetch response of source broker")
                .contains("a bug while handling the answer");
        assertThat(fetcher.death()).isNotDone();
        assertThat(fetcher.deadReason()).isNull();
    }

    @Test
    void aStuckLoopShouldFailItsPartitionsAndBeInterrupted() throws Exception {
        CountDownLatch never = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        listener.onFetch = failed -> {
            try {
                never.await();
            } catch (InterruptedException e) {
                interrupted.set(true);
            }
        };
        fetcher = start();
        fetcher.add(PARTITION, 0, -1, -1);
        await().atMost(Duration.ofSeconds(10)).until(() -> listener.fetches.get() > 0);

        await().atMost(Duration.ofSeconds(10)).until(() -> fetcher.checkLiveness(200));

        assertThat(listener.failures.get(PARTITION))
                .contains("the data plane's fetcher thread is stuck (no progress for over 200 ms)")
                .contains("WAITING");
        assertThat(fetcher.death()).isCompletedWithValueMatching(death -> death.loop() == DataPlane.Loop.FETCHER);
        await().atMost(Duration.ofSeconds(10)).untilTrue(interrupted);
        assertThat(fetcher.checkLiveness(200)).isFalse(); // reported once
    }

    @Test
    void aStuckAppendRoundShouldBeNamedAsTheAppender() {
        // the append round asks for the destination's view (a test's view loader runs in the round): it hangs there,
        // after the fetch round of the same turn moved the fetcher's beat
        CountDownLatch never = new CountDownLatch(1);
        AtomicInteger loads = new AtomicInteger();
        fetcher = dataPlane(
                new Fetcher(0, WireNetwork.over("test", sourceNetwork), threads, null).start(),
                listener,
                1000,
                topics -> {
                    loads.incrementAndGet();
                    try {
                        never.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return CompletableFuture.completedFuture(ClusterView.empty());
                });
        fetcher.add(PARTITION, 0, -1, -1);
        await().atMost(Duration.ofSeconds(10)).until(() -> loads.get() > 0);

        await().atMost(Duration.ofSeconds(10)).until(() -> fetcher.checkLiveness(200));

        assertThat(listener.failures.get(PARTITION))
                .contains("the data plane's appender thread is stuck (no progress for over 200 ms)");
        assertThat(fetcher.death()).isCompletedWithValueMatching(death -> death.loop() == DataPlane.Loop.APPENDER);
    }

    @Test
    void aLoopThatGoesRoundShouldNotBeReportedStuck() {
        fetcher = start();
        fetcher.add(PARTITION, 0, -1, -1);

        // a limit well above what a loaded 2-core machine can stall a thread that goes round every 100 ms: at 400 ms
        // the check fired now and then at load average 15 (the loop was turning, the thread was not scheduled)
        await().during(Duration.ofMillis(2500))
                .atMost(Duration.ofSeconds(10))
                .until(() -> !fetcher.checkLiveness(2000));

        assertThat(fetcher.death()).isNotDone();
        assertThat(listener.failures).isEmpty();
    }

    private MirrorFetcher start() {
        return dataPlane(
                new Fetcher(0, WireNetwork.over("test", sourceNetwork), threads, null).start(), listener, 1000);
    }

    /**
     * The data plane of mirror m1 on {@code fetcher}, fetching {@link #PARTITION} from one source broker; the
     * destination has no leaders, so nothing is appended.
     */
    static MirrorFetcher dataPlane(Fetcher fetcher, DataPlane.Listener listener, int timeoutMs) {
        return dataPlane(
                fetcher, listener, timeoutMs, topics -> CompletableFuture.completedFuture(ClusterView.empty()));
    }

    /** The same, its destination's view loaded by {@code destinationViews} (in the append round, as tests' are). */
    private static MirrorFetcher dataPlane(
            Fetcher fetcher, DataPlane.Listener listener, int timeoutMs, Pipeline.Views destinationViews) {
        fetcher.reserve(); // the pool places a data plane before it is built
        return new MirrorFetcher(
                "m1",
                "source-cluster",
                fetcher,
                fetcher.sourceClient("m1", "source", null, timeoutMs),
                fetcher.destinationClient("destination", timeoutMs),
                topics -> CompletableFuture.completedFuture(SOURCE),
                destinationViews,
                null,
                listener,
                1,
                timeoutMs,
                new ReplicationThrottle(ReplicationThrottle.UNLIMITED));
    }

    private interface FetchAction {
        void run(boolean failed);
    }

    static final class RecordingListener implements DataPlane.Listener {
        final Map<MirrorPartition, String> failures = new ConcurrentHashMap<>();
        final AtomicInteger fetches = new AtomicInteger();
        volatile FetchAction onFetch = failed -> {};

        @Override
        public void onFailed(MirrorPartition partition, String error) {
            failures.put(partition, error);
        }

        @Override
        public void onEpochFenced(MirrorPartition partition, String reason, long epochEndOffset) {}

        @Override
        public void onAppended(MirrorPartition partition, int records, int bytes) {}

        @Override
        public void onSourceClusterChanged(String actualClusterId) {}

        @Override
        public void onRequest(String api, boolean failed) {
            if (api.equals("fetch")) {
                fetches.incrementAndGet();
                onFetch.run(failed);
            }
        }
    }
}
