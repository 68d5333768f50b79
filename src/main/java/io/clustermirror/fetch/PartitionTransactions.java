package io.clustermirror.fetch;

import io.clustermirror.mirror.OpenTransaction;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The replay producers of one partition, by source producer id: those with a transaction open on the
 * destination, and a few idle ones kept for the next transaction of the same source producer (an
 * InitProducerId per transaction would cost a write to the transaction log each time). Append thread
 * only, except {@link #snapshot()}.
 */
final class PartitionTransactions {

    private static final int MAX_IDLE = 16;

    private final Map<Long, ReplayProducer> bySourceProducer = new LinkedHashMap<>(16, 0.75f, true);
    /** Set when the partition enters the data plane or its pipeline is reset: open transactions are read back from the destination. */
    boolean recoveryNeeded = true;

    private volatile List<OpenTransaction> snapshot = List.of();

    ReplayProducer get(long sourceProducerId) {
        return bySourceProducer.get(sourceProducerId);
    }

    void put(ReplayProducer producer) {
        bySourceProducer.put(producer.sourceProducerId, producer);
        changed();
    }

    void opened(ReplayProducer producer, long firstOffset, long sinceMs) {
        producer.firstOffset = firstOffset;
        producer.openSinceMs = sinceMs;
        changed();
    }

    void closed(ReplayProducer producer) {
        producer.firstOffset = -1;
        changed();
    }

    /**
     * A reset of the partition waits while this holds: a transaction of it was open when the reset was asked for, and
     * its marker may be being written (EndTxn sent, its answer lost). The destination's end is read once the
     * transactions are read back and none is completing, so a marker that lands late is never written twice.
     */
    boolean settling() {
        return recoveryNeeded && !open().isEmpty();
    }

    List<ReplayProducer> open() {
        return bySourceProducer.values().stream().filter(ReplayProducer::open).toList();
    }

    /** Forgets every producer (before they are read back from the destination). */
    void clear() {
        bySourceProducer.clear();
        changed();
    }

    /** The open transactions, safe to read from any thread. */
    List<OpenTransaction> snapshot() {
        return snapshot;
    }

    private void changed() {
        int idle = 0;
        List<OpenTransaction> open = new ArrayList<>();
        for (Iterator<ReplayProducer> it = bySourceProducer.values().iterator(); it.hasNext(); ) {
            ReplayProducer producer = it.next();
            if (producer.open()) {
                open.add(new OpenTransaction(
                        producer.sourceProducerId,
                        producer.transactionalId,
                        producer.firstOffset,
                        Instant.ofEpochMilli(producer.openSinceMs)));
            } else if (++idle > MAX_IDLE) {
                it.remove(); // least recently used first
            }
        }
        snapshot = List.copyOf(open);
    }
}
