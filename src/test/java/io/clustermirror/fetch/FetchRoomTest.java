package io.clustermirror.fetch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.WireNetwork;
import io.clustermirror.mirror.MirrorPartition;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;
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
 * A lane's Fetch and its partitions' room, on kafka-clients' {@link MockClient} and a fake clock that only the
 * fetcher's polls move (each poll advances it by its timeout). A partition behind its source whose queue is full gets
 * its room back as soon as its batches are appended; a Fetch of caught-up partitions alone would wait on the broker
 * for {@code FETCH_MAX_WAIT_MS} and hold the lane that long. The destination here takes nothing, so the full queue
 * stays full.
 */
class FetchRoomTest {

    private static final int KiB = 1 << 10;
    private static final Node BROKER = new Node(1, "localhost", 9092);
    private static final Uuid TOPIC_ID = Uuid.randomUuid();
    private static final TopicPartition BEHIND = new TopicPartition("orders", 0);
    private static final TopicPartition OTHER = new TopicPartition("orders", 1);
    private static final ClusterView SOURCE = sourceView(Map.of(BEHIND, BROKER, OTHER, BROKER));

    private final MockTime time = new MockTime(0, 0, 0);
    private final MockClient sourceNetwork = new MockClient(time);
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final List<Sent> sent = new CopyOnWriteArrayList<>();
    private MirrorFetcher fetcher;
    /** Whether the clock stands still (the test moves it) instead of moving by each poll's timeout. */
    private boolean clockStill;

    private record Sent(long atMs, Set<TopicPartition> partitions, int maxWaitMs, int maxBytes) {}

    @AfterEach
    void close() {
        if (fetcher != null) {
            fetcher.close();
        }
        threads.shutdownNow();
    }

    @Test
    void aLaneShouldNotLongPollItsCaughtUpPartitionsWhileAPartitionBehindWaitsForRoom() {
        // Given a first answer that fills orders-0's queue (3.5 of its 4 MiB: less than the 1 MiB a Fetch asks for at
        // least) while its source has more, and finds orders-1 at its source's end; the clock stands still
        clockStill = true;
        whenTheFirstAnswerIs(
                SOURCE, Map.of(BEHIND, answer(fullQueue(), 100), OTHER, answer(MemoryRecords.EMPTY, 0)), () -> {}, 1);

        // Then the next Fetch, of orders-1 alone, goes when the broker would have answered it empty anyway
        // (FETCH_MAX_WAIT_MS after the first answer), not at once to hold the lane for that long
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5)).until(() -> sent.size() == 1);
        time.sleep(FetchLoop.FETCH_MAX_WAIT_MS);
        await().atMost(Duration.ofSeconds(10)).until(() -> sent.size() == 2);
        assertThat(sent.get(1).partitions()).containsExactly(OTHER);
        assertThat(sent.get(1).atMs() - sent.get(0).atMs()).isEqualTo(FetchLoop.FETCH_MAX_WAIT_MS);
    }

    @Test
    void aLaneShouldFetchAtOnceWhenAPartitionItAsksForIsBehindItsSource() {
        // Given the same full queue, but orders-1 behind its source too (it has room); the clock stands still
        clockStill = true;
        whenTheFirstAnswerIs(Map.of(BEHIND, answer(fullQueue(), 100), OTHER, answer(MemoryRecords.EMPTY, 50)));

        // Then the next Fetch goes at once: the broker answers it without waiting
        assertThat(sent.get(1).partitions()).containsExactly(OTHER);
        assertThat(sent.get(1).atMs()).isEqualTo(sent.get(0).atMs());
    }

    @Test
    void aLaneWithNoPartitionWaitingForRoomShouldLongPollAsBefore() {
        // Given both partitions at their source's end; the clock stands still
        clockStill = true;
        whenTheFirstAnswerIs(Map.of(BEHIND, answer(MemoryRecords.EMPTY, 0), OTHER, answer(MemoryRecords.EMPTY, 0)));

        // Then the next Fetch goes at once, and the broker holds it until data comes
        assertThat(sent.get(1).partitions()).containsExactlyInAnyOrder(BEHIND, OTHER);
        assertThat(sent.get(1).atMs()).isEqualTo(sent.get(0).atMs());
        assertThat(sent.get(1).maxWaitMs()).isEqualTo(FetchLoop.FETCH_MAX_WAIT_MS);
        // asking for one partition's fetch size, not the 16 MiB of a Fetch of partitions behind: it holds that much of
        // the instance's budget for queued batches while it waits, as every idle lane of every mirror does
        assertThat(sent.get(0).maxBytes()).isEqualTo(16 * 1024 * KiB);
        assertThat(sent.get(1).maxBytes()).isEqualTo(FetchLoop.PARTITION_FETCH_BYTES);
    }

    @Test
    void aLaneShouldWaitOnlyBrieflyWhilePartitionsAreAboutToJoin() {
        // Given both partitions at their source's end, and a start under way that will add partitions
        whenTheFirstAnswerIs(
                SOURCE,
                Map.of(BEHIND, answer(MemoryRecords.EMPTY, 0), OTHER, answer(MemoryRecords.EMPTY, 0)),
                () -> fetcher.joining());

        // Then the lane's Fetches wait on the broker only briefly: the lane is free when the new partitions come
        assertThat(sent.get(0).maxWaitMs()).isEqualTo(FetchLoop.JOINING_WAIT_MS);
        assertThat(sent.get(1).maxWaitMs()).isEqualTo(FetchLoop.JOINING_WAIT_MS);
    }

    @Test
    void aLaneShouldWaitOnlyBrieflyWhileAJoinedPartitionWaitsForTheViewThatNamesItsLeader() {
        // Given orders-1 just added, with no leader in the source view yet, and orders-0 at its source's end
        whenTheFirstAnswerIs(
                sourceView(Map.of(BEHIND, BROKER)), Map.of(BEHIND, answer(MemoryRecords.EMPTY, 0)), () -> {});

        // Then the lane's Fetch of orders-0 waits on the broker only briefly, so orders-1's first Fetch is not held
        // for up to FETCH_MAX_WAIT_MS behind it once the view names its leader
        assertThat(sent.get(0).partitions()).containsExactly(BEHIND);
        assertThat(sent.get(1).maxWaitMs()).isEqualTo(FetchLoop.JOINING_WAIT_MS);
    }

    /** Both partitions join at offset 0; the first Fetch is answered with {@code first}, the second never. */
    private void whenTheFirstAnswerIs(Map<TopicPartition, FetchResponseData.PartitionData> first) {
        whenTheFirstAnswerIs(SOURCE, first, () -> {});
    }

    /** {@link #whenTheFirstAnswerIs(Map)} with this source view, {@code beforeStart} run after the adds. */
    private void whenTheFirstAnswerIs(
            ClusterView view, Map<TopicPartition, FetchResponseData.PartitionData> first, Runnable beforeStart) {
        whenTheFirstAnswerIs(view, first, beforeStart, 2);
    }

    /** Returns once {@code fetches} Fetches were sent. */
    private void whenTheFirstAnswerIs(
            ClusterView view,
            Map<TopicPartition, FetchResponseData.PartitionData> first,
            Runnable beforeStart,
            int fetches) {
        sourceNetwork.advanceTimeDuringPoll(!clockStill);
        MockClient.RequestMatcher record = body -> {
            FetchRequest fetch = (FetchRequest) body;
            sent.add(new Sent(
                    time.milliseconds(),
                    fetch.fetchData(Map.of(TOPIC_ID, "orders")).keySet().stream()
                            .map(TopicIdPartition::topicPartition)
                            .collect(Collectors.toSet()),
                    fetch.maxWait(),
                    fetch.maxBytes()));
            return true;
        };
        LinkedHashMap<TopicIdPartition, FetchResponseData.PartitionData> data = new LinkedHashMap<>();
        first.forEach((tp, partition) -> data.put(new TopicIdPartition(TOPIC_ID, tp), partition));
        sourceNetwork.prepareResponse(
                record, FetchResponse.of(Errors.NONE, 0, FetchMetadata.INVALID_SESSION_ID, data, List.of()));
        sourceNetwork.prepareResponse(
                record,
                FetchResponse.of(Errors.NONE, 0, FetchMetadata.INVALID_SESSION_ID, new LinkedHashMap<>(), List.of()));
        Fetcher pooled = new Fetcher(0, WireNetwork.over("test", sourceNetwork), threads, null);
        fetcher = DataPlaneThrottleTest.dataPlane(
                pooled,
                view,
                new DataPlaneThrottleTest.NoListener(),
                new ReplicationThrottle(ReplicationThrottle.UNLIMITED, time));
        fetcher.add(new MirrorPartition(BEHIND.topic(), BEHIND.partition()), 0, -1, -1);
        fetcher.add(new MirrorPartition(OTHER.topic(), OTHER.partition()), 0, -1, -1);
        beforeStart.run();
        pooled.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> sent.size() >= fetches);
    }

    /** The source cluster with topic orders, its partitions led as {@code leaders} says. */
    private static ClusterView sourceView(Map<TopicPartition, Node> leaders) {
        return new ClusterView(
                "source-cluster", List.of(BROKER), leaders, Map.of("orders", TOPIC_ID), Map.of(TOPIC_ID, "orders"));
    }

    /** One batch of 3.5 MiB: a queue of 4 MiB holding it has less than 1 MiB free. */
    private static MemoryRecords fullQueue() {
        return MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(new byte[3584 * KiB]));
    }

    private static FetchResponseData.PartitionData answer(MemoryRecords records, long highWatermark) {
        return new FetchResponseData.PartitionData()
                .setHighWatermark(highWatermark)
                .setLogStartOffset(0)
                .setRecords(records);
    }
}
