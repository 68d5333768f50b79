package io.clustermirror.fetch;

import io.clustermirror.mirror.MirrorPartition;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.common.IsolationLevel;
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
 * LOG_TRUNCATION (DESIGN §4.3): makes the destination partition a prefix of the source, or says why it
 * cannot. An empty destination is aligned to the source log start with filler records and
 * DeleteRecords; a non-empty one is checked by content (its last batch against the source's batch at
 * the same offsets, either side possibly cleaned since: {@link BatchAgreement}). Blocking: runs on a worker thread, with its own connections.
 */
public final class LogTruncation implements PrefixCheck {

    private static final Logger LOGGER = Logger.getLogger(LogTruncation.class);

    /** The result: where mirroring starts, or why it cannot. */
    public sealed interface Outcome {}

    /**
     * The destination is a prefix of the source ending at {@code startOffset}; {@code sourceEpoch} is the source
     * leader epoch of the batch just before it (-1: none or unknown), for the fetches that continue from there.
     */
    public record Ready(long startOffset, int sourceEpoch) implements Outcome {}

    /** The destination cannot be made a prefix without recreating it. */
    public record Diverged(String reason) implements Outcome {}

    /** The partition cannot be mirrored yet for a reason recreating the destination would not change. */
    public record Unsupported(String reason) implements Outcome {}

    private final Admin sourceAdmin;
    private final Admin destinationAdmin;
    private final Map<String, ?> sourceConnection;
    private final Map<String, ?> destinationConnection;
    private final int timeoutMs;
    private final String expectedSourceClusterId;

    /** A source and a destination client for one truncation or divergence read at a time, kept for the next. */
    private record Clients(WireClient source, WireClient destination) {}

    /** The idle clients; a truncation takes one pair (or makes one) and gives it back. */
    private final Deque<Clients> idle = new ArrayDeque<>();

    private boolean closed;

    public LogTruncation(
            String expectedSourceClusterId,
            Admin sourceAdmin,
            Admin destinationAdmin,
            Map<String, ?> sourceConnection,
            Map<String, ?> destinationConnection,
            int timeoutMs) {
        this.expectedSourceClusterId = expectedSourceClusterId;
        this.sourceAdmin = sourceAdmin;
        this.destinationAdmin = destinationAdmin;
        this.sourceConnection = sourceConnection;
        this.destinationConnection = destinationConnection;
        this.timeoutMs = timeoutMs;
    }

    /**
     * @param progress receives human-readable progress for describe
     */
    @Override
    public Outcome run(String mirror, MirrorPartition partition, Consumer<String> progress) throws Exception {
        TopicPartition tp = new TopicPartition(partition.topic(), partition.partition());
        long sourceStart = offset(sourceAdmin, tp, OffsetSpec.earliest());
        long sourceEnd = offset(sourceAdmin, tp, OffsetSpec.latest());
        long destinationStart = offset(destinationAdmin, tp, OffsetSpec.earliest());
        long destinationEnd = offset(destinationAdmin, tp, OffsetSpec.latest());
        progress.accept("source [" + sourceStart + ", " + sourceEnd + "), destination [" + destinationStart + ", "
                + destinationEnd + ")");
        Clients clients = checkOut(mirror);
        try {
            WireClient source = clients.source();
            WireClient destination = clients.destination();
            ClusterView sourceView = view(sourceAdmin, source, tp);
            if (expectedSourceClusterId != null && !expectedSourceClusterId.equals(sourceView.clusterId())) {
                throw new IllegalStateException("the source answers with cluster id " + sourceView.clusterId()
                        + ", not " + expectedSourceClusterId);
            }
            ClusterView destinationView = view(destinationAdmin, destination, tp);
            if (destinationEnd == destinationStart) {
                return alignEmpty(
                        tp,
                        sourceStart,
                        sourceEnd,
                        destinationEnd,
                        source,
                        sourceView,
                        destination,
                        destinationView,
                        progress);
            }
            if (destinationEnd > sourceEnd) {
                return new Diverged("destination log end " + destinationEnd + " is beyond the source high watermark "
                        + sourceEnd
                        + tail(
                                divergence(
                                        tp,
                                        Math.max(sourceStart, destinationStart),
                                        sourceEnd,
                                        source,
                                        sourceView,
                                        destination,
                                        destinationView),
                                destinationEnd));
            }
            if (destinationEnd < sourceStart) {
                return new Diverged("source deleted offsets [" + destinationEnd + ", " + sourceStart
                        + ") before they were mirrored");
            }
            Optional<SourceBatch> last = RawFetch.batchAt(destination, destinationView, tp, destinationEnd - 1);
            if (last.isEmpty() || last.get().lastOffset() != destinationEnd - 1) {
                return new Diverged("cannot read the destination's last batch before offset " + destinationEnd);
            }
            Optional<SourceBatch> same =
                    RawFetch.batchAt(source, sourceView, tp, last.get().baseOffset());
            if (same.isEmpty() || !BatchAgreement.agrees(last.get(), same.get())) {
                return new Diverged("destination batch [" + last.get().baseOffset() + ".."
                        + last.get().lastOffset() + "] differs from the source at the same offsets"
                        + tail(
                                divergence(
                                        tp,
                                        Math.max(sourceStart, destinationStart),
                                        destinationEnd,
                                        source,
                                        sourceView,
                                        destination,
                                        destinationView),
                                destinationEnd));
            }
            progress.accept("destination is a prefix of the source up to " + destinationEnd);
            // the epoch of the source batch that ends where the destination does; unknown when the source's cleaner
            // removed it
            int epoch = same.get().baseOffset() == last.get().baseOffset()
                    ? same.get().partitionLeaderEpoch()
                    : -1;
            return new Ready(destinationEnd, epoch);
        } finally {
            checkIn(clients);
        }
    }

    /** The destination's records the source does not have: offsets [from, to). */
    public record DivergentRange(long from, long to) {
        public long records() {
            return to - from;
        }
    }

    /**
     * Where each destination partition stops being a copy of the source: its records from the first offset where the two
     * logs differ to its end. A partition that is a prefix of the source (or holds only offsets the source has deleted,
     * which cannot be compared) is left out. One offset look-up per cluster and one pair of clients for all of them.
     * Blocking.
     */
    public Map<MirrorPartition, DivergentRange> divergentRanges(String mirror, Collection<MirrorPartition> partitions)
            throws Exception {
        Map<MirrorPartition, DivergentRange> ranges = new TreeMap<>();
        if (partitions.isEmpty()) {
            return ranges;
        }
        List<TopicPartition> tps = partitions.stream()
                .map(p -> new TopicPartition(p.topic(), p.partition()))
                .toList();
        Map<TopicPartition, Long> sourceStarts = offsets(sourceAdmin, tps, OffsetSpec.earliest());
        Map<TopicPartition, Long> sourceEnds = offsets(sourceAdmin, tps, OffsetSpec.latest());
        Map<TopicPartition, Long> destinationStarts = offsets(destinationAdmin, tps, OffsetSpec.earliest());
        Map<TopicPartition, Long> destinationEnds = offsets(destinationAdmin, tps, OffsetSpec.latest());
        Set<String> topics = new TreeSet<>();
        tps.forEach(tp -> topics.add(tp.topic()));
        Clients clients = checkOut(mirror);
        try {
            WireClient source = clients.source();
            WireClient destination = clients.destination();
            ClusterView sourceView = view(sourceAdmin, source, topics);
            ClusterView destinationView = view(destinationAdmin, destination, topics);
            for (TopicPartition tp : tps) {
                long sourceStart = sourceStarts.get(tp);
                long destinationStart = destinationStarts.get(tp);
                long destinationEnd = destinationEnds.get(tp);
                if (destinationEnd == destinationStart || destinationEnd <= sourceStart) {
                    continue;
                }
                long from = divergence(
                        tp,
                        Math.max(sourceStart, destinationStart),
                        Math.min(sourceEnds.get(tp), destinationEnd),
                        source,
                        sourceView,
                        destination,
                        destinationView);
                if (from < destinationEnd) {
                    ranges.put(
                            new MirrorPartition(tp.topic(), tp.partition()), new DivergentRange(from, destinationEnd));
                }
            }
        } finally {
            checkIn(clients);
        }
        return ranges;
    }

    /**
     * The first offset in [from, to] where the destination's batch is not the source's, by binary search over batches:
     * before the point of divergence the logs hold the same batches, from it on they do not; {@code to} when they agree
     * throughout.
     */
    private static long divergence(
            TopicPartition tp,
            long from,
            long to,
            WireClient source,
            ClusterView sourceView,
            WireClient destination,
            ClusterView destinationView)
            throws IOException {
        long lo = from;
        long hi = to;
        while (lo < hi) {
            long mid = lo + (hi - lo) / 2;
            Optional<SourceBatch> ours = RawFetch.batchAt(destination, destinationView, tp, mid);
            if (ours.isEmpty()) {
                hi = mid;
                continue;
            }
            Optional<SourceBatch> theirs =
                    RawFetch.batchAt(source, sourceView, tp, ours.get().baseOffset());
            if (theirs.isPresent() && BatchAgreement.agrees(ours.get(), theirs.get())) {
                lo = ours.get().lastOffset() + 1;
            } else {
                hi = Math.max(lo, Math.min(mid, ours.get().baseOffset()));
            }
        }
        return Math.min(lo, to);
    }

    private static String tail(long divergence, long destinationEnd) {
        return ": the destination holds " + (destinationEnd - divergence) + " record offset(s) [" + divergence + ", "
                + destinationEnd + ") that the source does not have";
    }

    private Outcome alignEmpty(
            TopicPartition tp,
            long sourceStart,
            long sourceEnd,
            long destinationEnd,
            WireClient source,
            ClusterView sourceView,
            WireClient destination,
            ClusterView destinationView,
            Consumer<String> progress)
            throws Exception {
        if (destinationEnd > sourceStart) {
            return new Diverged("the destination is empty but its log starts at " + destinationEnd
                    + ", after the source log start " + sourceStart + "; it cannot be filled backwards");
        }
        if (destinationEnd == sourceStart) {
            // the note describe shows for the step's outcome, not the offsets read before it
            progress.accept("destination is empty at the source log start " + sourceStart + ": mirroring starts there");
            return new Ready(destinationEnd, -1);
        }
        Optional<SourceBatch> first =
                sourceStart < sourceEnd ? RawFetch.batchAt(source, sourceView, tp, sourceStart) : Optional.empty();
        long fillTo = first.map(SourceBatch::baseOffset).orElse(sourceStart);
        if (fillTo < destinationEnd) {
            return new Diverged(
                    "source batch at " + fillTo + " starts before the destination log end " + destinationEnd);
        }
        Node leader = destinationView.leaders().get(tp);
        ProducerIdentity identity = destination.initProducerId(destinationView.anyNode());
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
            progress.accept("aligning to the source log start " + sourceStart + ": " + end + " of " + fillTo
                    + " offsets filled");
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
        if (compactedOnly(tp.topic())) {
            LOGGER.infof(
                    "%s: compacted topic, %d filler tombstones below %d stay until the cleaner removes them",
                    tp, fillTo - destinationEnd, sourceStart);
        } else {
            destinationAdmin
                    .deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(sourceStart)))
                    .all()
                    .get(timeoutMs, TimeUnit.MILLISECONDS);
        }
        progress.accept("aligned to the source log start " + sourceStart);
        return new Ready(startOffset, sourceEpoch);
    }

    /**
     * Whether the destination topic is compacted without deletion, where brokers refuse DeleteRecords: read from the
     * destination each time, since its policy follows the source's (metadata sync) and no cache survives a restart.
     */
    private boolean compactedOnly(String topic) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        String policy = destinationAdmin
                .describeConfigs(List.of(resource))
                .all()
                .get(timeoutMs, TimeUnit.MILLISECONDS)
                .get(resource)
                .get(TopicConfig.CLEANUP_POLICY_CONFIG)
                .value();
        return policy.contains(TopicConfig.CLEANUP_POLICY_COMPACT)
                && !policy.contains(TopicConfig.CLEANUP_POLICY_DELETE);
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

    /**
     * A pair of clients for one truncation: an idle one (its connections still open) or a new one, so that a mirror's
     * truncations make as many network clients as run at once (its workers), not one pair each.
     */
    private synchronized Clients checkOut(String mirror) {
        if (closed) {
            throw new IllegalStateException("the mirror's runtime is closed");
        }
        Clients clients = idle.poll();
        return clients != null
                ? clients
                : new Clients(
                        WireClient.create("cluster-mirror-" + mirror + "-truncation-src", sourceConnection, timeoutMs),
                        WireClient.create(
                                "cluster-mirror-" + mirror + "-truncation-dst", destinationConnection, timeoutMs));
    }

    private synchronized void checkIn(Clients clients) {
        if (closed) {
            close(clients);
        } else {
            idle.push(clients);
        }
    }

    private static void close(Clients clients) {
        clients.source().close();
        clients.destination().close();
    }

    /** Closes the idle clients, and those in use once they are given back. */
    public synchronized void close() {
        closed = true;
        idle.forEach(LogTruncation::close);
        idle.clear();
    }

    private ClusterView view(Admin admin, WireClient client, TopicPartition tp) throws Exception {
        return view(admin, client, Set.of(tp.topic()));
    }

    private ClusterView view(Admin admin, WireClient client, Set<String> topics) throws Exception {
        return ClusterView.load(admin, topics, timeoutMs);
    }

    /**
     * EPOCH_FENCING's check: the source leader said the epoch last fetched ends at {@code epochEndOffset} on its
     * side. A destination ending beyond that holds records the source lost, whatever they look like (a marker of the
     * same kind at the same offset in the new history proves nothing); else the usual prefix check decides.
     */
    @Override
    public Outcome afterEpochFencing(
            String mirror, MirrorPartition partition, long epochEndOffset, Consumer<String> progress) throws Exception {
        long destinationEnd = offset(
                destinationAdmin, new TopicPartition(partition.topic(), partition.partition()), OffsetSpec.latest());
        if (destinationEnd > epochEndOffset) {
            return new Diverged("the destination holds offsets [" + epochEndOffset + ", " + destinationEnd
                    + ") that the source no " + "longer has");
        }
        return run(mirror, partition, progress);
    }

    private Map<TopicPartition, Long> offsets(Admin admin, List<TopicPartition> tps, OffsetSpec spec) throws Exception {
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        tps.forEach(tp -> request.put(tp, spec));
        Map<TopicPartition, Long> offsets = new HashMap<>();
        admin.listOffsets(
                        request, new org.apache.kafka.clients.admin.ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED))
                .all()
                .get(timeoutMs, TimeUnit.MILLISECONDS)
                .forEach((tp, info) -> offsets.put(tp, info.offset()));
        return offsets;
    }

    private long offset(Admin admin, TopicPartition tp, OffsetSpec spec) throws Exception {
        return offsets(admin, List.of(tp), spec).get(tp);
    }
}
