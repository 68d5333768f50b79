package io.clustermirror.fetch;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;

/**
 * The transaction protocol against the destination, spoken as a Kafka client of the first transaction version
 * (explicit AddPartitionsToTxn, EndTxn v4, one epoch per producer), so that a marker can be written on a partition
 * that got no data in this transaction, as a source log can hold one: the requests, and what their answers say. No
 * I/O here: {@link TransactionReplay} sends them as steps of a partition, answered when the fetcher polls.
 */
final class DestinationTransactions {

    /**
     * Transaction timeouts asked for, longest first (the first is the broker default of
     * {@code transaction.max.timeout.ms}): a replayed transaction stays open as long as the destination allows,
     * because the source's may stay open that long.
     */
    private static final int[] TRANSACTION_TIMEOUTS_MS = {900_000, 300_000, 60_000, 10_000};

    private DestinationTransactions() {}

    static FindCoordinatorRequest.Builder findCoordinator(String transactionalId) {
        return new FindCoordinatorRequest.Builder(new FindCoordinatorRequestData()
                .setKeyType(FindCoordinatorRequest.CoordinatorType.TRANSACTION.id())
                .setCoordinatorKeys(List.of(transactionalId)));
    }

    static Errors error(FindCoordinatorResponse response) {
        return Errors.forCode(response.data().coordinators().get(0).errorCode());
    }

    static Node coordinator(FindCoordinatorResponse response) {
        var coordinator = response.data().coordinators().get(0);
        return new Node(coordinator.nodeId(), coordinator.host(), coordinator.port());
    }

    /**
     * A fresh epoch for {@code transactionalId} (this aborts any transaction it still had open), asking for the
     * {@code attempt}-th longest transaction timeout.
     */
    static InitProducerIdRequest.Builder initProducerId(String transactionalId, int attempt) {
        return new InitProducerIdRequest.Builder(new InitProducerIdRequestData()
                .setTransactionalId(transactionalId)
                .setTransactionTimeoutMs(TRANSACTION_TIMEOUTS_MS[attempt]));
    }

    /** Whether an InitProducerId refused with INVALID_TRANSACTION_TIMEOUT at {@code attempt} has a shorter one to ask for. */
    static boolean shorterTimeoutAfter(int attempt) {
        return attempt < TRANSACTION_TIMEOUTS_MS.length - 1;
    }

    /** Adds the partition to the producer's transaction, which begins it. */
    static AddPartitionsToTxnRequest.Builder addPartition(ReplayProducer producer, TopicPartition tp) {
        return AddPartitionsToTxnRequest.Builder.forClient(
                producer.transactionalId,
                producer.identity.producerId(),
                producer.identity.producerEpoch(),
                List.of(tp));
    }

    static Errors error(AddPartitionsToTxnResponse response, TopicPartition tp) {
        return response.errors()
                .getOrDefault(AddPartitionsToTxnResponse.V3_AND_BELOW_TXN_ID, Map.of())
                .getOrDefault(tp, Errors.NONE);
    }

    /** Commits or aborts the producer's transaction; the coordinator then writes the marker. */
    static EndTxnRequest.Builder endTxn(ReplayProducer producer, boolean commit) {
        return new EndTxnRequest.Builder(
                new EndTxnRequestData()
                        .setTransactionalId(producer.transactionalId)
                        .setProducerId(producer.identity.producerId())
                        .setProducerEpoch(producer.identity.producerEpoch())
                        .setCommitted(commit),
                false);
    }
}
