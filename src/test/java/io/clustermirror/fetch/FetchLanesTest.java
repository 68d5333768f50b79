package io.clustermirror.fetch;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.batches.SourceBatch;
import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.WireClient;
import io.clustermirror.mirror.MirrorPartition;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
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
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;

/**
 * The fetch side's lanes, driven one round at a time on the test thread over kafka-clients' {@link MockClient}:
 * {@code mirror.num.replica.fetchers} connections per source broker chosen by Kafka's rule, one Fetch in flight per
 * lane, incremental fetch sessions, fetch sizes from the free queue space, and rotation of the first place.
 */
class FetchLanesTest {

    private static final Node BROKER = new Node(1, "localhost", 9092);
    private static final String TOPIC = "orders";
    private static final Uuid TOPIC_ID = Uuid.randomUuid();

    private final MockClient network = new MockClient(Time.SYSTEM);
    private final WireClient source = WireClient.over("source", network, 1000);
    private final Pipeline pipeline = new Pipeline(
            "m1",
            new DataPlaneLivenessTest.RecordingListener(),
            source,
            WireClient.over("destination", new MockClient(Time.SYSTEM), 1000),
            1000);

    @Test
    void aPartitionShouldGoToTheLaneOfKafkasReplicaFetcherRule() {
        for (int partition = 0; partition < 50; partition++) {
            TopicPartition tp = new TopicPartition(TOPIC, partition);
            // AbstractFetcherManager.getFetcherId
            assertThat(FetchLanes.laneIndex(tp, 3)).isEqualTo(Utils.abs(31 * TOPIC.hashCode() + partition) % 3);
        }
    }

    @Test
    void eachLaneShouldBeAConnectionOfItsOwnThatSurvivesARefresh() {
        FetchLanes lanes = new FetchLanes(3, source, "m1");
        List<Integer> partitions = partitionsOnEveryLane(3);

        Set<Node> connections = partitions.stream()
                .map(p -> lanes.lane(BROKER, new TopicPartition(TOPIC, p)).node)
                .collect(Collectors.toSet());
        FetchLanes.Lane lane = lanes.lane(BROKER, new TopicPartition(TOPIC, partitions.get(0)));

        assertThat(connections).hasSize(3).allSatisfy(n -> assertThat(n.port()).isEqualTo(9092));
        // the same broker as a new view names it: the same lane, connection and session
        assertThat(lanes.lane(new Node(1, "localhost", 9092), new TopicPartition(TOPIC, partitions.get(0))))
                .isSameAs(lane);
        // a broker that moved gets new connections
        assertThat(lanes.lane(new Node(1, "localhost", 9999), new TopicPartition(TOPIC, partitions.get(0))).node)
                .isNotIn(connections);
    }

    @Test
    void partitionsShouldBeFetchedOverTheirLanesOneFetchInFlightEach() {
        FetchLoop loop = loopWith(3, partitionsOnEveryLane(3));

        turn(loop);
        turn(loop); // nothing more goes out while each lane waits for its answer

        List<ClientRequest> fetches = new ArrayList<>(network.requests());
        assertThat(fetches).hasSize(3);
        assertThat(fetches.stream().map(ClientRequest::destination).collect(Collectors.toSet()))
                .hasSize(3);
        for (ClientRequest fetch : fetches) {
            Set<Integer> lanesInIt = fetchData(fetch).keySet().stream()
                    .map(tp -> FetchLanes.laneIndex(tp, 3))
                    .collect(Collectors.toSet());
            assertThat(lanesInIt).hasSize(1);
        }
    }

    @Test
    void theSecondFetchOfALaneShouldBeIncrementalAndCarryOnlyWhatChanged() {
        List<Integer> partitions = List.of(0, 1, 2, 3);
        FetchLoop loop = loopWith(1, partitions);
        turn(loop);
        ClientRequest first = network.requests().peek();
        assertThat(metadata(first).isFull()).isTrue();
        assertThat(fetchData(first)).hasSize(4);
        // nothing yet; the broker opens session 42
        network.respondToRequest(first, response(first, 42, Map.of()));
        turn(loop); // the answer is handled
        turn(loop); // the next Fetch goes out: every partition asks for its free room now, no longer its first 1 MiB
        ClientRequest second = network.requests().peek();
        assertThat(fetchData(second)).hasSize(4);
        // records for partition 2 only
        network.respondToRequest(second, response(second, 42, Map.of(2, 0L)));

        turn(loop);
        turn(loop);

        ClientRequest third = network.requests().peek();
        assertThat(metadata(third).sessionId()).isEqualTo(42);
        assertThat(metadata(third).epoch()).isEqualTo(2);
        assertThat(fetchData(third)).containsOnlyKeys(new TopicPartition(TOPIC, 2));
        assertThat(fetchData(third).get(new TopicPartition(TOPIC, 2)).fetchOffset)
                .isEqualTo(3);
    }

    @Test
    void aLostFetchShouldStartANewSession() {
        FetchLoop loop = loopWith(1, List.of(0));
        turn(loop);
        ClientRequest first = network.requests().peek();
        network.respondToRequest(first, response(first, 42, Map.of()));
        turn(loop);
        turn(loop);
        ClientRequest incremental = network.requests().peek();
        assertThat(metadata(incremental).sessionId()).isEqualTo(42);

        network.disconnect(incremental.destination());
        turn(loop);
        turn(loop);

        ClientRequest next = network.requests().peek();
        assertThat(next).isNotSameAs(incremental);
        assertThat(metadata(next).isFull()).isTrue();
    }

    @Test
    void aFetchShouldAskForTheFreeQueueSpaceAndWaitWhileTooLittleIsFree() {
        FetchLoop loop = loopWith(1, List.of(0, 1));
        FetchPartition half = pipeline.partitions.get(new TopicPartition(TOPIC, 0));
        FetchPartition full = pipeline.partitions.get(new TopicPartition(TOPIC, 1));
        half.queuedBytes = FetchLoop.MAX_QUEUED_BYTES_PER_PARTITION / 2;
        full.queuedBytes = FetchLoop.MAX_QUEUED_BYTES_PER_PARTITION - FetchLoop.MIN_FREE_QUEUE_BYTES + 1;

        turn(loop);
        ClientRequest first = network.requests().peek();
        // a partition's first Fetch asks for 1 MiB at most
        assertThat(fetchData(first)).containsOnlyKeys(half.tp);
        assertThat(fetchData(first).get(half.tp).maxBytes).isEqualTo((int) FetchPartition.FIRST_FETCH_BYTES);
        network.respondToRequest(first, response(first, 42, Map.of()));
        turn(loop);
        turn(loop);

        Map<TopicPartition, FetchRequest.PartitionData> data =
                fetchData(network.requests().peek());
        assertThat(data).containsOnlyKeys(half.tp);
        assertThat(data.get(half.tp).maxBytes).isEqualTo((int) (FetchLoop.MAX_QUEUED_BYTES_PER_PARTITION / 2));
    }

    @Test
    void aFetchShouldAskForNoMoreThanTheInstancesBudgetLeavesAndWaitWhenItIsSpent() {
        FetchBudget budget = new FetchBudget(8L << 20);
        FetchPartition state = new FetchPartition(new MirrorPartition(TOPIC, 0), 0, -1, 1, budget);
        state.enter();
        state.ticket(FetchLoop.MAX_QUEUED_BYTES_PER_PARTITION, 1L << 20); // its first Fetch (1 MiB) went and came back
        state.fetchDone();
        budget.add((8L << 20) - (3L << 19)); // other partitions hold all but 1.5 MiB

        FetchPartition.FetchTicket ticket = state.ticket(FetchLoop.MAX_QUEUED_BYTES_PER_PARTITION, 1L << 20);
        assertThat(ticket.maxBytes()).isEqualTo(3 << 19);
        state.fetchDone();

        budget.add(1L << 20); // now only 0.5 MiB is left
        assertThat(state.ticket(FetchLoop.MAX_QUEUED_BYTES_PER_PARTITION, 1L << 20))
                .isNull();
        budget.release(8L << 20);
    }

    @Test
    void queuedBatchesShouldCountAgainstTheBudgetUntilAppendedOrDropped() {
        FetchBudget budget = new FetchBudget(8L << 20);
        FetchPartition state = new FetchPartition(new MirrorPartition(TOPIC, 0), 0, -1, 1, budget);
        SourceBatch first = SourceBatch.slices(records(0)).get(0);
        SourceBatch second = SourceBatch.slices(records(3)).get(0);

        state.enqueue(first);
        state.enqueue(second);
        assertThat(budget.queued()).isEqualTo(first.sizeInBytes() + second.sizeInBytes());
        state.pollQueue();
        assertThat(budget.queued()).isEqualTo(second.sizeInBytes());
        state.clearQueue();
        assertThat(budget.queued()).isZero();
    }

    private static MemoryRecords records(long offset) {
        return MemoryRecords.withRecords(
                offset,
                Compression.NONE,
                new SimpleRecord("a".getBytes()),
                new SimpleRecord("b".getBytes()),
                new SimpleRecord("c".getBytes()));
    }

    @Test
    void theFirstPlaceOfAFullFetchShouldGoRound() {
        List<Integer> partitions = List.of(0, 1, 2, 3);
        FetchLoop loop = loopWith(1, partitions);
        Set<TopicPartition> firsts = new HashSet<>();
        for (int i = 0; i < partitions.size(); i++) {
            turn(loop);
            ClientRequest fetch = network.requests().peek();
            assertThat(metadata(fetch).isFull()).isTrue();
            firsts.add(fetchData(fetch).keySet().iterator().next());
            // no session: every Fetch is a full one
            network.respondToRequest(fetch, response(fetch, 0, Map.of()));
            turn(loop);
        }
        assertThat(firsts).hasSize(partitions.size());
    }

    // ------------------------------------------------------------------------------------------------ helpers

    /** What a fetcher's turn does for this loop: one round, then one poll of the network. */
    private void turn(FetchLoop loop) {
        loop.round();
        source.poll(0);
    }

    private FetchLoop loopWith(int lanes, List<Integer> partitions) {
        Map<TopicPartition, Node> leaders = new HashMap<>();
        for (int partition : partitions) {
            TopicPartition tp = new TopicPartition(TOPIC, partition);
            leaders.put(tp, BROKER);
            FetchPartition state = new FetchPartition(new MirrorPartition(TOPIC, partition), 0, -1, 1);
            state.enter();
            pipeline.partitions.put(tp, state);
        }
        ClusterView view = new ClusterView(
                "source-cluster", List.of(BROKER), leaders, Map.of(TOPIC, TOPIC_ID), Map.of(TOPIC_ID, TOPIC));
        return new FetchLoop(
                pipeline,
                "source-cluster",
                topics -> CompletableFuture.completedFuture(view),
                lanes,
                new ReplicationThrottle(ReplicationThrottle.UNLIMITED));
    }

    /** Partitions of the topic such that each of the lanes gets two. */
    private static List<Integer> partitionsOnEveryLane(int lanes) {
        Map<Integer, List<Integer>> byLane = IntStream.range(0, 100)
                .boxed()
                .collect(Collectors.groupingBy(p -> FetchLanes.laneIndex(new TopicPartition(TOPIC, p), lanes)));
        assertThat(byLane).hasSize(lanes);
        return byLane.values().stream().flatMap(l -> l.stream().limit(2)).toList();
    }

    private static FetchRequest.Builder builder(ClientRequest request) {
        return (FetchRequest.Builder) request.requestBuilder();
    }

    private static Map<TopicPartition, FetchRequest.PartitionData> fetchData(ClientRequest request) {
        return builder(request).fetchData();
    }

    private static FetchMetadata metadata(ClientRequest request) {
        return builder(request).metadata();
    }

    /**
     * The answer to {@code request} in session {@code sessionId}: three records from the given offset for each given
     * partition, and (a full Fetch is answered for every partition in it) nothing for the others.
     */
    private static FetchResponse response(ClientRequest request, int sessionId, Map<Integer, Long> recordsFrom) {
        LinkedHashMap<TopicIdPartition, FetchResponseData.PartitionData> data = new LinkedHashMap<>();
        Set<Integer> answered = new TreeSet<>(recordsFrom.keySet());
        if (metadata(request).isFull()) {
            fetchData(request).keySet().forEach(tp -> answered.add(tp.partition()));
        }
        for (int partition : answered) {
            Long offset = recordsFrom.get(partition);
            data.put(
                    new TopicIdPartition(TOPIC_ID, new TopicPartition(TOPIC, partition)),
                    new FetchResponseData.PartitionData()
                            .setPartitionIndex(partition)
                            .setHighWatermark(offset == null ? 0 : offset + 3)
                            .setRecords(
                                    offset == null
                                            ? MemoryRecords.EMPTY
                                            : MemoryRecords.withRecords(
                                                    offset,
                                                    Compression.NONE,
                                                    new SimpleRecord("a".getBytes()),
                                                    new SimpleRecord("b".getBytes()),
                                                    new SimpleRecord("c".getBytes()))));
        }
        return FetchResponse.of(Errors.NONE, 0, sessionId, data, List.of());
    }
}
