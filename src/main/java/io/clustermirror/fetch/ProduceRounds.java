package io.clustermirror.fetch;

import io.clustermirror.batches.BatchRestamp;
import io.clustermirror.batches.SourceBatch;
import io.clustermirror.kafka.ClusterView;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.record.DefaultRecordBatch;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.requests.ProduceRequest;

/**
 * The fast path's Produce requests: the next plain batch of every ready partition, restamped in place with the
 * partition's producer id, epoch and next sequence, goes to its destination leader, one batch per partition per
 * request and at most {@code maxRequestBytes} of batches per request (a request always takes one), as many requests as
 * the connection takes. Each round starts one partition further on, and a request that is full leaves the rest for the
 * next one, so no partition is always last. Append thread only.
 */
final class ProduceRounds {

    /** How a request goes out; {@code sent} are its batches by partition, already in flight. */
    @FunctionalInterface
    interface Sender {
        void send(Node node, Map<TopicPartition, FetchPartition.Sent> sent, ProduceRequest.Builder request);
    }

    private final Pipeline pipeline;
    private final int maxRequestBytes;
    private final int maxInFlightPerPartition;
    private final Sender sender;
    private int rotation;

    ProduceRounds(Pipeline pipeline, int maxRequestBytes, int maxInFlightPerPartition, Sender sender) {
        this.pipeline = pipeline;
        this.maxRequestBytes = maxRequestBytes;
        this.maxInFlightPerPartition = maxInFlightPerPartition;
        this.sender = sender;
    }

    /** One round over the partitions: what can be sent now is. */
    void send(Collection<FetchPartition> partitions) {
        ClusterView view = pipeline.destinationView;
        Map<Node, List<FetchPartition>> byNode = new HashMap<>();
        for (FetchPartition state : partitions) {
            if (state.identity == null
                    || state.inFlight.size() >= maxInFlightPerPartition
                    || !state.unconfirmed.isEmpty() // lost answers go first, alone (LostAnswers)
                    || state.transactionalInFlight()
                    || !state.plainSendable()) {
                continue;
            }
            Node leader = view.leaders().get(state.tp);
            if (leader == null || !view.topicIds().containsKey(state.tp.topic())) {
                pipeline.leaderless(state);
                continue;
            }
            state.leaderless.clear();
            // each partition pinned to one of the fetcher's connections to its leader
            // (AppendLoop.CONNECTIONS_PER_BROKER)
            byNode.computeIfAbsent(pipeline.pinned(leader, state.tp), n -> new ArrayList<>())
                    .add(state);
        }
        rotation++;
        byNode.forEach((node, candidates) -> {
            int[] next = {Math.floorMod(rotation, candidates.size())};
            while (pipeline.destination.ready(node)) {
                Map<TopicPartition, FetchPartition.Sent> sent = new HashMap<>();
                ProduceRequestData data = request(view, candidates, next, sent);
                if (sent.isEmpty()) {
                    return;
                }
                sender.send(node, sent, ProduceRequest.builder(data));
            }
        });
    }

    /** One request from the candidates, starting at {@code next[0]} and leaving it where the next request starts. */
    private ProduceRequestData request(
            ClusterView view,
            List<FetchPartition> candidates,
            int[] next,
            Map<TopicPartition, FetchPartition.Sent> sent) {
        Map<String, ProduceRequestData.TopicProduceData> topics = new HashMap<>();
        int bytesLeft = maxRequestBytes;
        for (int visited = 0; visited < candidates.size(); visited++) {
            FetchPartition state = candidates.get(next[0]);
            SourceBatch batch = state.inFlight.size() >= maxInFlightPerPartition
                    ? null
                    : state.pollPlain(sent.isEmpty() ? Integer.MAX_VALUE : bytesLeft);
            if (batch == null
                    && !sent.isEmpty()
                    && state.inFlight.size() < maxInFlightPerPartition
                    && state.plainSendable()) {
                break; // its next batch does not fit: the next request starts with it
            }
            next[0] = (next[0] + 1) % candidates.size();
            if (batch == null) {
                continue;
            }
            bytesLeft -= batch.sizeInBytes();
            ByteBuffer bytes = BatchRestamp.restampInPlace(batch, state.identity, state.nextSequence);
            state.nextSequence = DefaultRecordBatch.incrementSequence(state.nextSequence, batch.recordCount());
            FetchPartition.Sent entry = new FetchPartition.Sent(batch, state.generation, null);
            state.inFlight.add(entry);
            sent.put(state.tp, entry);
            topics.computeIfAbsent(
                            state.tp.topic(),
                            t -> new ProduceRequestData.TopicProduceData()
                                    .setName(t)
                                    .setTopicId(view.topicIds().get(t)))
                    .partitionData()
                    .add(new ProduceRequestData.PartitionProduceData()
                            .setIndex(state.tp.partition())
                            .setRecords(MemoryRecords.readableRecords(bytes)));
        }
        ProduceRequestData.TopicProduceDataCollection collection = new ProduceRequestData.TopicProduceDataCollection();
        topics.values().forEach(collection::add);
        return new ProduceRequestData()
                .setAcks((short) -1)
                .setTimeoutMs((int) Math.max(1000, pipeline.timeoutMs / 2))
                .setTopicData(collection);
    }
}
