package io.clustermirror.fetch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.WireNetwork;
import io.clustermirror.mirror.MirrorPartition;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.ClientRequest;
import org.apache.kafka.clients.MockClient;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.FetchMetadata;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The fetch loop under the replication budget, on kafka-clients' {@link MockClient} and a fake clock that only its
 * polls move (each poll advances it by its timeout): a Fetch asks for what the budget grants, the next waits until
 * the bytes that came back are paid for, and the loop's poll does not sleep past that moment.
 */
class DataPlaneThrottleTest {

    private static final int MiB = 1 << 20;
    private static final Node BROKER = new Node(1, "localhost", 9092);
    private static final MirrorPartition PARTITION = new MirrorPartition("orders", 0);
    private static final Uuid TOPIC_ID = Uuid.randomUuid();
    private static final ClusterView SOURCE = new ClusterView(
            "source-cluster",
            List.of(BROKER),
            Map.of(new TopicPartition("orders", 0), BROKER),
            Map.of("orders", TOPIC_ID),
            Map.of(TOPIC_ID, "orders"));

    private final MockTime time = new MockTime(0, 0, 0);
    private final MockClient sourceNetwork = new MockClient(time);
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final NoListener listener = new NoListener();
    private MirrorFetcher fetcher;

    private record Sent(long atMs, int maxBytes) {}

    @AfterEach
    void close() {
        if (fetcher != null) {
            fetcher.close();
        }
        threads.shutdownNow();
    }

    @Test
    void aFetchShouldAskForItsGrantAndTheNextWaitExactlyUntilTheBytesThatCameBackArePaidFor() throws Exception {
        // Given 1 MiB/s, and a source whose first answer is one batch of 2 MiB, larger than the Fetch asked for
        ReplicationThrottle throttle = new ReplicationThrottle(MiB, time);
        List<Sent> sent = new CopyOnWriteArrayList<>();
        sourceNetwork.advanceTimeDuringPoll(true);
        MockClient.RequestMatcher record = body -> {
            sent.add(new Sent(time.hiResClockMs(), ((FetchRequest) body).maxBytes()));
            return true;
        };
        MemoryRecords batch = MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(new byte[2 * MiB]));
        sourceNetwork.prepareResponse(record, answer(batch, 1));
        sourceNetwork.prepareResponse(record, answer(MemoryRecords.EMPTY, 1));
        Fetcher pooled = new Fetcher(0, WireNetwork.over("test", sourceNetwork), threads, null);
        fetcher = dataPlane(pooled, throttle);

        // When the partition is in it before the fetcher's first turn (no idle polls move the clock first)
        fetcher.add(PARTITION, 0, -1, -1);
        pooled.start();

        // Then the first Fetch asks for the grant (an empty bucket, not in debt: the least worth asking), not 16 MiB
        await().atMost(Duration.ofSeconds(10)).until(() -> sent.size() == 2);
        assertThat(sent.get(0)).isEqualTo(new Sent(0, MiB));
        // and the next goes when the 2 MiB (and the batch's header bytes) are paid for at 1 MiB/s: 2 s later on the
        // fake
        // clock, to the millisecond, not at the next 100 ms poll of the fetcher, and not before
        assertThat(sent.get(1).atMs()).isBetween(2000L, 2001L);
        assertThat(sent.get(1).maxBytes()).isEqualTo(MiB);
        // held back from the turn after the answer until then: the first poll did not wait (the partition's add woke
        // the fetcher in its own turn), so the answer came at 0
        assertThat(throttle.throttleTimeSeconds()).isCloseTo(2.0, within(0.01));
        // and so did the lane (source broker 1, fetcher lane 0), told as it accrued: the same wait, to the round that
        // sent the Fetch
        assertThat(listener.throttledMs).containsOnlyKeys("1/0");
        assertThat(listener.throttledMs.get("1/0")).isBetween(1999L, 2001L);
        assertThat(listener.throttleReports.get()).isGreaterThan(1);
    }

    @Test
    void aLongPollOfCaughtUpPartitionsShouldHoldNoneOfTheBudgetFromALaneWithABacklog() {
        // Given 1 MiB/s on a clock that stands still (no debt is ever paid off), and a partition on broker 1 that is
        // caught up after its first answer (nothing there, high watermark 0): its next Fetch, a long poll, stays with
        // the
        // broker (never answered here)
        Node other = new Node(2, "localhost", 9093);
        MirrorPartition behind = new MirrorPartition("orders", 1);
        ClusterView source = new ClusterView(
                "source-cluster",
                List.of(BROKER, other),
                Map.of(new TopicPartition("orders", 0), BROKER, new TopicPartition("orders", 1), other),
                Map.of("orders", TOPIC_ID),
                Map.of(TOPIC_ID, "orders"));
        ReplicationThrottle throttle = new ReplicationThrottle(MiB, time);
        List<ClientRequest> sent = new CopyOnWriteArrayList<>();
        MockClient network = new MockClient(time) {
            @Override
            public void send(ClientRequest request, long now) {
                sent.add(request);
                super.send(request, now);
            }
        };
        network.prepareResponse(answer(MemoryRecords.EMPTY, 0));
        Fetcher pooled = new Fetcher(0, WireNetwork.over("test", network), threads, null);
        fetcher = dataPlane(pooled, source, listener, throttle);
        fetcher.add(PARTITION, 0, -1, -1);
        pooled.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> sent.size() == 2);
        assertThat(fetch(sent.get(1)).fetchData().keySet()).containsExactly(new TopicPartition("orders", 0));

        // When a partition with a backlog joins on broker 2
        fetcher.add(behind, 0, -1, -1);

        // Then its Fetch goes at once, granted the least worth asking for (the bucket is empty, not in debt): the long
        // poll in flight took none of it
        await().atMost(Duration.ofSeconds(10)).until(() -> sent.size() == 3);
        assertThat(fetch(sent.get(2)).fetchData().keySet()).containsExactly(new TopicPartition("orders", 1));
        assertThat(maxBytes(sent.get(2))).isEqualTo(MiB);
        assertThat(maxBytes(sent.get(1)))
                .as("the long poll asks for what the bucket holds, at least 1 MiB")
                .isEqualTo(MiB);
    }

    private static FetchRequest.Builder fetch(ClientRequest request) {
        return (FetchRequest.Builder) request.requestBuilder();
    }

    private static int maxBytes(ClientRequest request) {
        return fetch(request).build().maxBytes();
    }

    private static FetchResponse answer(MemoryRecords records, long highWatermark) {
        LinkedHashMap<TopicIdPartition, FetchResponseData.PartitionData> data = new LinkedHashMap<>();
        data.put(
                new TopicIdPartition(TOPIC_ID, new TopicPartition("orders", 0)),
                new FetchResponseData.PartitionData()
                        .setHighWatermark(highWatermark)
                        .setLogStartOffset(0)
                        .setRecords(records));
        return FetchResponse.of(Errors.NONE, 0, FetchMetadata.INVALID_SESSION_ID, data, List.of());
    }

    private MirrorFetcher dataPlane(Fetcher pooled, ReplicationThrottle throttle) {
        return dataPlane(pooled, SOURCE, listener, throttle);
    }

    /**
     * A mirror's data plane on {@code pooled}, one lane per source broker, fetching from {@code source}; its destination
     * has no topics, so nothing is appended and fetched batches stay queued.
     */
    static MirrorFetcher dataPlane(
            Fetcher pooled, ClusterView source, DataPlane.Listener listener, ReplicationThrottle throttle) {
        pooled.reserve(); // the pool places a data plane before it is built
        return new MirrorFetcher(
                "m1",
                "source-cluster",
                pooled,
                pooled.sourceClient("m1", "source", null, 60_000),
                pooled.destinationClient("destination", 1000),
                topics -> CompletableFuture.completedFuture(source),
                topics -> CompletableFuture.completedFuture(ClusterView.empty()),
                null,
                listener,
                1,
                1000,
                throttle);
    }

    /** Records only the lanes' throttle time, by "source broker/fetcher lane". */
    static final class NoListener implements DataPlane.Listener {
        final Map<String, Long> throttledMs = new ConcurrentHashMap<>();
        final AtomicInteger throttleReports = new AtomicInteger();

        @Override
        public void onThrottled(int sourceBroker, int fetcher, long millis) {
            throttledMs.merge(sourceBroker + "/" + fetcher, millis, Long::sum);
            throttleReports.incrementAndGet();
        }

        @Override
        public void onFailed(MirrorPartition partition, String error) {}

        @Override
        public void onEpochFenced(MirrorPartition partition, String reason, long epochEndOffset) {}

        @Override
        public void onAppended(MirrorPartition partition, int records, int bytes) {}

        @Override
        public void onSourceClusterChanged(String actualClusterId) {}

        @Override
        public void onRequest(String api, boolean failed) {}
    }
}
