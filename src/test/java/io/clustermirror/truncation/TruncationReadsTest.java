package io.clustermirror.truncation;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.kafka.ClusterView;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.Test;

/** The grouping of LOG_TRUNCATION's reads: which request goes to which broker for which partitions. Pure. */
class TruncationReadsTest {

    private static final Node B1 = new Node(1, "b1", 9092);
    private static final Node B2 = new Node(2, "b2", 9092);
    private static final Uuid ORDERS = Uuid.randomUuid();
    private static final Uuid EVENTS = Uuid.randomUuid();
    private static final TopicPartition O0 = new TopicPartition("orders", 0);
    private static final TopicPartition O1 = new TopicPartition("orders", 1);
    private static final TopicPartition E0 = new TopicPartition("events", 0);
    private static final TopicPartition GONE = new TopicPartition("gone", 0);
    private static final ClusterView VIEW = new ClusterView(
            "c",
            List.of(B1, B2),
            Map.of(O0, B1, O1, B2, E0, B1),
            Map.of("orders", ORDERS, "events", EVENTS),
            Map.of(ORDERS, "orders", EVENTS, "events"));

    @Test
    void partitionsShouldBeGroupedByTheirLeaderInOrderAndThoseWithoutOneSetApart() {
        TruncationReads.ByLeader grouped = TruncationReads.byLeader(List.of(O0, O1, GONE, E0), VIEW);

        assertThat(grouped.brokers()).containsOnlyKeys(B1, B2);
        assertThat(grouped.brokers().get(B1)).containsExactly(O0, E0);
        assertThat(grouped.brokers().get(B2)).containsExactly(O1);
        assertThat(grouped.leaderless()).containsExactly(GONE);
    }

    @Test
    void oneFetchShouldAskForEveryPartitionOfALeaderAtItsOffsetWithinTheCaps() {
        Map<TopicPartition, Long> offsets = new LinkedHashMap<>();
        offsets.put(O0, 41L);
        offsets.put(E0, 7L);

        FetchRequestData request = TruncationReads.fetch(VIEW, offsets)
                .build(ApiKeys.FETCH.latestVersion())
                .data();

        assertThat(request.maxBytes()).isEqualTo(TruncationReads.REQUEST_MAX_BYTES);
        assertThat(request.maxWaitMs()).isZero();
        assertThat(request.topics())
                .extracting(FetchRequestData.FetchTopic::topicId)
                .containsExactly(ORDERS, EVENTS);
        assertThat(request.topics().get(0).partitions()).singleElement().satisfies(p -> {
            assertThat(p.partition()).isZero();
            assertThat(p.fetchOffset()).isEqualTo(41);
            assertThat(p.partitionMaxBytes()).isEqualTo(TruncationReads.PARTITION_MAX_BYTES);
        });
        assertThat(request.topics().get(1).partitions().get(0).fetchOffset()).isEqualTo(7);
    }

    @Test
    void aPartsAnswerShouldSettleOnItsBatchItsErrorOrNothingBelowTheHighWatermark() {
        MemoryRecords batch = MemoryRecords.withRecords(
                40L, Compression.NONE, 2, new SimpleRecord("a".getBytes()), new SimpleRecord("b".getBytes()));

        assertThat(TruncationReads.settle(O0, 41, data(batch, 42)))
                .hasValueSatisfying(r -> assertThat(r.value()).hasValueSatisfying(b -> {
                    assertThat(b.baseOffset()).isEqualTo(40);
                    assertThat(b.lastOffset()).isEqualTo(41);
                }));
        assertThat(TruncationReads.settle(
                        O0, 41, data(MemoryRecords.EMPTY, 42).setErrorCode(Errors.OFFSET_OUT_OF_RANGE.code())))
                .hasValueSatisfying(
                        r -> assertThat(r.failure()).hasMessage("fetch of orders-0 at 41 failed: OFFSET_OUT_OF_RANGE"));
        // missing from the answer altogether: an error, as a Fetch of that partition alone has it, not asked again
        assertThat(TruncationReads.settle(O0, 41, null))
                .hasValueSatisfying(r -> assertThat(r.failure()).hasMessageContaining("UNKNOWN_SERVER_ERROR"));
        // nothing at or above the offset: the answer a Fetch of that partition alone would give
        assertThat(TruncationReads.settle(O0, 42, data(MemoryRecords.EMPTY, 42)))
                .hasValueSatisfying(r -> assertThat(r.value()).isEmpty());
    }

    @Test
    void aPartWithoutItsBatchBelowTheHighWatermarkOrCutShouldBeAskedAgain() {
        MemoryRecords batch = MemoryRecords.withRecords(40L, Compression.NONE, 2, new SimpleRecord("a".getBytes()));
        ByteBufferCut cut = new ByteBufferCut(batch);

        assertThat(TruncationReads.settle(O0, 41, data(MemoryRecords.EMPTY, 42)))
                .isEqualTo(Optional.empty());
        assertThat(TruncationReads.settle(O0, 40, data(cut.records(), 42))).isEqualTo(Optional.empty());
    }

    private static FetchResponseData.PartitionData data(MemoryRecords records, long highWatermark) {
        return new FetchResponseData.PartitionData()
                .setPartitionIndex(0)
                .setHighWatermark(highWatermark)
                .setRecords(records);
    }

    /** A batch's bytes without its last byte: what a broker returns when a batch does not fit the part's bytes. */
    private record ByteBufferCut(MemoryRecords whole) {
        MemoryRecords records() {
            var bytes = whole.buffer().duplicate();
            bytes.limit(bytes.limit() - 1);
            return MemoryRecords.readableRecords(bytes.slice());
        }
    }
}
