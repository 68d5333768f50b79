package io.clustermirror.truncation;

import io.clustermirror.batches.SourceBatch;
import io.clustermirror.kafka.ClusterView;
import io.clustermirror.mirror.MirrorPartition;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartition;

/**
 * The timestamps of source records at given offsets, for the recovery point (issue 21): {@link
 * SourceBatch#recordTimestamp} of the batch holding each offset (or of the first batch after it, where compaction
 * removed the record), read with LOG_TRUNCATION's batched reads, one Fetch per source leader, on the mirror's pooled
 * source clients (no client of its own).
 */
public final class SourceTimestamps {

    private final LogTruncation truncation;
    private final Admin sourceAdmin;
    private final int timeoutMs;

    public SourceTimestamps(LogTruncation truncation, Admin sourceAdmin, int timeoutMs) {
        this.truncation = truncation;
        this.sourceAdmin = sourceAdmin;
        this.timeoutMs = timeoutMs;
    }

    /**
     * The timestamp at each partition's offset; a partition that could not be read, or holds nothing at or above the
     * offset, is left out. Blocking.
     */
    public Map<MirrorPartition, Long> at(String mirror, Map<MirrorPartition, Long> offsets) throws Exception {
        Map<TopicPartition, Long> request = new LinkedHashMap<>();
        Map<TopicPartition, MirrorPartition> partitions = new HashMap<>();
        Set<String> topics = new TreeSet<>();
        offsets.forEach((p, offset) -> {
            TopicPartition tp = new TopicPartition(p.topic(), p.partition());
            request.put(tp, offset);
            partitions.put(tp, p);
            topics.add(p.topic());
        });
        ClusterView view = TruncationReads.view(sourceAdmin, topics, timeoutMs, new HashMap<>());
        Map<MirrorPartition, Long> timestamps = new HashMap<>();
        truncation
                .withSourceClient(mirror, source -> TruncationReads.batchesAt(source, view, request))
                .forEach((tp, read) -> {
                    if (!read.failed() && read.value().isPresent()) {
                        timestamps.put(partitions.get(tp), read.value().get().recordTimestamp());
                    }
                });
        return timestamps;
    }
}
