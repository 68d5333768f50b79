package io.clustermirror.verification;

import io.clustermirror.batches.RawFetch;
import io.clustermirror.batches.SourceBatch;
import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.WireClient;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;

/**
 * A verification's reads of one cluster: the batches of many partitions, each from its own offset, with one Fetch per
 * leader and at most {@link #PARTITIONS_PER_FETCH} partitions a Fetch (READ_UNCOMMITTED: open transactions, aborted
 * data and markers included), so that an answer holds at most {@code PARTITIONS_PER_FETCH} times the partition cap. A
 * partition whose part of a grouped answer holds no complete batch (its first batch was above the partition cap and
 * it was not the answer's first non-empty part, KIP-74) is read again alone, where the broker returns a first batch
 * whole: so an empty answer means that the log holds nothing from the offset to its high watermark. Blocking; the
 * caller's thread.
 */
final class VerificationReads {

    /** Partitions a Fetch asks for: with {@link #partitionMaxBytes} each, what one answer can bring. */
    static final int PARTITIONS_PER_FETCH = 16;

    private VerificationReads() {}

    /**
     * One partition's answer: its complete batches (from the offset asked, the first may start below), the leader's high
     * watermark when the answer said it (-1 otherwise), or a failure.
     */
    record Answer(List<SourceBatch> batches, long bytes, IOException failure, long highWatermark) {

        static Answer failed(IOException failure) {
            return new Answer(List.of(), 0, failure, -1);
        }

        /**
         * Whether the answer settles what this side holds in {@code [offset, to)}: it brought a batch there, or the
         * leader's high watermark is at or above {@code to}, so that bringing none means the log holds none there (a
         * cleaner removed them). A leader whose high watermark is below {@code to} (a new leader right after a
         * failover, whose high watermark has not caught up yet) settles nothing: an empty answer from it is not "none".
         */
        boolean settles(long offset, long to) {
            return highWatermark >= to || batches.stream().anyMatch(b -> b.lastOffset() >= offset);
        }
    }

    /** The batches at each partition's offset; {@code maxBytes} a partition. */
    static Map<TopicPartition, Answer> read(
            WireClient client, ClusterView view, Map<TopicPartition, Long> offsets, int maxBytes) {
        Map<TopicPartition, Answer> answers = new HashMap<>();
        Map<Node, List<TopicPartition>> byLeader = new LinkedHashMap<>();
        offsets.keySet().forEach(tp -> {
            Node leader = view.leaders().get(tp);
            if (leader == null || view.topicIds().get(tp.topic()) == null) {
                answers.put(tp, Answer.failed(new IOException("no leader known for " + tp)));
            } else {
                byLeader.computeIfAbsent(leader, n -> new ArrayList<>()).add(tp);
            }
        });
        byLeader.forEach((leader, partitions) -> {
            for (int i = 0; i < partitions.size(); i += PARTITIONS_PER_FETCH) {
                Map<TopicPartition, Long> chunk = new LinkedHashMap<>();
                partitions
                        .subList(i, Math.min(partitions.size(), i + PARTITIONS_PER_FETCH))
                        .forEach(tp -> chunk.put(tp, offsets.get(tp)));
                readChunk(client, view, leader, chunk, maxBytes, answers);
            }
        });
        return answers;
    }

    private static void readChunk(
            WireClient client,
            ClusterView view,
            Node leader,
            Map<TopicPartition, Long> chunk,
            int maxBytes,
            Map<TopicPartition, Answer> answers) {
        Map<TopicPartition, FetchResponseData.PartitionData> data;
        try {
            ClientResponse response = client.call(leader, fetch(view, chunk, maxBytes));
            data = ((FetchResponse) response.responseBody())
                    .responseData(view.topicNames(), response.requestHeader().apiVersion());
        } catch (IOException e) {
            chunk.keySet().forEach(tp -> answers.put(tp, Answer.failed(e)));
            return;
        }
        chunk.forEach((tp, offset) -> {
            FetchResponseData.PartitionData part = data.get(tp);
            Errors error = part == null ? Errors.UNKNOWN_SERVER_ERROR : Errors.forCode(part.errorCode());
            if (error != Errors.NONE) {
                answers.put(
                        tp,
                        Answer.failed(
                                new IOException("fetch of " + tp + " at " + offset + " failed: " + error.name())));
                return;
            }
            MemoryRecords records = (MemoryRecords) FetchResponse.recordsOrFail(part);
            List<SourceBatch> batches = SourceBatch.slices(records);
            boolean complete = batches.stream().anyMatch(b -> b.lastOffset() >= offset);
            if (complete || (chunk.size() == 1 && records.sizeInBytes() == 0) || part.highWatermark() <= offset) {
                answers.put(tp, new Answer(batches, records.sizeInBytes(), null, part.highWatermark()));
                return;
            }
            try { // cut by the answer's caps: alone, the broker returns the first batch whole
                List<SourceBatch> alone = RawFetch.batches(client, view, tp, offset, maxBytes);
                answers.put(
                        tp,
                        new Answer(
                                alone,
                                alone.stream()
                                        .mapToLong(SourceBatch::sizeInBytes)
                                        .sum(),
                                null,
                                part.highWatermark()));
            } catch (IOException e) {
                answers.put(tp, Answer.failed(e));
            }
        });
    }

    /** One Fetch of {@code offsets}' partitions (one leader), each at its offset. Pure. */
    static FetchRequest.Builder fetch(ClusterView view, Map<TopicPartition, Long> offsets, int maxBytes) {
        Map<TopicPartition, FetchRequest.PartitionData> partitions = new LinkedHashMap<>();
        offsets.forEach((tp, offset) -> partitions.put(
                tp,
                new FetchRequest.PartitionData(
                        view.topicIds().get(tp.topic()), offset, -1, maxBytes, Optional.empty(), Optional.empty())));
        return FetchRequest.Builder.forConsumer(ApiKeys.FETCH.latestVersion(), 0, 1, partitions)
                .isolationLevel(IsolationLevel.READ_UNCOMMITTED)
                .setMaxBytes(maxBytes * PARTITIONS_PER_FETCH);
    }
}
