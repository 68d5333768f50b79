package io.clustermirror.fetch;

import java.io.IOException;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.record.DefaultRecordBatch;
import org.jboss.logging.Logger;

/**
 * Reads back the destination transactions a mirror holds open on partitions that just entered the data
 * plane or were reset (after a restart, resume, retry or pipeline reset), by their transactional id prefix
 * (ListTransactions), epoch and partitions (DescribeTransactions) and last sequence and first offset
 * (DescribeProducers). They are continued, never re-initialised: InitProducerId would abort them and put a
 * marker where the source has none. Blocking Admin calls, on the append thread.
 */
final class TransactionRecovery {

    private static final Logger LOGGER = Logger.getLogger(TransactionRecovery.class);

    private final String mirror;
    private final Admin destinationAdmin;
    private final int timeoutMs;

    TransactionRecovery(String mirror, Admin destinationAdmin, int timeoutMs) {
        this.mirror = mirror;
        this.destinationAdmin = destinationAdmin;
        this.timeoutMs = timeoutMs;
    }

    /**
     * For each partition: forgets its replay producers and adopts the destination transactions open on it;
     * a partition whose transaction is still writing its marker stays in need of recovery.
     */
    void recover(List<FetchPartition> recovering, ClusterView destinationView) throws Exception {
        Collection<TransactionListing> listings = destinationAdmin
                .listTransactions(new ListTransactionsOptions()
                        .filterStates(List.of(
                                TransactionState.ONGOING,
                                TransactionState.PREPARE_COMMIT,
                                TransactionState.PREPARE_ABORT,
                                TransactionState.PREPARE_EPOCH_FENCE)))
                .all()
                .get(timeoutMs, TimeUnit.MILLISECONDS);
        for (FetchPartition state : recovering) {
            String prefix = ReplayProducer.transactionalIdPrefix(mirror, state.tp.topic(), state.tp.partition());
            List<TransactionListing> ours = listings.stream()
                    .filter(l -> l.transactionalId().startsWith(prefix))
                    .toList();
            if (ours.stream().anyMatch(l -> l.state() != TransactionState.ONGOING)) {
                continue; // a commit or abort is writing its marker: read again once it has
            }
            state.transactions.clear();
            if (!ours.isEmpty()) {
                adopt(state, prefix, ours, destinationView);
            }
            state.transactions.recoveryNeeded = false;
        }
    }

    private void adopt(FetchPartition state, String prefix, List<TransactionListing> ours, ClusterView destinationView)
            throws Exception {
        Map<String, TransactionDescription> described = destinationAdmin
                .describeTransactions(
                        ours.stream().map(TransactionListing::transactionalId).toList())
                .all()
                .get(timeoutMs, TimeUnit.MILLISECONDS);
        Map<Long, ProducerState> producers = destinationAdmin
                .describeProducers(List.of(state.tp))
                .partitionResult(state.tp)
                .get(timeoutMs, TimeUnit.MILLISECONDS)
                .activeProducers()
                .stream()
                .collect(Collectors.toMap(ProducerState::producerId, p -> p, (a, b) -> a));
        for (Map.Entry<String, TransactionDescription> entry : described.entrySet()) {
            TransactionDescription transaction = entry.getValue();
            if (!transaction.topicPartitions().contains(state.tp)) {
                continue;
            }
            Node coordinator = destinationView.nodes().stream()
                    .filter(n -> n.id() == transaction.coordinatorId())
                    .findFirst()
                    .orElseThrow(() -> new IOException(
                            "transaction coordinator " + transaction.coordinatorId() + " is not a known broker"));
            ProducerState producer = producers.get(transaction.producerId());
            int nextSequence = producer == null || producer.lastSequence() < 0
                    ? 0
                    : DefaultRecordBatch.incrementSequence(producer.lastSequence(), 1);
            long firstOffset = producer == null
                    ? state.ackedEnd
                    : producer.currentTransactionStartOffset().orElse(state.ackedEnd);
            ReplayProducer replay = new ReplayProducer(
                    entry.getKey(),
                    Long.parseLong(entry.getKey().substring(prefix.length())),
                    new ProducerIdentity(transaction.producerId(), (short) transaction.producerEpoch()),
                    coordinator,
                    nextSequence);
            state.transactions.put(replay);
            state.transactions.opened(
                    replay, firstOffset, transaction.transactionStartTimeMs().orElse(System.currentTimeMillis()));
            LOGGER.infof(
                    "Mirror %s: %s continues destination transaction %s (source producer %d), open since offset %d",
                    mirror, state.partition, entry.getKey(), replay.sourceProducerId, firstOffset);
        }
    }
}
