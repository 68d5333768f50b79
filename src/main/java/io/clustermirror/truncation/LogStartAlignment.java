package io.clustermirror.truncation;

import io.clustermirror.batches.BatchContinuity;
import io.clustermirror.batches.BatchRestamp;
import io.clustermirror.batches.FillerBatches;
import io.clustermirror.batches.OneBatchProduce;
import io.clustermirror.batches.SourceBatch;
import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.ProducerIdentity;
import io.clustermirror.kafka.WireClient;
import io.clustermirror.mirror.TruncationProgress.Step;
import io.clustermirror.truncation.LogTruncation.Diverged;
import io.clustermirror.truncation.LogTruncation.Outcome;
import io.clustermirror.truncation.LogTruncation.Ready;
import io.clustermirror.truncation.LogTruncation.Unsupported;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.DefaultRecordBatch;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.jboss.logging.Logger;

/**
 * LOG_TRUNCATION's LOG_START_ALIGNMENT step (DESIGN §4.3): an empty destination that starts before the source's log
 * start gets filler records up to the source's first batch, then DeleteRecords up to the log start, so that its
 * offsets line up with the source's before mirroring begins. The only part of LOG_TRUNCATION that writes to the
 * destination. Blocking, on the worker thread of the batch ({@link LogTruncation#check}), over its destination client.
 */
final class LogStartAlignment {

    private static final Logger LOGGER = Logger.getLogger(LogStartAlignment.class);

    private final Admin destinationAdmin;
    private final int timeoutMs;

    LogStartAlignment(Admin destinationAdmin, int timeoutMs) {
        this.destinationAdmin = destinationAdmin;
        this.timeoutMs = timeoutMs;
    }

    /**
     * Aligns empty destinations that start before the source's log start: filler records up to the source's first
     * batch (and that batch, when the source log starts inside it), then DeleteRecords up to the source log start. The
     * fills are per partition under one producer id for the batch (sequences are per partition); the cleanup policies
     * are read in one DescribeConfigs and the DeleteRecords sent as one call.
     */
    void align(List<TruncationWork> empty, WireClient destination, ClusterView destinationView) {
        Map<TruncationWork, Ready> aligned = new LinkedHashMap<>();
        ProducerIdentity identity = null;
        for (TruncationWork w : empty) {
            if (!w.open()) {
                continue;
            }
            try {
                if (identity == null && fillTo(w) >= w.destinationEnd) {
                    identity = destination.initProducerId(destinationView.anyNode());
                }
                Outcome filled = fill(w, identity, destination, destinationView);
                if (filled instanceof Ready ready) {
                    aligned.put(w, ready);
                } else {
                    w.outcome = filled;
                }
            } catch (Exception e) {
                w.fail(e);
            }
        }
        if (aligned.isEmpty()) {
            return;
        }
        Map<String, TruncationReads.Read<Boolean>> compacted =
                compactedOnly(aligned.keySet().stream().map(w -> w.tp.topic()).toList());
        Map<TopicPartition, RecordsToDelete> deletions = new LinkedHashMap<>();
        for (TruncationWork w : aligned.keySet()) {
            TruncationReads.Read<Boolean> policy = compacted.get(w.tp.topic());
            if (policy.failed()) {
                w.fail(policy.failure());
            } else if (policy.value()) {
                LOGGER.infof(
                        "%s: compacted topic, %d filler tombstones below %d stay until the cleaner removes them",
                        w.tp, fillTo(w) - w.destinationEnd, w.sourceStart);
            } else {
                deletions.put(w.tp, RecordsToDelete.beforeOffset(w.sourceStart));
            }
        }
        var deleted = deletions.isEmpty()
                ? null
                : destinationAdmin.deleteRecords(deletions).lowWatermarks();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        aligned.forEach((w, ready) -> {
            if (!w.open()) {
                return;
            }
            try {
                if (deletions.containsKey(w.tp)) {
                    deleted.get(w.tp).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                }
                w.note(Step.LOG_START_ALIGNMENT, true, Math.max(0, w.sourceStart - w.destinationEnd));
                w.outcome = ready;
            } catch (Exception e) {
                w.fail(e);
            }
        });
    }

    /** Where the fillers of an empty destination end: the source's first batch, or its log start without one. */
    private static long fillTo(TruncationWork w) {
        return w.batch.map(SourceBatch::baseOffset).orElse(w.sourceStart);
    }

    /**
     * Fills one empty destination up to the source's first batch ({@code w.batch}); Ready once the fillers (and the
     * first batch's part below the log start) are in, before DeleteRecords.
     */
    private Outcome fill(
            TruncationWork w, ProducerIdentity identity, WireClient destination, ClusterView destinationView)
            throws Exception {
        TopicPartition tp = w.tp;
        Optional<SourceBatch> first = w.batch;
        long sourceStart = w.sourceStart;
        long destinationEnd = w.destinationEnd;
        long fillTo = fillTo(w);
        if (fillTo < destinationEnd) {
            return new Diverged(
                    "source batch at " + fillTo + " starts before the destination log end " + destinationEnd);
        }
        Node leader = destinationView.leaders().get(tp);
        int sequence = 0;
        long end = destinationEnd;
        SourceBatch full = null;
        while (end < fillTo) {
            int count = (int) Math.min(FillerBatches.MAX_RECORDS_PER_BATCH, fillTo - end);
            SourceBatch fillers = count == FillerBatches.MAX_RECORDS_PER_BATCH
                    ? (full == null ? (full = FillerBatches.of(count)) : full)
                    : FillerBatches.of(count);
            append(destination, destinationView, leader, tp, fillers, end, identity, sequence);
            sequence = DefaultRecordBatch.incrementSequence(sequence, count);
            end += count;
            w.note(Step.LOG_START_ALIGNMENT, false, end - destinationEnd);
        }
        long startOffset = fillTo;
        int sourceEpoch = -1;
        if (first.isPresent() && fillTo < sourceStart) {
            // the source log starts inside its first batch: that batch goes too, so that DeleteRecords can reach the
            // log start
            BatchContinuity.Plan plan = BatchContinuity.plan(first.get(), fillTo);
            if (plan.isBlocked()) {
                return new Unsupported(plan.blocked());
            }
            if (first.get().transactional()) {
                return new Unsupported("the source log starts at " + sourceStart + ", inside transactional batch ["
                        + first.get().baseOffset() + ".." + first.get().lastOffset()
                        + "]: that transaction cannot be replayed from its middle");
            }
            for (SourceBatch batch : plan.batches()) {
                append(destination, destinationView, leader, tp, batch, batch.baseOffset(), identity, sequence);
                sequence = DefaultRecordBatch.incrementSequence(sequence, batch.recordCount());
            }
            startOffset = plan.nextOffset();
            sourceEpoch = first.get().partitionLeaderEpoch();
        }
        return new Ready(startOffset, sourceEpoch, w.sourceEnd);
    }

    /**
     * Whether each destination topic is compacted without deletion, where brokers refuse DeleteRecords: read from the
     * destination each time (one DescribeConfigs for all), since its policy follows the source's (metadata sync) and no
     * cache survives a restart.
     */
    private Map<String, TruncationReads.Read<Boolean>> compactedOnly(Collection<String> topics) {
        Map<String, ConfigResource> resources = new TreeMap<>();
        topics.forEach(t -> resources.put(t, new ConfigResource(ConfigResource.Type.TOPIC, t)));
        var described = destinationAdmin.describeConfigs(resources.values()).values();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        Map<String, TruncationReads.Read<Boolean>> policies = new HashMap<>();
        resources.forEach((topic, resource) -> {
            try {
                String policy = described
                        .get(resource)
                        .get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)
                        .get(TopicConfig.CLEANUP_POLICY_CONFIG)
                        .value();
                policies.put(
                        topic,
                        TruncationReads.Read.of(policy.contains(TopicConfig.CLEANUP_POLICY_COMPACT)
                                && !policy.contains(TopicConfig.CLEANUP_POLICY_DELETE)));
            } catch (Exception e) {
                policies.put(topic, TruncationReads.Read.failed(e));
            }
        });
        return policies;
    }

    private void append(
            WireClient destination,
            ClusterView view,
            Node leader,
            TopicPartition tp,
            SourceBatch batch,
            long expectedOffset,
            ProducerIdentity identity,
            int sequence)
            throws IOException {
        ByteBuffer bytes = BatchRestamp.restamp(batch, identity, sequence);
        ProduceResponse response = (ProduceResponse) destination
                .call(leader, ProduceRequest.builder(OneBatchProduce.request(view, tp, bytes, null, timeoutMs)))
                .responseBody();
        ProduceResponseData.PartitionProduceResponse result = response.data()
                .responses()
                .iterator()
                .next()
                .partitionResponses()
                .get(0);
        Errors error = Errors.forCode(result.errorCode());
        if (error != Errors.NONE) {
            throw new IOException("appending to " + tp + " at " + expectedOffset + " failed: " + error.name() + " "
                    + (result.errorMessage() == null ? error.message() : result.errorMessage()));
        }
        if (result.baseOffset() != expectedOffset) {
            throw new IOException("batch for source offset " + expectedOffset + " landed at destination offset "
                    + result.baseOffset() + ": the destination was written by another producer");
        }
    }
}
