package io.clustermirror.fetch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.TwoClusterClient;
import io.clustermirror.kafka.WireNetwork;
import io.clustermirror.mirror.MirrorPartition;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.MockClient;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.utils.Time;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Lost Produce answers are retried in place: the same batch bytes (producer id, epoch, sequence) go again, one at a
 * time and in order, and the destination's answer to a copy (its original offset, no error) confirms it. The network on
 * both sides is kafka-clients' {@link MockClient}; the destination's answers are scripted in order.
 */
class LostAnswersTest {

    private static final Node SOURCE_BROKER = new Node(1, "source", 9092);
    private static final Node DESTINATION_BROKER = new Node(7, "destination", 9092);
    private static final MirrorPartition PARTITION = new MirrorPartition("orders", 0);
    private static final TopicPartition TP = new TopicPartition("orders", 0);
    private static final Uuid SOURCE_TOPIC_ID = Uuid.randomUuid();
    private static final Uuid DESTINATION_TOPIC_ID = Uuid.randomUuid();
    private static final long PRODUCER_ID = 4711;
    private static final short EPOCH = 3;

    private final MockClient sourceNetwork = new MockClient(Time.SYSTEM);
    private final MockClient destinationNetwork = new MockClient(Time.SYSTEM);
    private final Recording listener = new Recording();
    /** Every Produce the destination got, in order, as the batch it carried. */
    private final List<Produced> produced = new CopyOnWriteArrayList<>();

    private MirrorFetcher fetcher;

    record Produced(long producerId, short epoch, int baseSequence, int records, int confirmedBefore) {}

    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void close() {
        if (fetcher != null) {
            fetcher.close();
        }
        threads.shutdownNow();
    }

    @Test
    void aProduceWhoseAnswerIsLostShouldBeSentAgainAsItIsAndItsDuplicateAnswerConfirmIt() {
        // Given two source batches [0..2] and [3..5], the destination takes both but the connection drops before
        // either answer arrives
        sourceFetchAnswers(batch(0, 3), batch(3, 3));
        destinationProducerId();
        destinationAnswers(null, null); // both lost: disconnected
        // and a copy of each is answered as a broker answers a duplicate: no error, the original's offset
        destinationAnswers(appendedAt(0), appendedAt(3));

        // When the data plane mirrors the partition
        fetcher = start();
        fetcher.add(PARTITION, 0, -1, -1);

        // Then each batch is sent again with the same producer id, epoch and sequence, in order, one after the other
        await().atMost(Duration.ofSeconds(10)).until(() -> progress().destinationEnd() == 6);
        assertThat(produced)
                .extracting(Produced::producerId, Produced::epoch, Produced::baseSequence)
                .containsExactly(
                        Tuple.tuple(PRODUCER_ID, EPOCH, 0),
                        Tuple.tuple(PRODUCER_ID, EPOCH, 3),
                        Tuple.tuple(PRODUCER_ID, EPOCH, 0),
                        Tuple.tuple(PRODUCER_ID, EPOCH, 3));
        assertThat(produced.get(3).confirmedBefore())
                .as("the second retry goes once the first is confirmed")
                .isEqualTo(1);
        // and each is confirmed once, at its source offset; nothing failed, no new producer id was asked for
        assertThat(listener.appendedRecords.get()).isEqualTo(6);
        assertThat(listener.failures).isEmpty();
        assertThat(destinationNetwork.futureResponses()).isEmpty();
        // the rate sampler's counters count what was acknowledged, once per batch however often it was sent
        DataPlane.Counts counts = fetcher.counts().get(PARTITION);
        assertThat(counts.appendedRecords()).isEqualTo(6);
        assertThat(counts.appendedBytes())
                .isEqualTo(batch(0, 3).sizeInBytes() + batch(3, 3).sizeInBytes());
        assertThat(counts.destinationEnd()).isEqualTo(6);
    }

    @Test
    void anOutOfOrderAnswerBehindAFailedBatchShouldBeRetriedInOrderAfterIt() {
        // Given a first batch refused before the append (not enough replicas) and the second refused as out of order
        // (its predecessor is not there)
        sourceFetchAnswers(batch(0, 3), batch(3, 3));
        destinationProducerId();
        destinationAnswers(
                refused(Errors.NOT_ENOUGH_REPLICAS),
                refused(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER),
                // the first retry meets a leader change, the second attempt lands, then the second batch
                refused(Errors.NOT_LEADER_OR_FOLLOWER),
                appendedAt(0),
                appendedAt(3));

        fetcher = start();
        fetcher.add(PARTITION, 0, -1, -1);

        // Then both land in order under the same identity and sequences, without a reset
        await().atMost(Duration.ofSeconds(10)).until(() -> progress().destinationEnd() == 6);
        assertThat(produced).extracting(Produced::baseSequence).containsExactly(0, 3, 0, 0, 3);
        assertThat(produced).allMatch(p -> p.producerId() == PRODUCER_ID && p.epoch() == EPOCH);
        assertThat(listener.failures).isEmpty();
    }

    @Test
    void aRetryThatLandsAgainAtAnotherOffsetShouldFailThePartitionSayingWhy() {
        // Given a lost answer, and a destination that no longer knows the producer (its state expired) and so appends
        // the copy a second time, after the original
        sourceFetchAnswers(batch(0, 3));
        destinationProducerId();
        destinationAnswers(null, appendedAt(3));

        fetcher = start();
        fetcher.add(PARTITION, 0, -1, -1);

        // Then the partition fails, naming the offsets and the likely cause, instead of going on one batch late
        await().atMost(Duration.ofSeconds(10)).until(() -> listener.failures.containsKey(PARTITION));
        assertThat(listener.failures.get(PARTITION))
                .contains("source batch [0..2] was appended at destination offset 3 instead of 0")
                .contains("sent again after a lost answer")
                .contains("producer.id.expiration.ms");
        assertThat(listener.appendedBatches).hasValue(0);
    }

    // ---------------------------------------------------------------- the two clusters

    private MirrorFetcher start() {
        ClusterView source = new ClusterView(
                "source-cluster",
                List.of(SOURCE_BROKER),
                Map.of(TP, SOURCE_BROKER),
                Map.of("orders", SOURCE_TOPIC_ID),
                Map.of(SOURCE_TOPIC_ID, "orders"));
        ClusterView destination = new ClusterView(
                "destination-cluster",
                List.of(DESTINATION_BROKER),
                Map.of(TP, DESTINATION_BROKER),
                Map.of("orders", DESTINATION_TOPIC_ID),
                Map.of(DESTINATION_TOPIC_ID, "orders"));
        Fetcher pooled = new Fetcher(
                        0,
                        WireNetwork.over(
                                "test",
                                new TwoClusterClient(Map.of(
                                        SOURCE_BROKER.host(), sourceNetwork,
                                        DESTINATION_BROKER.host(), destinationNetwork))),
                        threads,
                        null)
                .start();
        pooled.reserve(); // the pool places a data plane before it is built
        return new MirrorFetcher(
                "m1",
                "source-cluster",
                pooled,
                pooled.sourceClient("m1", "source", null, 1000),
                pooled.destinationClient("destination", 1000),
                topics -> CompletableFuture.completedFuture(source),
                topics -> CompletableFuture.completedFuture(destination),
                null,
                listener,
                1,
                1000,
                new ReplicationThrottle(ReplicationThrottle.UNLIMITED));
    }

    private DataPlane.Progress progress() {
        return fetcher.progress(PARTITION).orElseThrow();
    }

    /** One source batch of {@code count} records from {@code baseOffset}, written by a source idempotent producer. */
    private static MemoryRecords batch(long baseOffset, int count) {
        ByteBuffer buffer = ByteBuffer.allocate(1024);
        MemoryRecordsBuilder builder = MemoryRecords.builder(
                buffer,
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
            builder.append(
                    1_000L + i, ("key-" + (baseOffset + i)).getBytes(), ("value-" + (baseOffset + i)).getBytes());
        }
        return builder.build();
    }

    /** The source answers the first Fetch with these batches (later fetches wait). */
    private void sourceFetchAnswers(MemoryRecords... batches) {
        int size = 0;
        for (MemoryRecords records : batches) {
            size += records.sizeInBytes();
        }
        ByteBuffer all = ByteBuffer.allocate(size);
        for (MemoryRecords records : batches) {
            all.put(records.buffer().duplicate());
        }
        all.flip();
        MemoryRecords records = MemoryRecords.readableRecords(all);
        long end = 0;
        for (RecordBatch b : records.batches()) {
            end = b.lastOffset() + 1;
        }
        LinkedHashMap<TopicIdPartition, FetchResponseData.PartitionData> data = new LinkedHashMap<>();
        data.put(
                new TopicIdPartition(SOURCE_TOPIC_ID, TP),
                new FetchResponseData.PartitionData()
                        .setPartitionIndex(0)
                        .setHighWatermark(end)
                        .setRecords(records));
        sourceNetwork.prepareResponse(FetchResponse.of(Errors.NONE, 0, 0, data, List.of()));
    }

    /** The partition's transaction coordinator (the destination broker), then its producer id. */
    private void destinationProducerId() {
        destinationNetwork.prepareResponse(ControlStepsTest.coordinator(ProducerIds.transactionalId("m1", TP)));
        destinationNetwork.prepareResponse(new InitProducerIdResponse(
                new InitProducerIdResponseData().setProducerId(PRODUCER_ID).setProducerEpoch(EPOCH)));
    }

    /** The destination's answers to the next Produce requests, in order; null: the answer is lost (disconnect). */
    private void destinationAnswers(ProduceResponse... answers) {
        for (ProduceResponse answer : answers) {
            destinationNetwork.prepareResponse(this::record, answer, answer == null);
        }
    }

    /** Notes what a Produce carried, as it is sent (the bytes are restamped in place, so they are read now). */
    private boolean record(AbstractRequest request) {
        ProduceRequest produce = (ProduceRequest) request;
        var partition =
                produce.data().topicData().iterator().next().partitionData().get(0);
        RecordBatch batch =
                ((MemoryRecords) partition.records()).batches().iterator().next();
        produced.add(new Produced(
                batch.producerId(),
                batch.producerEpoch(),
                batch.baseSequence(),
                batch.countOrNull(),
                listener.appendedBatches.get()));
        return true;
    }

    private static ProduceResponse appendedAt(long baseOffset) {
        return answer(Errors.NONE, baseOffset);
    }

    private static ProduceResponse refused(Errors error) {
        return answer(error, -1);
    }

    private static ProduceResponse answer(Errors error, long baseOffset) {
        ProduceResponseData.TopicProduceResponseCollection topics =
                new ProduceResponseData.TopicProduceResponseCollection();
        topics.add(new ProduceResponseData.TopicProduceResponse()
                .setName("orders")
                .setTopicId(DESTINATION_TOPIC_ID)
                .setPartitionResponses(new ArrayList<>(List.of(new ProduceResponseData.PartitionProduceResponse()
                        .setIndex(0)
                        .setErrorCode(error.code())
                        .setBaseOffset(baseOffset)))));
        return new ProduceResponse(new ProduceResponseData().setResponses(topics));
    }

    private static final class Recording implements DataPlane.Listener {
        final Map<MirrorPartition, String> failures = new ConcurrentHashMap<>();
        final AtomicInteger appendedRecords = new AtomicInteger();
        final AtomicInteger appendedBatches = new AtomicInteger();

        @Override
        public void onFailed(MirrorPartition partition, String error) {
            failures.put(partition, error);
        }

        @Override
        public void onEpochFenced(MirrorPartition partition, String reason, long epochEndOffset) {}

        @Override
        public void onAppended(MirrorPartition partition, int records, int bytes) {
            appendedRecords.addAndGet(records);
            appendedBatches.incrementAndGet();
        }

        @Override
        public void onSourceClusterChanged(String actualClusterId) {}

        @Override
        public void onRequest(String api, boolean failed) {}
    }
}
