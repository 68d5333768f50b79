package io.clustermirror.truncation;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.kafka.TwoClusterClient;
import io.clustermirror.kafka.WireClient;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.TruncationProgress;
import io.clustermirror.mirror.TruncationProgress.Step;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.MockClient;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.DescribeTopicsResult;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.MockAdminClient;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.internals.KafkaFutureImpl;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.FetchMetadata;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * LOG_TRUNCATION of a batch against two brokers per cluster: the offsets in one Admin call per cluster and spec, the
 * batch reads in one Fetch per leader, and each partition's failure its own. The Admins are kafka-clients'
 * {@link MockAdminClient}, the brokers one {@link MockClient} each.
 */
class LogTruncationBatchTest {

    private static final String TOPIC = "orders";
    private static final Node S1 = new Node(0, "s1", 9092);
    private static final Node S2 = new Node(1, "s2", 9092);
    private static final Node D1 = new Node(0, "d1", 9092);
    private static final Node D2 = new Node(1, "d2", 9092);
    private static final int PARTITIONS = 4;
    /** Source and destination hold the same 5 records, [0, 4] in one batch; the source has 5 more. */
    private static final long DESTINATION_END = 5;
    /** The source's high watermark, which the outcome carries for the data plane. */
    private static final long SOURCE_END = 10;

    private final Map<String, MockClient> brokers = new HashMap<>();
    private final Map<String, List<List<TopicPartition>>> fetches = new HashMap<>();
    private final Map<String, Uuid> sourceIds = new HashMap<>();
    private final Map<String, Uuid> destinationIds = new HashMap<>();
    private final CountingAdmin sourceAdmin = new CountingAdmin(List.of(S1, S2));
    private final CountingAdmin destinationAdmin = new CountingAdmin(List.of(D1, D2));
    private final LogTruncation truncation;

    LogTruncationBatchTest() throws Exception {
        for (String host : List.of("s1", "s2", "d1", "d2")) {
            brokers.put(host, new MockClient(Time.SYSTEM));
            fetches.put(host, Collections.synchronizedList(new ArrayList<>()));
        }
        for (CountingAdmin admin : List.of(sourceAdmin, destinationAdmin)) {
            Map<TopicPartition, Long> starts = new HashMap<>();
            Map<TopicPartition, Long> ends = new HashMap<>();
            for (int p = 0; p < PARTITIONS; p++) {
                starts.put(tp(p), 0L);
                ends.put(tp(p), admin == sourceAdmin ? SOURCE_END : DESTINATION_END);
            }
            admin.updateBeginningOffsets(starts);
            admin.updateEndOffsets(ends);
        }
        // the topic ids each mock Admin gave the topic, which the Fetch answers carry
        sourceIds.put(TOPIC, topicId(sourceAdmin));
        destinationIds.put(TOPIC, topicId(destinationAdmin));
        truncation = new LogTruncation(
                null,
                sourceAdmin,
                destinationAdmin,
                id -> WireClient.over(id, new TwoClusterClient(Map.of("s1", mock("s1"), "s2", mock("s2"))), 5_000),
                id -> WireClient.over(id, new TwoClusterClient(Map.of("d1", mock("d1"), "d2", mock("d2"))), 5_000),
                5_000);
    }

    @AfterEach
    void close() {
        truncation.close();
    }

    @Test
    void aBatchShouldReadEachClusterOncePerSpecAndEachLeaderInOneFetch() throws Exception {
        // Given partitions 0 and 2 led by broker 1, 1 and 3 by broker 2 on both clusters, every destination a prefix
        answerEveryPartitionOnItsLeaders();

        // When the four are checked as one batch
        Map<MirrorPartition, PrefixCheck.Answer> answers = truncation.check("m", checks(0, 1, 2, 3));

        // Then each mirrors on from the destination's end, after two offset calls per cluster (earliest, latest) and
        // one Fetch per leader on each side, each for that leader's two partitions
        assertEveryOneReady(answers);
        assertThat(sourceAdmin.listOffsetCalls).hasValue(2);
        assertThat(destinationAdmin.listOffsetCalls).hasValue(2);
        assertThat(fetches.get("d1")).containsExactly(List.of(tp(0), tp(2)));
        assertThat(fetches.get("d2")).containsExactly(List.of(tp(1), tp(3)));
        assertThat(fetches.get("s1")).containsExactly(List.of(tp(0), tp(2)));
        assertThat(fetches.get("s2")).containsExactly(List.of(tp(1), tp(3)));
    }

    @Test
    void aCheckShouldReportItsStepWithTheOffsetsItReadThenItsOutcome() throws Exception {
        // Given partition 0 whose destination [0, 5) is a prefix of the source [0, 10)
        answerAll("d1", 0);
        answerAll("s1", 0);
        List<TruncationProgress> reports = new ArrayList<>();

        truncation.check("m", List.of(PrefixCheck.Check.full(partition(0), reports::add)));

        // Then describe heard the step with the four log ends, then the same step complete
        assertThat(reports)
                .containsExactly(
                        new TruncationProgress(Step.DIVERGENCE_CHECK, false, 0, 10, 0, DESTINATION_END, -1, -1),
                        new TruncationProgress(Step.DIVERGENCE_CHECK, true, 0, 10, 0, DESTINATION_END, -1, -1));
        assertThat(reports.get(1).sentence()).isEqualTo("destination is a prefix of the source up to 5");
    }

    @Test
    void aBrokerThatCannotAnswerShouldFailItsPartitionsOnly() throws Exception {
        // Given source broker 2 drops the connection of the batch's Fetch
        answerAll("d1", 0, 2);
        answerAll("d2", 1, 3);
        answerAll("s1", 0, 2);
        brokers.get("s2").prepareResponse(record("s2"), null, true);

        Map<MirrorPartition, PrefixCheck.Answer> answers = truncation.check("m", checks(0, 1, 2, 3));

        // Then the partitions it leads fail with the disconnect, the others are ready
        assertThat(answers.get(partition(0)).outcome())
                .isEqualTo(new LogTruncation.Ready(DESTINATION_END, 3, SOURCE_END));
        assertThat(answers.get(partition(2)).outcome())
                .isEqualTo(new LogTruncation.Ready(DESTINATION_END, 3, SOURCE_END));
        assertThat(answers.get(partition(1)).failure()).hasMessageContaining("disconnected");
        assertThat(answers.get(partition(3)).failure()).hasMessageContaining("disconnected");
    }

    @Test
    void aPartitionsErrorShouldBeItsOwnAndACutAnswerShouldBeAskedAgainForWhatItLeftOut() throws Exception {
        // Given destination broker 1 answers partition 0 with an error, and partition 2 without records in its first
        // answer (the answer's byte cap ran out), as brokers do
        Map<Integer, FetchResponseData.PartitionData> first = new LinkedHashMap<>();
        first.put(0, data(0).setErrorCode(Errors.NOT_LEADER_OR_FOLLOWER.code()).setRecords(MemoryRecords.EMPTY));
        first.put(2, data(2).setRecords(MemoryRecords.EMPTY));
        brokers.get("d1").prepareResponse(record("d1"), answer(destinationIds, first));
        answerAll("d1", 2);
        answerAll("d2", 1, 3);
        answerAll("s1", 2);
        answerAll("s2", 1, 3);

        Map<MirrorPartition, PrefixCheck.Answer> answers = truncation.check("m", checks(0, 1, 2, 3));

        assertThat(answers.get(partition(0)).failure())
                .hasMessage("fetch of orders-0 at 4 failed: NOT_LEADER_OR_FOLLOWER");
        assertThat(List.of(1, 2, 3))
                .allSatisfy(p -> assertThat(answers.get(partition(p)).outcome())
                        .isEqualTo(new LogTruncation.Ready(DESTINATION_END, 3, SOURCE_END)));
        assertThat(fetches.get("d1")).containsExactly(List.of(tp(0), tp(2)), List.of(tp(2)));
    }

    @Test
    void aPartitionWhoseOffsetsCannotBeReadShouldFailAloneWithTheBrokersError() throws Exception {
        // Given the source refuses partition 3's offsets (its leader answers ListOffsets with an error for it)
        sourceAdmin.refused.put(tp(3), new TopicAuthorizationException("Not authorized to access topics: [orders]"));
        answerAll("d1", 0, 2);
        answerAll("d2", 1);
        answerAll("s1", 0, 2);
        answerAll("s2", 1);

        Map<MirrorPartition, PrefixCheck.Answer> answers = truncation.check("m", checks(0, 1, 2, 3));

        // Then partition 3 fails with that error as the broker gave it, is read no further, and the others are ready
        assertThat(answers.get(partition(3)).failure())
                .isInstanceOf(TopicAuthorizationException.class)
                .hasMessage("Not authorized to access topics: [orders]");
        assertThat(List.of(0, 1, 2))
                .allSatisfy(p -> assertThat(answers.get(partition(p)).outcome())
                        .isEqualTo(new LogTruncation.Ready(DESTINATION_END, 3, SOURCE_END)));
        assertThat(fetches.get("s2")).containsExactly(List.of(tp(1)));
        assertThat(fetches.get("d2")).containsExactly(List.of(tp(1)));
    }

    @Test
    void epochFencingShouldDecideADestinationBeyondTheEpochsEndWithoutReadingIt() throws Exception {
        // Given partition 2's source epoch ended at 3, below the destination's end
        answerAll("d1", 0);
        answerAll("s1", 0);

        Map<MirrorPartition, PrefixCheck.Answer> answers = truncation.check(
                "m",
                List.of(
                        PrefixCheck.Check.full(partition(0), note -> {}),
                        new PrefixCheck.Check(partition(2), 3, note -> {})));

        assertThat(answers.get(partition(2)).outcome())
                .isEqualTo(new LogTruncation.Diverged(
                        "the destination holds offsets [3, 5) that the source no longer has"));
        assertThat(answers.get(partition(0)).outcome())
                .isEqualTo(new LogTruncation.Ready(DESTINATION_END, 3, SOURCE_END));
        assertThat(fetches.get("d1")).containsExactly(List.of(tp(0)));
    }

    @Test
    void bothClustersShouldBeAskedForTheirOffsetsAndViewsBeforeEitherAnswerIsAwaited() throws Exception {
        // Given a source whose offsets and topic descriptions are answered only once the destination was asked for
        // its own (a check that read one cluster after the other would wait for the source in vain)
        sourceAdmin.answerAfter(destinationAdmin);
        answerEveryPartitionOnItsLeaders();

        Map<MirrorPartition, PrefixCheck.Answer> answers = truncation.check("m", checks(0, 1, 2, 3));

        // Then every partition was decided from both clusters' answers
        assertEveryOneReady(answers);
    }

    // ================================================================ helpers

    /** Every leader answers the Fetch of its two partitions (0 and 2 on broker 1, 1 and 3 on broker 2, both sides). */
    private void answerEveryPartitionOnItsLeaders() {
        answerAll("d1", 0, 2);
        answerAll("d2", 1, 3);
        answerAll("s1", 0, 2);
        answerAll("s2", 1, 3);
    }

    /** Each partition mirrors on from the destination's end, the source batch there of leader epoch 3. */
    private static void assertEveryOneReady(Map<MirrorPartition, PrefixCheck.Answer> answers) {
        assertThat(answers.values())
                .allSatisfy(a ->
                        assertThat(a.outcome()).isEqualTo(new LogTruncation.Ready(DESTINATION_END, 3, SOURCE_END)));
    }

    private static Uuid topicId(MockAdminClient admin) throws Exception {
        return admin.describeTopics(List.of(TOPIC))
                .allTopicNames()
                .get()
                .get(TOPIC)
                .topicId();
    }

    private MockClient mock(String host) {
        return brokers.get(host);
    }

    private static TopicPartition tp(int p) {
        return new TopicPartition(TOPIC, p);
    }

    private static MirrorPartition partition(int p) {
        return new MirrorPartition(TOPIC, p);
    }

    private static List<PrefixCheck.Check> checks(int... partitions) {
        List<PrefixCheck.Check> checks = new ArrayList<>();
        for (int p : partitions) {
            checks.add(PrefixCheck.Check.full(partition(p), note -> {}));
        }
        return checks;
    }

    /** Records the partitions of each Fetch sent to {@code host}, in the request's order. */
    private MockClient.RequestMatcher record(String host) {
        return body -> {
            FetchRequest request = (FetchRequest) body;
            fetches.get(host)
                    .add(request.data().topics().stream()
                            .flatMap(t -> t.partitions().stream()
                                    .map(p -> new TopicPartition(
                                            host.startsWith("s")
                                                    ? name(sourceIds, t.topicId())
                                                    : name(destinationIds, t.topicId()),
                                            p.partition())))
                            .toList());
            return true;
        };
    }

    private static String name(Map<String, Uuid> ids, Uuid id) {
        return ids.entrySet().stream()
                .filter(e -> e.getValue().equals(id))
                .map(Map.Entry::getKey)
                .findFirst()
                .orElseThrow();
    }

    /** One answer from {@code host} with the shared batch [0, 4] for each of the partitions. */
    private void answerAll(String host, int... partitions) {
        Map<Integer, FetchResponseData.PartitionData> data = new LinkedHashMap<>();
        for (int p : partitions) {
            data.put(p, data(p).setRecords(batch()));
        }
        brokers.get(host)
                .prepareResponse(record(host), answer(host.startsWith("s") ? sourceIds : destinationIds, data));
    }

    private static FetchResponseData.PartitionData data(int p) {
        return new FetchResponseData.PartitionData().setPartitionIndex(p).setHighWatermark(DESTINATION_END);
    }

    private static FetchResponse answer(Map<String, Uuid> ids, Map<Integer, FetchResponseData.PartitionData> data) {
        LinkedHashMap<TopicIdPartition, FetchResponseData.PartitionData> answer = new LinkedHashMap<>();
        data.forEach((p, d) -> answer.put(new TopicIdPartition(ids.get(TOPIC), p, TOPIC), d));
        return FetchResponse.of(Errors.NONE, 0, FetchMetadata.INVALID_SESSION_ID, answer, List.of());
    }

    /** The same five records on both clusters, written in source leader epoch 3. */
    private static MemoryRecords batch() {
        SimpleRecord[] records = new SimpleRecord[(int) DESTINATION_END];
        for (int i = 0; i < records.length; i++) {
            records[i] = new SimpleRecord(1_000L + i, ("k" + i).getBytes(), ("v" + i).getBytes());
        }
        return MemoryRecords.withRecords(0L, Compression.NONE, 3, records);
    }

    /**
     * kafka-clients' mock Admin with topic {@value #TOPIC} led by the two brokers in turn, counting offset calls, and
     * answering the partitions in {@link #refused} with their error.
     */
    private final class CountingAdmin extends MockAdminClient {
        final AtomicInteger listOffsetCalls = new AtomicInteger();
        final Map<TopicPartition, RuntimeException> refused = new ConcurrentHashMap<>();
        /** Counted down when this Admin is asked for offsets, and when it is asked to describe topics (once armed). */
        volatile CountDownLatch offsetsAsked = new CountDownLatch(0);

        volatile CountDownLatch topicsAsked = new CountDownLatch(0);
        /** When set, this Admin's offsets and topic descriptions are answered once that Admin was asked for its own. */
        volatile CountingAdmin answersAfter;

        /** From now on, this Admin answers only once {@code other} was asked for the same. */
        void answerAfter(CountingAdmin other) {
            other.offsetsAsked = new CountDownLatch(1);
            other.topicsAsked = new CountDownLatch(1);
            answersAfter = other;
        }

        CountingAdmin(List<Node> nodes) {
            super(nodes, nodes.get(0));
            List<TopicPartitionInfo> partitions = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                Node leader = nodes.get(p % 2);
                partitions.add(new TopicPartitionInfo(p, leader, List.of(leader), List.of(leader)));
            }
            addTopic(false, TOPIC, partitions, Map.of());
        }

        @Override
        public synchronized ListOffsetsResult listOffsets(
                Map<TopicPartition, OffsetSpec> topicPartitionOffsets, ListOffsetsOptions options) {
            listOffsetCalls.incrementAndGet();
            offsetsAsked.countDown();
            ListOffsetsResult result = super.listOffsets(topicPartitionOffsets, options);
            if (answersAfter != null) {
                Map<TopicPartition, KafkaFuture<ListOffsetsResult.ListOffsetsResultInfo>> held = new HashMap<>();
                topicPartitionOffsets
                        .keySet()
                        .forEach(tp -> held.put(tp, heldUntil(answersAfter.offsetsAsked, result.partitionResult(tp))));
                return new ListOffsetsResult(held);
            }
            if (refused.isEmpty()) {
                return result;
            }
            Map<TopicPartition, KafkaFuture<ListOffsetsResult.ListOffsetsResultInfo>> answers = new HashMap<>();
            topicPartitionOffsets.keySet().forEach(tp -> {
                if (refused.containsKey(tp)) {
                    KafkaFutureImpl<ListOffsetsResult.ListOffsetsResultInfo> failed = new KafkaFutureImpl<>();
                    failed.completeExceptionally(refused.get(tp)); // as the Admin fails a partition's future
                    answers.put(tp, failed);
                } else {
                    answers.put(tp, result.partitionResult(tp));
                }
            });
            return new ListOffsetsResult(answers);
        }

        @Override
        public synchronized DescribeTopicsResult describeTopics(TopicCollection topics, DescribeTopicsOptions options) {
            topicsAsked.countDown();
            DescribeTopicsResult result = super.describeTopics(topics, options);
            if (answersAfter == null) {
                return result;
            }
            Map<String, KafkaFuture<TopicDescription>> held = new HashMap<>();
            result.topicNameValues()
                    .forEach((name, answer) -> held.put(name, heldUntil(answersAfter.topicsAsked, answer)));
            return new DescribeTopicsResult(null, held) {};
        }

        /** {@code answer}, once {@code asked} is counted down; failed if that does not happen within a second. */
        private <T> KafkaFuture<T> heldUntil(CountDownLatch asked, KafkaFuture<T> answer) {
            KafkaFutureImpl<T> held = new KafkaFutureImpl<>();
            CompletableFuture.runAsync(() -> {
                try {
                    if (asked.await(1, TimeUnit.SECONDS)) {
                        held.complete(answer.get());
                    } else {
                        held.completeExceptionally(new IllegalStateException("the other cluster was not asked"));
                    }
                } catch (Exception e) {
                    held.completeExceptionally(e);
                }
            });
            return held;
        }
    }
}
