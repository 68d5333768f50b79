package io.clustermirror.fetch;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.WireNetwork;
import io.clustermirror.mirror.MirrorPartition;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.clients.MockClient;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The fetcher pool over kafka-clients' {@link MockClient}s: data planes go to the least loaded fetcher and share its
 * thread, and a fetcher whose network client throws ends the data planes on it (with the reason) and is replaced.
 */
class FetcherPoolTest {

    private static final Node BROKER = new Node(1, "localhost", 9092);
    private static final Uuid TOPIC_ID = Uuid.randomUuid();
    private static final ClusterView SOURCE = new ClusterView(
            "source-cluster",
            List.of(BROKER),
            Map.of(new TopicPartition("orders", 0), BROKER),
            Map.of("orders", TOPIC_ID),
            Map.of(TOPIC_ID, "orders"));

    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final List<ThrowingClient> networks = new ArrayList<>();
    /** Every data plane a test built, to close; two may be built at once ({@code dataPlanesBuiltAtTheSameMoment...}). */
    private final List<MirrorFetcher> planes = new CopyOnWriteArrayList<>();

    private final List<ShardedDataPlane> sharded = new CopyOnWriteArrayList<>();
    private FetcherPool pool;

    /** A MockClient whose poll throws once told to, as a network client in an unknown state does. */
    private static final class ThrowingClient extends MockClient {
        final AtomicBoolean broken = new AtomicBoolean();

        ThrowingClient() {
            super(Time.SYSTEM);
        }

        @Override
        public List<ClientResponse> poll(long timeoutMs, long now) {
            if (broken.get()) {
                throw new IllegalStateException("simulated: correlation id mismatch");
            }
            return super.poll(Math.min(timeoutMs, 10), now);
        }
    }

    @AfterEach
    void close() {
        sharded.forEach(ShardedDataPlane::close);
        planes.forEach(MirrorFetcher::close);
        pool.close();
        threads.shutdownNow();
    }

    private void startPool(int fetchers) {
        pool = new FetcherPool(fetchers, id -> {
            ThrowingClient network = new ThrowingClient();
            networks.add(network);
            return new Fetcher(id, WireNetwork.over("fetcher-" + id, network), threads, null);
        });
    }

    private MirrorFetcher dataPlane(String mirror, DataPlaneLivenessTest.RecordingListener listener) {
        return dataPlane(mirror, pool.reserve(Set.of()), listener);
    }

    private MirrorFetcher dataPlane(String mirror, Fetcher fetcher, DataPlaneLivenessTest.RecordingListener listener) {
        MirrorFetcher plane = new MirrorFetcher(
                mirror,
                "source-cluster",
                fetcher,
                fetcher.sourceClient(mirror, mirror + "-fetcher", null, 1000),
                fetcher.destinationClient(mirror + "-appender", 1000),
                topics -> CompletableFuture.completedFuture(SOURCE),
                topics -> CompletableFuture.completedFuture(ClusterView.empty()),
                null,
                listener,
                1,
                1000,
                new ReplicationThrottle(ReplicationThrottle.UNLIMITED));
        planes.add(plane);
        return plane;
    }

    @Test
    void dataPlanesShouldGoToTheLeastLoadedFetcher() {
        startPool(2);
        Fetcher first = pool.byLoad().get(0);
        dataPlane("m1", new DataPlaneLivenessTest.RecordingListener());
        dataPlane("m2", new DataPlaneLivenessTest.RecordingListener());
        dataPlane("m3", new DataPlaneLivenessTest.RecordingListener());

        // two fetchers for three data planes: 2 and 1 (ties go to the first)
        Fetcher next = pool.byLoad().get(0);
        assertThat(next).isNotSameAs(first);
        assertThat(first.load()).isEqualTo(2);
        assertThat(next.load()).isEqualTo(1);
        assertThat(pool.size()).isEqualTo(2);
    }

    @Test
    void dataPlanesBuiltAtTheSameMomentShouldGoToDifferentFetchers() throws Exception {
        // two mirrors' first starts posted at once build their data planes on two workers: the second is placed while
        // the first is still being built (its clients: DNS, a SASL login), before it has attached
        startPool(2);
        CountDownLatch firstPlaced = new CountDownLatch(1);
        CountDownLatch secondPlaced = new CountDownLatch(1);
        CompletableFuture<ShardedDataPlane> first = CompletableFuture.supplyAsync(
                () -> sharded(fetcher -> {
                    firstPlaced.countDown();
                    await(secondPlaced);
                    return dataPlane("m1", fetcher, new DataPlaneLivenessTest.RecordingListener());
                }),
                threads);
        await(firstPlaced);
        ShardedDataPlane second = sharded(fetcher -> {
            secondPlaced.countDown();
            return dataPlane("m2", fetcher, new DataPlaneLivenessTest.RecordingListener());
        });

        assertThat(first.get(10, TimeUnit.SECONDS).fetcherOf(0)).isNotSameAs(second.fetcherOf(0));
        assertThat(pool.byLoad()).extracting(Fetcher::load).containsExactly(1, 1);
    }

    @Test
    void aFetcherReservedForADataPlaneThatCouldNotBeBuiltShouldBeGivenBack() {
        startPool(2);

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> sharded(fetcher -> {
                    throw new IllegalStateException("simulated: the SASL login failed");
                }))
                .hasMessageContaining("SASL login");

        assertThat(pool.byLoad()).extracting(Fetcher::load).containsExactly(0, 0);
    }

    /** A one-shard data plane over the pool, its shard built by {@code factory}. */
    private ShardedDataPlane sharded(ShardedDataPlane.ShardFactory factory) {
        ShardedDataPlane plane = new ShardedDataPlane(
                1, 1, pool::reserve, factory, Runnable::run, new DataPlaneLivenessTest.RecordingListener());
        sharded.add(plane);
        return plane;
    }

    private static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aFetcherWhoseNetworkThrowsShouldEndItsDataPlanesWithTheReasonAndBeReplaced() {
        startPool(1);
        DataPlaneLivenessTest.RecordingListener listener = new DataPlaneLivenessTest.RecordingListener();
        MirrorFetcher plane = dataPlane("m1", listener);
        MirrorPartition partition = new MirrorPartition("orders", 0);
        plane.add(partition, 0, -1, -1);
        Fetcher broken = pool.byLoad().get(0);

        networks.get(0).broken.set(true);

        assertThat(plane.death()).succeedsWithin(Duration.ofSeconds(10));
        assertThat(listener.failures.get(partition))
                .contains("the data plane's fetcher thread died")
                .contains("network client failed")
                .contains("simulated: correlation id mismatch");
        assertThat(broken.stopped).succeedsWithin(Duration.ofSeconds(10));
        Fetcher replacement = pool.byLoad().get(0);
        assertThat(replacement).isNotSameAs(broken);
        assertThat(replacement.running()).isTrue();
        // and a new data plane runs on the new fetcher
        DataPlaneLivenessTest.RecordingListener again = new DataPlaneLivenessTest.RecordingListener();
        dataPlane("m1", again).add(partition, 0, -1, -1);
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> again.fetches.get() > 0);
        assertThat(again.failures).isEmpty();
    }
}
