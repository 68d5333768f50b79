package io.clustermirror.topics;

import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.topics.OffsetLookup.Offsets;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeProducersResult.PartitionProducerState;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnsupportedVersionException;

/**
 * How far a mirror has drained its partitions, read from both clusters at once: the source's log end (and leader epoch)
 * and its oldest open transaction, the destination's log end. A partition is drained when both ends are equal and no
 * source transaction is open on it. Blocking; for a worker.
 */
public final class DrainCheck {

    /**
     * One partition's drain.
     *
     * @param openTransactionStart first offset of the oldest transaction open on the source partition, or -1
     */
    public record Drain(long sourceEnd, int sourceLeaderEpoch, long destinationEnd, long openTransactionStart) {

        public boolean drained() {
            return sourceEnd == destinationEnd && openTransactionStart < 0;
        }

        public long lag() {
            return Math.max(0, sourceEnd - destinationEnd);
        }
    }

    private final Admin source;
    private final OffsetLookup sourceOffsets;
    private final OffsetLookup destinationOffsets;
    private final long timeoutMs;

    public DrainCheck(Admin source, Admin destination, long timeoutMs) {
        this.source = source;
        this.sourceOffsets = new OffsetLookup(source, timeoutMs);
        this.destinationOffsets = new OffsetLookup(destination, timeoutMs);
        this.timeoutMs = timeoutMs;
    }

    /**
     * Both clusters asked at once; any partition that could not be read fails the whole read (nothing is proven). The
     * oldest open source transaction comes from DescribeProducers; a source that does not have it (before Kafka 2.8,
     * KIP-664: UNSUPPORTED_VERSION) is asked for its last stable offset instead, which is the first offset of the
     * oldest open transaction when one is open and the log end when none is (see {@link #openTransactionStart}).
     */
    public Map<MirrorPartition, Drain> read(Collection<MirrorPartition> partitions) throws Exception {
        Set<TopicPartition> tps = new HashSet<>();
        partitions.forEach(p -> tps.add(new TopicPartition(p.topic(), p.partition())));
        var sourceEnds = sourceOffsets.list(tps, OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED);
        var destinationEnds = destinationOffsets.list(tps, OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED);
        var producers = source.describeProducers(tps).all();
        Offsets from = sourceEnds.toCompletableFuture().get().orThrow();
        Offsets to = destinationEnds.toCompletableFuture().get().orThrow();
        Map<TopicPartition, Long> oldestOpen = oldestOpenTransactions(producers, tps, from);
        Map<MirrorPartition, Drain> drains = new HashMap<>();
        for (MirrorPartition p : partitions) {
            TopicPartition tp = new TopicPartition(p.topic(), p.partition());
            ListOffsetsResultInfo sourceEnd = from.found().get(tp);
            drains.put(
                    p,
                    new Drain(
                            sourceEnd.offset(),
                            sourceEnd.leaderEpoch().orElse(-1),
                            to.found().get(tp).offset(),
                            oldestOpen.get(tp)));
        }
        return drains;
    }

    private Map<TopicPartition, Long> oldestOpenTransactions(
            KafkaFuture<Map<TopicPartition, PartitionProducerState>> producers, Set<TopicPartition> tps, Offsets ends)
            throws Exception {
        Map<TopicPartition, Long> oldest = new HashMap<>();
        try {
            producers
                    .get(timeoutMs, TimeUnit.MILLISECONDS)
                    .forEach((tp, state) -> oldest.put(
                            tp,
                            state.activeProducers().stream()
                                    .map(ProducerState::currentTransactionStartOffset)
                                    .filter(o -> o.isPresent())
                                    .mapToLong(o -> o.getAsLong())
                                    .min()
                                    .orElse(-1)));
            return oldest;
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof UnsupportedVersionException)) {
                throw e;
            }
        }
        Offsets stable = sourceOffsets
                .list(tps, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED)
                .toCompletableFuture()
                .get()
                .orThrow();
        tps.forEach(tp -> oldest.put(
                tp,
                openTransactionStart(
                        ends.found().get(tp).offset(), stable.found().get(tp).offset())));
        return oldest;
    }

    /**
     * The first offset of the oldest open transaction from a partition's log end and its last stable offset (the
     * read_committed end), or -1 when none is open: the LSO stops at the first open transaction's first offset.
     */
    static long openTransactionStart(long logEnd, long lastStableOffset) {
        return lastStableOffset < logEnd ? lastStableOffset : -1;
    }
}
