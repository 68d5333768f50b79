package io.clustermirror.fetch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.clustermirror.mirror.MirrorPartition;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.apache.kafka.clients.ClientRequest;
import org.apache.kafka.clients.MockClient;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The destination-side control steps of the append loop (producer ids, resets' read-backs) run as requests whose
 * answers are taken up in later rounds, never as a blocking call in a fetcher's turn, and every request of a partition
 * goes over its pinned destination connection. The network on both sides is kafka-clients' {@link MockClient}.
 */
class ControlStepsTest {

    private static final Node SOURCE_BROKER = new Node(1, "source", 9092);
    private static final Node DESTINATION_BROKER = new Node(7, "destination", 9092);
    private static final Uuid SOURCE_TOPIC_ID = Uuid.randomUuid();
    private static final Uuid DESTINATION_TOPIC_ID = Uuid.randomUuid();

    private final MockClient sourceNetwork = new MockClient(Time.SYSTEM);
    private final MockClient destinationNetwork = new MockClient(Time.SYSTEM);
    private final TwoClusterClient network = new TwoClusterClient(Map.of(
            SOURCE_BROKER.host(), sourceNetwork,
            DESTINATION_BROKER.host(), destinationNetwork));
    private final Map<MirrorPartition, String> failures = new ConcurrentHashMap<>();
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
    void producerIdsOfManyPartitionsShouldBeAskedForAtOnceAndTakenUpWhenAnswered() {
        // Given 20 partitions with a batch each, and a destination that has not answered any InitProducerId yet
        List<TopicPartition> tps = partitions(20);
        sourceFetchAnswer(tps);
        fetcher = start(tps);

        // When they enter the data plane
        tps.forEach(tp -> fetcher.add(new MirrorPartition(tp.topic(), tp.partition()), 0, -1));

        // Then every one of them has its InitProducerId under way at the same time, none waiting for another's answer
        await().atMost(Duration.ofSeconds(10))
                .until(() -> pending(ApiKeys.INIT_PRODUCER_ID).size() == tps.size());
        // and once answered, each partition's batch goes under the producer id it was given
        long id = 1000;
        for (ClientRequest request : pending(ApiKeys.INIT_PRODUCER_ID)) {
            destinationNetwork.respondToRequest(request, producerId(id++));
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> producedIds().size() == tps.size());
        assertThat(producedIds())
                .containsExactlyInAnyOrderElementsOf(
                        LongStream.range(1000, 1000 + tps.size()).boxed().toList());
        assertThat(failures).isEmpty();
    }

    @Test
    void aLostProducerIdRequestShouldBeAskedAgain() {
        // Given a destination that drops the connection under the first InitProducerId, then answers the second
        List<TopicPartition> tps = partitions(1);
        sourceFetchAnswer(tps);
        destinationNetwork.prepareResponse(null, true);
        destinationNetwork.prepareResponse(producerId(4711));
        destinationNetwork.prepareResponse(appended(tps.get(0), 0));
        fetcher = start(tps);

        // When the partition enters the data plane
        fetcher.add(new MirrorPartition("orders", tps.get(0).partition()), 0, -1);

        // Then its producer id is asked for again, and its batch lands under the id of the second answer
        await().atMost(Duration.ofSeconds(10))
                .until(() -> fetcher.progress(
                                        new MirrorPartition("orders", tps.get(0).partition()))
                                .orElseThrow()
                                .destinationEnd()
                        == 1);
        assertThat(sent(ApiKeys.INIT_PRODUCER_ID)).hasSize(2);
        assertThat(failures).isEmpty();
    }

    // ---------------------------------------------------------------- the two clusters

    /** {@code count} partitions of "orders", every other one pinned to each of a broker's connections. */
    private static List<TopicPartition> partitions(int count) {
        List<TopicPartition> tps = new ArrayList<>();
        for (int p = 0; p < count; p++) {
            tps.add(new TopicPartition("orders", p));
        }
        return tps;
    }

    /** The first partition of "orders" pinned to connection {@code index} of its leader. */
    static TopicPartition pinnedTo(int index) {
        for (int p = 0; ; p++) {
            TopicPartition tp = new TopicPartition("orders", p);
            if (Utils.abs(tp.hashCode()) % AppendLoop.CONNECTIONS_PER_BROKER == index) {
                return tp;
            }
        }
    }

    private MirrorFetcher start(List<TopicPartition> tps) {
        Map<TopicPartition, Node> sourceLeaders = new HashMap<>();
        Map<TopicPartition, Node> destinationLeaders = new HashMap<>();
        tps.forEach(tp -> {
            sourceLeaders.put(tp, SOURCE_BROKER);
            destinationLeaders.put(tp, DESTINATION_BROKER);
        });
        ClusterView source = new ClusterView(
                "source-cluster",
                List.of(SOURCE_BROKER),
                sourceLeaders,
                Map.of("orders", SOURCE_TOPIC_ID),
                Map.of(SOURCE_TOPIC_ID, "orders"));
        ClusterView destination = new ClusterView(
                "destination-cluster",
                List.of(DESTINATION_BROKER),
                destinationLeaders,
                Map.of("orders", DESTINATION_TOPIC_ID),
                Map.of(DESTINATION_TOPIC_ID, "orders"));
        Fetcher pooled = new Fetcher(0, WireNetwork.over("test", network), threads, null).start();
        return new MirrorFetcher(
                "m1",
                "source-cluster",
                pooled,
                pooled.sourceClient("m1", "source", null, 1000),
                pooled.destinationClient("destination", 1000),
                topics -> CompletableFuture.completedFuture(source),
                topics -> CompletableFuture.completedFuture(destination),
                null,
                new Listener(),
                1,
                1000,
                new ReplicationThrottle(ReplicationThrottle.UNLIMITED));
    }

    /** Requests of {@code api} sent to the destination and not answered yet. */
    private List<ClientRequest> pending(ApiKeys api) {
        return destinationNetwork.requests().stream()
                .filter(r -> r.apiKey() == api)
                .toList();
    }

    /** Every request of {@code api} sent to the destination so far. */
    private List<ClientRequest> sent(ApiKeys api) {
        return network.sent.stream().filter(r -> r.apiKey() == api).toList();
    }

    /** The producer ids the Produce requests sent so far carried. */
    private Set<Long> producedIds() {
        return sent(ApiKeys.PRODUCE).stream()
                .map(r -> ((ProduceRequest.Builder) r.requestBuilder()).build())
                .flatMap(p -> p.data().topicData().stream())
                .flatMap(t -> t.partitionData().stream())
                .map(p -> ((MemoryRecords) p.records())
                        .batches()
                        .iterator()
                        .next()
                        .producerId())
                .collect(Collectors.toSet());
    }

    /** The source answers the first Fetch with one batch of one record for each partition. */
    void sourceFetchAnswer(List<TopicPartition> tps) {
        LinkedHashMap<TopicIdPartition, FetchResponseData.PartitionData> data = new LinkedHashMap<>();
        for (TopicPartition tp : tps) {
            data.put(
                    new TopicIdPartition(SOURCE_TOPIC_ID, tp),
                    new FetchResponseData.PartitionData()
                            .setPartitionIndex(tp.partition())
                            .setHighWatermark(1)
                            .setRecords(batch(0, 1)));
        }
        sourceNetwork.prepareResponse(FetchResponse.of(Errors.NONE, 0, 0, data, List.of()));
    }

    static MemoryRecords batch(long baseOffset, int count) {
        MemoryRecordsBuilder builder = MemoryRecords.builder(
                ByteBuffer.allocate(1024),
                RecordBatch.CURRENT_MAGIC_VALUE,
                Compression.NONE,
                TimestampType.CREATE_TIME,
                baseOffset,
                1_000L,
                99L,
                (short) 0,
                (int) baseOffset,
                false,
                0);
        for (int i = 0; i < count; i++) {
            builder.append(1_000L + i, ("key-" + (baseOffset + i)).getBytes(), ("value-" + i).getBytes());
        }
        return builder.build();
    }

    static InitProducerIdResponse producerId(long id) {
        return new InitProducerIdResponse(
                new InitProducerIdResponseData().setProducerId(id).setProducerEpoch((short) 0));
    }

    static ProduceResponse appended(TopicPartition tp, long baseOffset) {
        return produceAnswer(tp, Errors.NONE, baseOffset);
    }

    static ProduceResponse produceAnswer(TopicPartition tp, Errors error, long baseOffset) {
        ProduceResponseData.TopicProduceResponseCollection topics =
                new ProduceResponseData.TopicProduceResponseCollection();
        topics.add(new ProduceResponseData.TopicProduceResponse()
                .setName(tp.topic())
                .setTopicId(DESTINATION_TOPIC_ID)
                .setPartitionResponses(new ArrayList<>(List.of(new ProduceResponseData.PartitionProduceResponse()
                        .setIndex(tp.partition())
                        .setErrorCode(error.code())
                        .setBaseOffset(baseOffset)))));
        return new ProduceResponse(new ProduceResponseData().setResponses(topics));
    }

    private final class Listener implements DataPlane.Listener {
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
        public void onRequest(String api, boolean failed) {}
    }
}
