package io.clustermirror.fetch;

import io.clustermirror.kafka.ProducerIdentity;
import io.clustermirror.kafka.WireClient;
import java.io.IOException;
import java.util.List;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.EndTxnResponse;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;

/**
 * The transaction protocol against the destination, spoken as a Kafka client of the first transaction
 * version (explicit AddPartitionsToTxn, EndTxn v4, one epoch per producer), so that a marker can be
 * written on a partition that got no data in this transaction, as a source log can hold one. Blocking
 * calls on the append thread's own {@link WireClient}.
 */
final class DestinationTransactions {

    /**
     * Transaction timeouts asked for, longest first (the first is the broker default of
     * {@code transaction.max.timeout.ms}): a replayed transaction stays open as long as the destination allows,
     * because the source's may stay open that long.
     */
    private static final int[] TRANSACTION_TIMEOUTS_MS = {900_000, 300_000, 60_000, 10_000};

    private final WireClient client;
    private final int timeoutMs;

    DestinationTransactions(WireClient client, int timeoutMs) {
        this.client = client;
        this.timeoutMs = timeoutMs;
    }

    /** A producer for {@code transactionalId} with a fresh epoch (this aborts any transaction it still had open). */
    ReplayProducer init(Node anyNode, String transactionalId, long sourceProducerId) throws IOException {
        Node coordinator = coordinator(anyNode, transactionalId);
        int attempt = 0;
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (true) {
            InitProducerIdResponse response = (InitProducerIdResponse) client.call(
                            coordinator,
                            new InitProducerIdRequest.Builder(new InitProducerIdRequestData()
                                    .setTransactionalId(transactionalId)
                                    .setTransactionTimeoutMs(TRANSACTION_TIMEOUTS_MS[attempt])))
                    .responseBody();
            Errors error = Errors.forCode(response.data().errorCode());
            if (error == Errors.NONE) {
                return new ReplayProducer(
                        transactionalId,
                        sourceProducerId,
                        new ProducerIdentity(
                                response.data().producerId(), response.data().producerEpoch()),
                        coordinator,
                        0);
            }
            if (error == Errors.INVALID_TRANSACTION_TIMEOUT && attempt < TRANSACTION_TIMEOUTS_MS.length - 1) {
                attempt++; // the destination's transaction.max.timeout.ms is lower
                continue;
            }
            retryOrThrow(error, deadline, "InitProducerId for " + transactionalId);
        }
    }

    /** Adds the partition to the producer's transaction, which begins it. */
    void begin(ReplayProducer producer, TopicPartition tp) throws IOException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (true) {
            AddPartitionsToTxnResponse response = (AddPartitionsToTxnResponse) client.call(
                            producer.coordinator,
                            AddPartitionsToTxnRequest.Builder.forClient(
                                    producer.transactionalId,
                                    producer.identity.producerId(),
                                    producer.identity.producerEpoch(),
                                    List.of(tp)))
                    .responseBody();
            Errors error = response.errors()
                    .getOrDefault(AddPartitionsToTxnResponse.V3_AND_BELOW_TXN_ID, java.util.Map.of())
                    .getOrDefault(tp, Errors.NONE);
            if (error == Errors.NONE) {
                return;
            }
            retryOrThrow(error, deadline, "AddPartitionsToTxn of " + tp + " for " + producer.transactionalId);
        }
    }

    /** Commits or aborts the producer's transaction; the coordinator then writes the marker. */
    void end(ReplayProducer producer, boolean commit) throws IOException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (true) {
            EndTxnResponse response = (EndTxnResponse) client.call(
                            producer.coordinator,
                            new EndTxnRequest.Builder(
                                    new EndTxnRequestData()
                                            .setTransactionalId(producer.transactionalId)
                                            .setProducerId(producer.identity.producerId())
                                            .setProducerEpoch(producer.identity.producerEpoch())
                                            .setCommitted(commit),
                                    false))
                    .responseBody();
            Errors error = response.error();
            if (error == Errors.NONE) {
                return;
            }
            retryOrThrow(error, deadline, (commit ? "commit" : "abort") + " of " + producer.transactionalId);
        }
    }

    private Node coordinator(Node anyNode, String transactionalId) throws IOException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (true) {
            FindCoordinatorResponse response = (FindCoordinatorResponse) client.call(
                            anyNode,
                            new FindCoordinatorRequest.Builder(new FindCoordinatorRequestData()
                                    .setKeyType(FindCoordinatorRequest.CoordinatorType.TRANSACTION.id())
                                    .setCoordinatorKeys(List.of(transactionalId))))
                    .responseBody();
            var coordinator = response.data().coordinators().get(0);
            Errors error = Errors.forCode(coordinator.errorCode());
            if (error == Errors.NONE) {
                return new Node(coordinator.nodeId(), coordinator.host(), coordinator.port());
            }
            retryOrThrow(error, deadline, "FindCoordinator for " + transactionalId);
        }
    }

    /** The destination refused a transaction step for a reason retrying will not change. */
    static final class Refused extends IOException {
        private static final long serialVersionUID = 1L;

        Refused(String message) {
            super(message);
        }
    }

    private static void retryOrThrow(Errors error, long deadline, String what) throws IOException {
        if (!ErrorRules.retriable(error)) {
            throw new Refused(what + " refused: " + error.name() + " (" + error.message() + ")");
        }
        if (System.currentTimeMillis() > deadline) {
            throw new IOException(what + " still failing: " + error.name());
        }
        pause(what);
    }

    /** A fifth of a millisecond: markers and coordinator state changes take a few milliseconds, and each wait is on the replay's path. */
    private static void pause(String what) throws IOException {
        java.util.concurrent.locks.LockSupport.parkNanos(200_000);
        if (Thread.currentThread().isInterrupted()) {
            throw new IOException(what + " interrupted");
        }
    }
}
