package io.clustermirror.fetch;

import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.ProducerIdentity;
import java.io.IOException;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeProducersOptions;
import org.apache.kafka.clients.admin.DescribeProducersResult;
import org.apache.kafka.clients.admin.DescribeTransactionsOptions;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.record.DefaultRecordBatch;
import org.apache.kafka.common.utils.ExponentialBackoff;
import org.jboss.logging.Logger;

/**
 * Reads back the destination transactions a mirror holds open on partitions that just entered the data
 * plane or were reset (after a restart, resume, retry or pipeline reset), by their transactional id prefix
 * (ListTransactions), epoch and partitions (DescribeTransactions) and last sequence and first offset
 * (DescribeProducers). They are continued, never re-initialised: InitProducerId would abort them and put a
 * marker where the source has none. The Admin calls are started as futures (each with the request timeout) and taken
 * up by a later round of the append loop, like {@link ViewLoads}: no fetcher turn waits for them. Append thread only.
 */
final class TransactionRecovery {

    private static final Logger LOGGER = Logger.getLogger(TransactionRecovery.class);
    /** How long a partition whose open transactions could not be described waits before they are listed again for it. */
    private static final ExponentialBackoff BACKOFF = new ExponentialBackoff(100, 2, 5000, 0.2);

    /** The descriptions of one partition's open transactions, under way. */
    private record Adoption(
            String prefix,
            KafkaFuture<Map<String, TransactionDescription>> transactions,
            KafkaFuture<DescribeProducersResult.PartitionProducerState> producers) {
        boolean done() {
            return transactions.isDone() && producers.isDone();
        }
    }

    private final String mirror;
    private final Admin destinationAdmin;
    private final int timeoutMs;
    /** The listing under way, or null. */
    private KafkaFuture<Collection<TransactionListing>> listing;

    private final Map<FetchPartition, Adoption> adoptions = new HashMap<>();
    /** Partitions whose description failed, and when they may be tried again (System.nanoTime). */
    private final Map<FetchPartition, Long> notBefore = new HashMap<>();

    private final Map<FetchPartition, Integer> failures = new HashMap<>();

    TransactionRecovery(String mirror, Admin destinationAdmin, int timeoutMs) {
        this.mirror = mirror;
        this.destinationAdmin = destinationAdmin;
        this.timeoutMs = timeoutMs;
    }

    /** Whether a listing or a description is under way. */
    boolean underWay() {
        return listing != null || !adoptions.isEmpty();
    }

    /** Whether the open transactions of a partition could not be described the last time they were tried. */
    boolean failing() {
        return !failures.isEmpty();
    }

    /** Starts listing the destination's open transactions (one ListTransactions covers every partition). */
    void start() {
        listing = destinationAdmin
                .listTransactions(new ListTransactionsOptions()
                        .filterStates(List.of(
                                TransactionState.ONGOING,
                                TransactionState.PREPARE_COMMIT,
                                TransactionState.PREPARE_ABORT,
                                TransactionState.PREPARE_EPOCH_FENCE))
                        .timeoutMs(timeoutMs))
                .all();
    }

    /**
     * Takes up what has finished. A listing: for each of {@code recovering}, forgets its replay producers and adopts the
     * destination transactions open on it (their descriptions are started here and taken up later); a partition whose
     * transaction is still writing its marker stays in need of recovery. Descriptions: the transactions are adopted.
     *
     * @return whether a listing was taken up
     * @throws Exception what the listing, or a description (its partition waits a back-off of its own), failed with
     */
    boolean takeUp(List<FetchPartition> recovering, ClusterView destinationView) throws Exception {
        Exception failed = null;
        for (Iterator<Map.Entry<FetchPartition, Adoption>> it =
                        adoptions.entrySet().iterator();
                it.hasNext(); ) {
            Map.Entry<FetchPartition, Adoption> entry = it.next();
            if (!entry.getValue().done()) {
                continue;
            }
            it.remove();
            FetchPartition state = entry.getKey();
            try {
                adopt(state, entry.getValue(), destinationView);
                state.transactions.recoveryNeeded = false;
                failures.remove(state);
            } catch (Exception e) {
                int attempt = failures.merge(state, 1, Integer::sum);
                notBefore.put(state, System.nanoTime() + BACKOFF.backoff(attempt - 1L) * 1_000_000);
                failed = unwrapped(e);
            }
        }
        if (listing == null || !listing.isDone()) {
            if (failed != null) {
                throw failed;
            }
            return false;
        }
        KafkaFuture<Collection<TransactionListing>> listed = listing;
        listing = null;
        Collection<TransactionListing> listings;
        try {
            listings = listed.get();
        } catch (ExecutionException e) {
            throw unwrapped(e);
        }
        long now = System.nanoTime();
        notBefore.keySet().retainAll(recovering);
        failures.keySet().retainAll(recovering);
        for (FetchPartition state : recovering) {
            Long due = notBefore.get(state);
            if (adoptions.containsKey(state) || (due != null && now - due < 0)) {
                continue;
            }
            String prefix = ReplayProducer.transactionalIdPrefix(mirror, state.tp.topic(), state.tp.partition());
            List<TransactionListing> ours = listings.stream()
                    .filter(l -> l.transactionalId().startsWith(prefix))
                    .toList();
            if (ours.stream().anyMatch(l -> l.state() != TransactionState.ONGOING)) {
                continue; // a commit or abort is writing its marker: read again once it has
            }
            if (ours.isEmpty()) {
                state.transactions.clear();
                state.transactions.recoveryNeeded = false;
                continue;
            }
            adoptions.put(
                    state,
                    new Adoption(
                            prefix,
                            destinationAdmin
                                    .describeTransactions(
                                            ours.stream()
                                                    .map(TransactionListing::transactionalId)
                                                    .toList(),
                                            new DescribeTransactionsOptions().timeoutMs(timeoutMs))
                                    .all(),
                            destinationAdmin
                                    .describeProducers(
                                            List.of(state.tp), new DescribeProducersOptions().timeoutMs(timeoutMs))
                                    .partitionResult(state.tp)));
        }
        if (failed != null) {
            throw failed;
        }
        return true;
    }

    private static Exception unwrapped(Exception e) {
        return e instanceof ExecutionException && e.getCause() instanceof Exception cause ? cause : e;
    }

    private void adopt(FetchPartition state, Adoption adoption, ClusterView destinationView) throws Exception {
        String prefix = adoption.prefix();
        Map<String, TransactionDescription> described = adoption.transactions().get();
        Map<Long, ProducerState> producers = adoption.producers().get().activeProducers().stream()
                .collect(Collectors.toMap(ProducerState::producerId, p -> p, (a, b) -> a));
        state.transactions.clear();
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
