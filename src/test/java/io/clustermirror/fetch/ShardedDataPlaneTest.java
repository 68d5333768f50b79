package io.clustermirror.fetch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.WireNetwork;
import io.clustermirror.mirror.MirrorPartition;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.ClientRequest;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.clients.MockClient;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * One mirror's data plane in shards over a pool of fetchers on kafka-clients' {@link MockClient}s: with
 * {@code mirror.num.replica.fetchers=2} on two fetchers, each lane's partitions are fetched on a fetcher of their own,
 * routed by Kafka's replica fetcher rule, and a shard that dies fails its own partitions only.
 */
class ShardedDataPlaneTest {

    private static final Node BROKER = new Node(1, "localhost", 9092);
    private static final String TOPIC = "orders";
    private static final Uuid TOPIC_ID = Uuid.randomUuid();
    private static final int LANES = 2;
    private static final List<MirrorPartition> PARTITIONS =
            IntStream.range(0, 8).mapToObj(p -> new MirrorPartition(TOPIC, p)).toList();
    private static final ClusterView SOURCE = new ClusterView(
            "source-cluster",
            List.of(BROKER),
            PARTITIONS.stream()
                    .collect(Collectors.toMap(p -> new TopicPartition(p.topic(), p.partition()), p -> BROKER)),
            Map.of(TOPIC, TOPIC_ID),
            Map.of(TOPIC_ID, TOPIC));

    private final ExecutorService threads = Executors.newCachedThreadPool();
    /** The network of each fetcher the pool made, by fetcher id. */
    private final Map<Integer, RecordingClient> networks = new HashMap<>();

    private final DataPlaneLivenessTest.RecordingListener listener = new DataPlaneLivenessTest.RecordingListener();
    private FetcherPool pool;
    private ShardedDataPlane plane;

    /** A MockClient that records every request sent over it and whose poll throws once told to. */
    private static final class RecordingClient extends MockClient {
        final List<ClientRequest> sent = new CopyOnWriteArrayList<>();
        final AtomicBoolean broken = new AtomicBoolean();

        RecordingClient() {
            super(Time.SYSTEM);
        }

        @Override
        public void send(ClientRequest request, long now) {
            sent.add(request);
            super.send(request, now);
        }

        @Override
        public List<ClientResponse> poll(long timeoutMs, long now) {
            if (broken.get()) {
                throw new IllegalStateException("simulated: correlation id mismatch");
            }
            return super.poll(Math.min(timeoutMs, 10), now);
        }

        /** The partitions of every Fetch sent so far. */
        Set<TopicPartition> fetched() {
            Set<TopicPartition> partitions = new HashSet<>();
            for (ClientRequest request : sent) {
                if (request.requestBuilder() instanceof FetchRequest.Builder fetch) {
                    partitions.addAll(fetch.fetchData().keySet());
                }
            }
            return partitions;
        }
    }

    @AfterEach
    void close() {
        if (plane != null) {
            plane.close();
        }
        pool.close();
        threads.shutdownNow();
    }

    /** Where the data plane builds a dead shard's replacement: inline unless a test queues the builds. */
    private final Queue<Runnable> queuedBuilds = new ConcurrentLinkedQueue<>();

    private volatile boolean queueBuilds;
    /** What building a shard throws, while set. */
    private volatile Error buildFails;

    private void start() {
        pool = new FetcherPool(2, id -> {
            RecordingClient network = new RecordingClient();
            networks.put(id, network);
            return new Fetcher(id, WireNetwork.over("fetcher-" + id, network), threads, null);
        });
        plane = new ShardedDataPlane(
                Math.min(LANES, pool.size()),
                LANES,
                pool::reserve,
                fetcher -> {
                    if (buildFails != null) {
                        throw buildFails;
                    }
                    return new MirrorFetcher(
                            "m1",
                            "source-cluster",
                            fetcher,
                            fetcher.sourceClient("m1", "cluster-mirror-m1-fetcher", null, 1000),
                            fetcher.destinationClient("cluster-mirror-m1-appender", 1000),
                            topics -> CompletableFuture.completedFuture(SOURCE),
                            topics -> CompletableFuture.completedFuture(ClusterView.empty()),
                            null,
                            listener,
                            LANES,
                            1000,
                            new ReplicationThrottle(ReplicationThrottle.UNLIMITED));
                },
                build -> {
                    if (queueBuilds) {
                        queuedBuilds.add(build);
                    } else {
                        build.run();
                    }
                },
                listener);
    }

    private static int lane(MirrorPartition partition) {
        return FetchLanes.laneIndex(new TopicPartition(partition.topic(), partition.partition()), LANES);
    }

    private static Set<TopicPartition> onLane(int lane) {
        return PARTITIONS.stream()
                .filter(p -> lane(p) == lane)
                .map(p -> new TopicPartition(p.topic(), p.partition()))
                .collect(Collectors.toSet());
    }

    private RecordingClient networkOf(int shard) {
        return networks.get(plane.fetcherOf(shard).id);
    }

    @Test
    void aMirrorsLanesShouldRunOnBothFetchersEachPartitionOnTheFetcherOfItsLane() {
        start();
        assertThat(onLane(0)).isNotEmpty();
        assertThat(onLane(1)).isNotEmpty();

        PARTITIONS.forEach(p -> plane.add(p, 0, -1, -1));

        assertThat(plane.shardCount()).isEqualTo(2);
        assertThat(plane.fetcherOf(0)).isNotSameAs(plane.fetcherOf(1));
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(networkOf(0).fetched()).isEqualTo(onLane(0));
            assertThat(networkOf(1).fetched()).isEqualTo(onLane(1));
        });
        assertThat(listener.failures).isEmpty();
        assertThat(plane.deadLanes()).isZero();
    }

    @Test
    void aDeadShardShouldBeReplacedOffTheRoutingThreadAndTakeThePartitionsRoutedMeanwhile() {
        start();
        Fetcher dead = plane.fetcherOf(0);
        List<MirrorPartition> laneZero = shardZeroDied();
        listener.failures.clear();

        // When two partitions of the dead lane come back while builds are queued, not run
        queueBuilds = true;
        plane.add(laneZero.get(0), 0, -1, -1);
        plane.add(laneZero.get(1), 0, -1, -1);

        // Then the adds returned without building anything: one build is queued, the dead shard still placed
        assertThat(queuedBuilds).hasSize(1);
        assertThat(plane.fetcherOf(0)).isSameAs(dead);
        assertThat(listener.failures).isEmpty();

        // When the build runs (a worker thread), both enter the new shard and are fetched on a live fetcher
        queuedBuilds.poll().run();

        assertThat(plane.fetcherOf(0)).isNotSameAs(dead);
        assertThat(plane.deadLanes()).isZero();
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(networkOf(0).fetched())
                        .contains(
                                new TopicPartition(TOPIC, laneZero.get(0).partition()),
                                new TopicPartition(TOPIC, laneZero.get(1).partition())));
        assertThat(listener.failures).isEmpty();
    }

    @Test
    void aReplacementStillQueuedWhenTheDataPlaneClosesShouldGiveItsFetcherBack() {
        start();
        List<MirrorPartition> laneZero = shardZeroDied();
        queueBuilds = true;
        plane.add(laneZero.get(0), 0, -1, -1);
        assertThat(queuedBuilds).hasSize(1);

        // When the data plane closes before the build ran (closing a runtime drops its workers' queued tasks)
        plane.close();

        // Then no fetcher keeps a place for it, and the build, should it still run, builds nothing
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() ->
                        assertThat(pool.byLoad()).extracting(Fetcher::load).containsOnly(0));
        queuedBuilds.poll().run();
        assertThat(pool.byLoad()).extracting(Fetcher::load).containsOnly(0);
    }

    @Test
    void aReplacementWhoseBuildThrowsAnErrorShouldAnswerWithTheDeadShardAndBeTriedAgain() {
        start();
        Fetcher dead = plane.fetcherOf(0);
        List<MirrorPartition> laneZero = shardZeroDied();
        listener.failures.clear();

        // When a partition of the dead lane comes back and its replacement's build throws an Error (a class of its
        // clients that cannot be loaded)
        buildFails = new NoClassDefFoundError("simulated: no class");

        // Then the dead shard answers it with its reason, and no fetcher keeps a place for the build
        assertThatThrownBy(() -> plane.add(laneZero.get(0), 0, -1, -1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("simulated: correlation id mismatch");
        assertThat(plane.fetcherOf(0)).isSameAs(dead);
        assertThat(pool.byLoad()).extracting(Fetcher::load).containsExactlyInAnyOrder(0, 1);

        // and the next partition routed there builds it again
        buildFails = null;
        plane.add(laneZero.get(1), 0, -1, -1);
        assertThat(plane.fetcherOf(0)).isNotSameAs(dead);
        assertThat(plane.deadLanes()).isZero();
    }

    /**
     * Every partition added and fetched, then shard 0's fetcher network throws: returns the partitions of lane 0 once
     * the dead shard has let each go.
     */
    private List<MirrorPartition> shardZeroDied() {
        List<DataPlane.LoopDeath> deaths = new CopyOnWriteArrayList<>();
        plane.onDeath(deaths::add);
        PARTITIONS.forEach(p -> plane.add(p, 0, -1, -1));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> !networkOf(0).fetched().isEmpty());
        networkOf(0).broken.set(true);
        await().atMost(Duration.ofSeconds(10)).until(() -> deaths.size() == 1);
        List<MirrorPartition> laneZero =
                PARTITIONS.stream().filter(p -> lane(p) == 0).toList();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> laneZero.stream().allMatch(p -> plane.whenGone(p).isDone()));
        return laneZero;
    }

    @Test
    void aShardThatDiesShouldFailOnlyItsPartitionsAndBeReplacedWhenOneComesBack() {
        start();
        List<DataPlane.LoopDeath> deaths = new CopyOnWriteArrayList<>();
        plane.onDeath(deaths::add);
        PARTITIONS.forEach(p -> plane.add(p, 0, -1, -1));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> !networkOf(1).fetched().isEmpty());
        Fetcher first = plane.fetcherOf(0);

        // When the network of shard 0's fetcher throws (its state unknown: everything on it ends)
        networkOf(0).broken.set(true);

        // Then the partitions of lane 0 fail with the reason, those of lane 1 do not
        await().atMost(Duration.ofSeconds(10)).until(() -> deaths.size() == 1);
        Set<MirrorPartition> laneZero =
                PARTITIONS.stream().filter(p -> lane(p) == 0).collect(Collectors.toSet());
        assertThat(listener.failures.keySet()).isEqualTo(laneZero);
        assertThat(listener.failures.values())
                .allSatisfy(reason -> assertThat(reason).contains("network client failed"));
        // and the data plane as a whole still runs: it is not dropped, one of its lanes is dead
        assertThat(plane.deadReason()).isNull();
        assertThat(plane.deadLanes()).isEqualTo(1);
        PARTITIONS.stream()
                .filter(p -> lane(p) == 1)
                .forEach(p -> assertThat(plane.progress(p)).isPresent());

        // When a partition of lane 0 comes back (the coordinator's retry)
        MirrorPartition back = laneZero.iterator().next();
        assertThat(plane.whenGone(back)).isDone();
        plane.add(back, 0, -1, -1);

        // Then shard 0 runs again, on a live fetcher (the pool replaced the dead one), and fetches it
        assertThat(plane.deadLanes()).isZero();
        assertThat(plane.fetcherOf(0)).isNotSameAs(first);
        assertThat(plane.fetcherOf(0).running()).isTrue();
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(networkOf(0).fetched())
                        .contains(new TopicPartition(back.topic(), back.partition())));
        assertThat(new ArrayList<>(deaths)).hasSize(1);
    }
}
