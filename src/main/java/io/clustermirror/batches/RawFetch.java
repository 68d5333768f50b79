package io.clustermirror.batches;

import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.WireClient;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;

/** A raw Fetch of one partition from its leader (blocking, or built and read for a request of its own): the batches as stored, for content checks. */
public final class RawFetch {

    private RawFetch() {}

    /** The complete batches the leader returns for a fetch at {@code offset} (the first may start below it). */
    public static List<SourceBatch> batches(
            WireClient client, ClusterView view, TopicPartition tp, long offset, int maxBytes) throws IOException {
        return batches(client, view, tp, offset, maxBytes, 0);
    }

    /** Like {@link #batches(WireClient, ClusterView, TopicPartition, long, int)}, the leader waiting up to {@code maxWaitMs} for data. */
    public static List<SourceBatch> batches(
            WireClient client, ClusterView view, TopicPartition tp, long offset, int maxBytes, int maxWaitMs)
            throws IOException {
        Node leader = view.leaders().get(tp);
        if (leader == null) {
            throw new IOException("no leader known for " + tp);
        }
        var clientResponse = client.call(leader, request(view, tp, offset, maxBytes, maxWaitMs));
        return batches(clientResponse, view, tp, offset);
    }

    /** A Fetch of one partition from {@code offset} (READ_UNCOMMITTED: markers and open transactions included). */
    public static FetchRequest.Builder request(
            ClusterView view, TopicPartition tp, long offset, int maxBytes, int maxWaitMs) throws IOException {
        Uuid topicId = view.topicIds().get(tp.topic());
        if (topicId == null) {
            throw new IOException("no topic id known for " + tp);
        }
        return FetchRequest.Builder.forConsumer(
                        ApiKeys.FETCH.latestVersion(),
                        maxWaitMs,
                        1,
                        Map.of(
                                tp,
                                new FetchRequest.PartitionData(
                                        topicId, offset, -1, maxBytes, Optional.empty(), Optional.empty())))
                .isolationLevel(IsolationLevel.READ_UNCOMMITTED);
    }

    /** The complete batches of an answer to {@link #request}; throws when it carries an error instead. */
    public static List<SourceBatch> batches(
            ClientResponse clientResponse, ClusterView view, TopicPartition tp, long offset) throws IOException {
        FetchResponse response = (FetchResponse) clientResponse.responseBody();
        FetchResponseData.PartitionData data = response.responseData(
                        view.topicNames(), clientResponse.requestHeader().apiVersion())
                .get(tp);
        Errors error = data == null ? Errors.UNKNOWN_SERVER_ERROR : Errors.forCode(data.errorCode());
        if (error != Errors.NONE) {
            throw new IOException("fetch of " + tp + " at " + offset + " failed: " + error.name());
        }
        return SourceBatch.slices((MemoryRecords) FetchResponse.recordsOrFail(data));
    }

    /** The first batch that holds {@code offset} or later. */
    public static Optional<SourceBatch> batchAt(WireClient client, ClusterView view, TopicPartition tp, long offset)
            throws IOException {
        return batches(client, view, tp, offset, 1 << 20).stream()
                .filter(b -> b.lastOffset() >= offset)
                .findFirst();
    }

    /** Same offsets, same count, same attributes and timestamps, byte-identical records (producer fields and CRC aside). */
    public static boolean sameContent(SourceBatch a, SourceBatch b) {
        return a.baseOffset() == b.baseOffset()
                && a.lastOffset() == b.lastOffset()
                && a.recordCount() == b.recordCount()
                && a.bytes().getShort(SourceBatch.ATTRIBUTES_OFFSET)
                        == b.bytes().getShort(SourceBatch.ATTRIBUTES_OFFSET)
                && a.bytes().getLong(SourceBatch.FIRST_TIMESTAMP_OFFSET)
                        == b.bytes().getLong(SourceBatch.FIRST_TIMESTAMP_OFFSET)
                && a.bytes().getLong(SourceBatch.MAX_TIMESTAMP_OFFSET)
                        == b.bytes().getLong(SourceBatch.MAX_TIMESTAMP_OFFSET)
                && a.recordsSection().equals(b.recordsSection());
    }
}
