package io.clustermirror.verification;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.batches.SourceBatch;
import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.WireClient;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
import org.junit.jupiter.api.Test;

/** {@link VerificationReads} against kafka-clients' {@link MockClient}: one Fetch per leader, a starved part read alone. */
class VerificationReadsTest {

    private static final Node LEADER = new Node(1, "b1", 9092);
    private static final Uuid ID = Uuid.randomUuid();
    private static final String TOPIC = "orders";
    private static final TopicPartition P0 = new TopicPartition(TOPIC, 0);
    private static final TopicPartition P1 = new TopicPartition(TOPIC, 1);
    private static final TopicPartition P2 = new TopicPartition(TOPIC, 2);
    private static final ClusterView VIEW = new ClusterView(
            "c", List.of(LEADER), Map.of(P0, LEADER, P1, LEADER, P2, LEADER), Map.of(TOPIC, ID), Map.of(ID, TOPIC));

    private final MockClient mock = new MockClient(Time.SYSTEM);
    private final List<List<Integer>> fetches = new ArrayList<>();

    private MockClient.RequestMatcher recorded() {
        return body -> {
            fetches.add(((FetchRequest) body)
                    .data().topics().stream()
                            .flatMap(t -> t.partitions().stream().map(p -> p.partition()))
                            .toList());
            return true;
        };
    }

    private static MemoryRecords batch(long base) {
        return MemoryRecords.withRecords(
                base, Compression.NONE, new SimpleRecord("a".getBytes()), new SimpleRecord("b".getBytes()));
    }

    private static FetchResponse answer(Map<Integer, FetchResponseData.PartitionData> parts) {
        LinkedHashMap<TopicIdPartition, FetchResponseData.PartitionData> answer = new LinkedHashMap<>();
        parts.forEach((p, d) -> answer.put(new TopicIdPartition(ID, p, TOPIC), d.setPartitionIndex(p)));
        return FetchResponse.of(Errors.NONE, 0, FetchMetadata.INVALID_SESSION_ID, answer, List.of());
    }

    private static FetchResponseData.PartitionData part(MemoryRecords records, long highWatermark) {
        return new FetchResponseData.PartitionData()
                .setHighWatermark(highWatermark)
                .setRecords(records);
    }

    @Test
    void onePartStarvedByTheAnswersCapsShouldBeReadAgainAloneAndAnEmptyAnswerAtTheEndShouldStandAsNothing() {
        Map<Integer, FetchResponseData.PartitionData> grouped = new LinkedHashMap<>();
        grouped.put(0, part(batch(0), 2));
        grouped.put(1, part(MemoryRecords.EMPTY, 10)); // below its high watermark, yet nothing: cut by the caps
        grouped.put(2, part(MemoryRecords.EMPTY, 4)); // at its high watermark: nothing there
        mock.prepareResponse(recorded(), answer(grouped));
        mock.prepareResponse(recorded(), answer(Map.of(1, part(batch(5), 10))));
        Map<TopicPartition, Long> offsets = new LinkedHashMap<>();
        offsets.put(P0, 0L);
        offsets.put(P1, 5L);
        offsets.put(P2, 4L);

        Map<TopicPartition, VerificationReads.Answer> answers;
        try (WireClient client = WireClient.over("verify", mock, 5_000)) {
            answers = VerificationReads.read(client, VIEW, offsets, 1 << 20);
        }

        assertThat(fetches).containsExactly(List.of(0, 1, 2), List.of(1));
        assertThat(answers.get(P0).batches())
                .singleElement()
                .satisfies(b -> assertThat(b.baseOffset()).isZero());
        assertThat(answers.get(P1).batches())
                .singleElement()
                .satisfies(b -> assertThat(b.baseOffset()).isEqualTo(5));
        assertThat(answers.get(P2).batches()).isEmpty();
        assertThat(answers.get(P2).failure()).isNull();
        // the empty answer at the high watermark settles the range up to it, and no further
        assertThat(answers.get(P2).highWatermark()).isEqualTo(4);
        assertThat(answers.get(P2).settles(4, 4)).isTrue();
        assertThat(answers.get(P2).settles(4, 9)).isFalse();
    }

    @Test
    void anAnswerShouldSettleARangeWhenItBringsABatchThereOrItsLeaderHoldsTheRangeBelowItsHighWatermark() {
        var none = new VerificationReads.Answer(List.of(), 0, null, 100);
        assertThat(none.settles(50, 100))
                .as("nothing there up to the high watermark")
                .isTrue();
        // a new leader right after a failover: its high watermark below the range, its empty answer proves nothing
        var lagging = new VerificationReads.Answer(List.of(), 0, null, 40);
        assertThat(lagging.settles(30, 100)).isFalse();
        var unknown = new VerificationReads.Answer(List.of(), 0, null, -1);
        assertThat(unknown.settles(30, 100)).isFalse();
        var withBatch = new VerificationReads.Answer(SourceBatch.slices(batch(30)), 0, null, -1);
        assertThat(withBatch.settles(31, 100)).isTrue();
        assertThat(withBatch.settles(32, 100))
                .as("its batch ends below the offset")
                .isFalse();
    }

    @Test
    void aPartsErrorShouldBeThatPartitionsFailureOnly() {
        Map<Integer, FetchResponseData.PartitionData> grouped = new LinkedHashMap<>();
        grouped.put(0, part(batch(0), 2));
        grouped.put(1, part(MemoryRecords.EMPTY, -1).setErrorCode(Errors.NOT_LEADER_OR_FOLLOWER.code()));
        mock.prepareResponse(recorded(), answer(grouped));
        Map<TopicPartition, Long> offsets = new LinkedHashMap<>();
        offsets.put(P0, 0L);
        offsets.put(P1, 0L);

        Map<TopicPartition, VerificationReads.Answer> answers;
        try (WireClient client = WireClient.over("verify", mock, 5_000)) {
            answers = VerificationReads.read(client, VIEW, offsets, 1 << 20);
        }

        assertThat(answers.get(P0).failure()).isNull();
        assertThat(answers.get(P1).failure()).hasMessage("fetch of orders-1 at 0 failed: NOT_LEADER_OR_FOLLOWER");
        assertThat(fetches).hasSize(1);
    }
}
