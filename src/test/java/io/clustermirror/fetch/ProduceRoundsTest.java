package io.clustermirror.fetch;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.batches.SourceBatch;
import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.ProducerIdentity;
import io.clustermirror.kafka.WireClient;
import io.clustermirror.mirror.MirrorPartition;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.MockClient;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;

/** The fast path's Produce requests: one batch per partition, a byte cap a request passes only with a single batch. */
class ProduceRoundsTest {

    private static final Node LEADER = new Node(1, "destination", 9092);
    private static final Uuid TOPIC_ID = Uuid.randomUuid();

    private final Pipeline pipeline =
            new Pipeline("m1", null, null, WireClient.over("destination", new MockClient(Time.SYSTEM), 1000), 1000);
    private final List<Map<TopicPartition, FetchPartition.Sent>> requests = new ArrayList<>();

    @Test
    void aRequestShouldStayUnderTheByteCapAndCarryOneBatchPerPartition() {
        // Given four partitions with two batches each, and a cap that three batches fit
        List<FetchPartition> partitions = partitions(4, 2, 300);
        int cap = 3 * partitions.get(0).queue.peek().sizeInBytes() + 10;
        ProduceRounds rounds = new ProduceRounds(pipeline, cap, 5, (node, sent, request) -> requests.add(sent));

        // When one round runs
        rounds.send(partitions);

        // Then every batch went, three to a request at most, never two of one partition in one request, and the
        // request after a full one went on with the partitions that had not had their turn
        assertThat(requests).allSatisfy(sent -> assertThat(bytes(sent)).isLessThanOrEqualTo(cap));
        assertThat(requests).extracting(Map::size).containsExactly(3, 3, 2);
        TopicPartition leftOut = partitions.stream()
                .map(p -> p.tp)
                .filter(tp -> !requests.get(0).containsKey(tp))
                .findFirst()
                .orElseThrow();
        assertThat(requests.get(1)).containsKey(leftOut);
        assertThat(partitions).allSatisfy(p -> assertThat(p.inFlight).hasSize(2));
    }

    @Test
    void aBatchLargerThanTheCapShouldGoAloneAndTheNextRequestStartWithThePartitionThatDidNotFit() {
        // Given a partition whose batch alone passes the cap, behind one with a small batch
        List<FetchPartition> partitions = partitions(2, 1, 300);
        partitions.get(1).queue.clear();
        partitions.get(1).queue.add(batch(0, 2000));
        ProduceRounds rounds = new ProduceRounds(pipeline, 1000, 5, (node, sent, request) -> requests.add(sent));

        rounds.send(partitions);

        // Then the big batch goes in a request of its own
        assertThat(requests).hasSize(2);
        assertThat(requests)
                .filteredOn(sent -> sent.containsKey(partitions.get(1).tp))
                .singleElement()
                .satisfies(sent -> assertThat(sent).hasSize(1));
    }

    @Test
    void aPartitionShouldNotTakeMoreThanItsInFlightLimit() {
        List<FetchPartition> partitions = partitions(1, 8, 100);
        ProduceRounds rounds = new ProduceRounds(pipeline, 1 << 20, 5, (node, sent, request) -> requests.add(sent));

        rounds.send(partitions);

        assertThat(requests).hasSize(5);
        assertThat(partitions.get(0).queue).hasSize(3);
    }

    @Test
    void aPartitionWithBatchesAndNoLeaderShouldFailAfterFourRequestTimeoutsOfLooksNotOnAStaleOne() {
        // Given a partition with batches to append, on a clock the test moves, and a request timeout of 1 s
        AtomicLong nanos = new AtomicLong();
        DataPlaneLivenessTest.RecordingListener listener = new DataPlaneLivenessTest.RecordingListener();
        Pipeline clocked = new Pipeline(
                "m1",
                listener,
                null,
                WireClient.over("destination", new MockClient(Time.SYSTEM), 1000),
                1000,
                FetchBudget.UNLIMITED,
                AppendLease.ALWAYS,
                nanos::get);
        List<FetchPartition> partition = partitions(clocked, 1, 1, 100);
        ProduceRounds rounds = new ProduceRounds(clocked, 1 << 20, 5, (node, sent, request) -> requests.add(sent));

        // When the destination's view shows it without a leader, once, and again after an idle spell of 5 s
        clocked.destinationView = ClusterView.empty();
        rounds.send(partition);
        nanos.set(TimeUnit.SECONDS.toNanos(5));
        rounds.send(partition);

        // Then the spell starts the count again: no failure on a start time 5 s old
        assertThat(listener.failures).isEmpty();

        // When it is looked at every half second from then on
        for (int look = 1; look <= 8; look++) {
            nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(500));
            rounds.send(partition);
            assertThat(listener.failures).as("after %d ms", look * 500).isEmpty();
        }
        nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(500));
        rounds.send(partition);

        // Then it fails past four request timeouts of looks, saying why, and nothing was sent
        assertThat(listener.failures.get(partition.get(0).partition))
                .startsWith("the destination has shown no leader of the partition for 4000 ms");
        assertThat(requests).isEmpty();
    }

    /** {@code count} partitions led by one broker and pinned to the same one of its connections. */
    private List<FetchPartition> partitions(int count, int batchesEach, int recordBytes) {
        return partitions(pipeline, count, batchesEach, recordBytes);
    }

    private static List<FetchPartition> partitions(Pipeline pipeline, int count, int batchesEach, int recordBytes) {
        List<FetchPartition> partitions = new ArrayList<>();
        Map<TopicPartition, Node> leaders = new HashMap<>();
        for (int p = 0; partitions.size() < count; p++) {
            if (Utils.abs(new TopicPartition("orders", p).hashCode()) % AppendLoop.CONNECTIONS_PER_BROKER != 0) {
                continue;
            }
            FetchPartition state = new FetchPartition(new MirrorPartition("orders", p), 0, -1, 1);
            state.enter();
            state.identity = new ProducerIdentity(42, (short) 0);
            for (int b = 0; b < batchesEach; b++) {
                SourceBatch batch = batch(b, recordBytes);
                state.queue.add(batch);
                state.queuedBytes += batch.sizeInBytes();
            }
            partitions.add(state);
            leaders.put(state.tp, LEADER);
        }
        pipeline.destinationView =
                new ClusterView("d", List.of(LEADER), leaders, Map.of("orders", TOPIC_ID), Map.of(TOPIC_ID, "orders"));
        return partitions;
    }

    private static SourceBatch batch(long offset, int valueBytes) {
        MemoryRecordsBuilder builder = MemoryRecords.builder(
                ByteBuffer.allocate(valueBytes + 256), Compression.NONE, TimestampType.CREATE_TIME, offset);
        builder.append(1_000L, null, new byte[valueBytes]);
        return SourceBatch.slices(builder.build()).get(0);
    }

    private static int bytes(Map<TopicPartition, FetchPartition.Sent> sent) {
        return sent.values().stream().mapToInt(s -> s.batch().sizeInBytes()).sum();
    }
}
