package io.clustermirror.fetch;

import io.clustermirror.batches.BatchRestamp;
import io.clustermirror.batches.ControlMarker;
import io.clustermirror.batches.OneBatchProduce;
import io.clustermirror.batches.RawFetch;
import io.clustermirror.batches.SourceBatch;
import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.WireClient;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.DefaultRecordBatch;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.EndTxnResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.utils.ExponentialBackoff;
import org.jboss.logging.Logger;

/**
 * The data plane's transactional path (DESIGN §4.2): a source transactional batch is written by the
 * replay producer of its source producer inside a destination transaction that touches this partition
 * only; at a source marker the transaction is committed or aborted and the marker is fetched back at the
 * source marker's offset before the partition moves on. One step at a time per partition, on the append
 * thread, which owns {@code destination}.
 */
final class TransactionReplay {

    private static final Logger LOGGER = Logger.getLogger(TransactionReplay.class);
    /** Between attempts to abort a transaction whose coordinator is busy (CONCURRENT_TRANSACTIONS, a new coordinator). */
    private static final ExponentialBackoff ABORT_BACKOFF = new ExponentialBackoff(20, 2, 500, 0.2);
    /** How long the destination leader may hold a fetch for a transaction marker that is being written. */
    private static final int MARKER_WAIT_MS = 100;

    /** What the replay needs from the data plane it is part of. */
    interface Host {
        ClusterView destinationView();

        void refreshDestination();

        void fail(FetchPartition state, String error);

        /** Drops what is queued and in flight and resumes from the destination's log end, read back. */
        void reset(FetchPartition state, String reason);

        /** Sends a produce request of one batch of {@code state} and handles its answer like any other. */
        void send(Node leader, FetchPartition state, FetchPartition.Sent entry, ProduceRequest.Builder request);

        void markerAppended(FetchPartition state, SourceBatch marker);

        /** The destination connection {@code state}'s requests to {@code broker} go over. */
        Node pinned(Node broker, FetchPartition state);
    }

    private final String mirror;
    private final WireClient destination;
    private final DestinationTransactions transactions;
    private final long timeoutMs;
    private final Host host;

    TransactionReplay(String mirror, WireClient destination, int timeoutMs, Host host) {
        this.mirror = mirror;
        this.destination = destination;
        this.transactions = new DestinationTransactions(destination, timeoutMs);
        this.timeoutMs = timeoutMs;
        this.host = host;
    }

    /** Transactional batches and markers go through a destination transaction, one at a time per partition. */
    static boolean replayed(SourceBatch batch) {
        return batch != null && (batch.transactional() || batch.control());
    }

    /** Sends the transactional batch or writes the marker at the head of each partition whose turn it is. */
    void replay(Collection<FetchPartition> partitions) {
        for (FetchPartition state : partitions) {
            while (!state.transactions.recoveryNeeded
                    && state.inFlight.isEmpty()
                    && state.unconfirmed.isEmpty() // a lost answer is sent again first (LostAnswers)
                    && state.sendable()
                    && replayed(state.peekQueue())) {
                SourceBatch head = state.peekQueue();
                Node leader = host.destinationView().leaders().get(state.tp);
                if (leader == null) {
                    host.refreshDestination();
                    break;
                }
                try {
                    if (!(head.control() ? writeMarker(state, head) : sendTransactional(state, leader, head))) {
                        break;
                    }
                } catch (DestinationTransactions.Refused e) {
                    host.fail(state, e.getMessage());
                    break;
                } catch (IOException e) {
                    host.reset(state, e.getMessage());
                    break;
                }
            }
        }
    }

    /** Sends one source transactional batch under the replay producer of its source producer; false: nothing more now. */
    private boolean sendTransactional(FetchPartition state, Node leader, SourceBatch head) throws IOException {
        Node connection = host.pinned(leader, state);
        if (!destination.ready(connection)) {
            return false;
        }
        ReplayProducer producer = replayProducer(state, head.producerId(), head.baseOffset());
        SourceBatch batch = state.pollQueue();
        if (batch != head) {
            return false; // the queue was cleared meanwhile (failed or removed)
        }
        ByteBuffer bytes = BatchRestamp.restampInPlace(batch, producer.identity, producer.nextSequence);
        producer.nextSequence = DefaultRecordBatch.incrementSequence(producer.nextSequence, batch.recordCount());
        FetchPartition.Sent entry = new FetchPartition.Sent(batch, state.generation, producer.transactionalId);
        state.inFlight.add(entry);
        ProduceRequestData data = OneBatchProduce.request(
                host.destinationView(), state.tp, bytes, producer.transactionalId, (int) Math.max(1000, timeoutMs / 2));
        host.send(connection, state, entry, ProduceRequest.builder(data, true));
        return false;
    }

    /**
     * Commits or aborts the replayed transaction at the source marker's offset, then waits until the
     * destination's marker is there: the partition moves on only once it sits at the source's offset.
     */
    private boolean writeMarker(FetchPartition state, SourceBatch marker) throws IOException {
        Optional<Boolean> commit = ControlMarker.isCommit(marker);
        if (commit.isEmpty()) {
            host.fail(state, "control batch at source offset " + marker.baseOffset() + " is not a transaction marker");
            return false;
        }
        if (state.ackedEnd != marker.baseOffset()) {
            host.fail(
                    state,
                    "the destination ends at " + state.ackedEnd + " where the source has a transaction marker at "
                            + marker.baseOffset());
            return false;
        }
        ReplayProducer producer = replayProducer(state, marker.producerId(), marker.baseOffset());
        if (state.pollQueue() != marker) {
            return false;
        }
        transactions.end(producer, commit.get());
        String misplaced = markerMismatch(state, marker.baseOffset(), producer, commit.get());
        state.transactions.closed(producer);
        if (misplaced != null) {
            host.fail(
                    state,
                    "the " + (commit.get() ? "commit" : "abort") + " marker of destination transaction "
                            + producer.transactionalId
                            + " belongs at offset " + marker.baseOffset() + " but " + misplaced
                            + " (another writer, or the destination ended "
                            + "the transaction on its own: transaction.max.timeout.ms, an expired transactional id)");
            return false;
        }
        state.ackedEnd = marker.baseOffset() + 1;
        state.lastEpoch = marker.partitionLeaderEpoch();
        host.markerAppended(state, marker);
        return true;
    }

    /**
     * Waits for the batch at {@code offset} (a marker appears a few milliseconds after EndTxn returns; the
     * leader holds the fetch until then) and says what is there if it is not the marker just written; null when it is.
     */
    private String markerMismatch(FetchPartition state, long offset, ReplayProducer producer, boolean commit)
            throws IOException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        List<SourceBatch> landed = List.of();
        while (landed.isEmpty() && System.currentTimeMillis() < deadline) {
            landed = RawFetch.batches(destination, host.destinationView(), state.tp, offset, 64 * 1024, MARKER_WAIT_MS);
        }
        if (landed.isEmpty()) {
            return "nothing appeared there within " + timeoutMs + " ms";
        }
        SourceBatch batch = landed.get(0);
        if (batch.baseOffset() != offset) {
            return "destination batch [" + batch.baseOffset() + ".." + batch.lastOffset() + "] is there";
        }
        if (!batch.control()) {
            return "a data batch is there";
        }
        Optional<Boolean> landedCommit = ControlMarker.isCommit(batch);
        if (batch.producerId() != producer.identity.producerId()) {
            return "a marker of producer " + batch.producerId() + " is there";
        }
        return landedCommit.equals(Optional.of(commit))
                ? null
                : (commit ? "an abort" : "a commit") + " marker is there";
    }

    /** The replay producer of the source producer on this partition, with a transaction open here. */
    private ReplayProducer replayProducer(FetchPartition state, long sourceProducerId, long offset) throws IOException {
        ReplayProducer producer = state.transactions.get(sourceProducerId);
        if (producer == null) {
            producer = transactions.init(
                    host.destinationView().anyNode(),
                    ReplayProducer.transactionalIdPrefix(mirror, state.tp.topic(), state.tp.partition())
                            + sourceProducerId,
                    sourceProducerId);
            state.transactions.put(producer);
        }
        if (!producer.open()) {
            transactions.begin(producer, state.tp);
            state.transactions.opened(producer, offset, System.currentTimeMillis());
        }
        return producer;
    }

    /**
     * Stop: every destination transaction held open for the partition is aborted, so none of its data ever reads as
     * committed. The EndTxn requests go out together, each retried after a back-off while the coordinator says so
     * (for up to the request timeout), and are answered when the fetcher polls; a round asks again until this says all
     * are done (one that could not be aborted is left to the destination's transaction timeout, logged as an ERROR).
     *
     * @return whether no abort of the partition is under way any more
     */
    boolean abortOpen(FetchPartition state) {
        Aborts aborts = state.aborts;
        long now = System.nanoTime();
        if (aborts == null) {
            aborts = new Aborts(now + timeoutMs * 1_000_000);
            state.aborts = aborts;
            for (ReplayProducer producer : state.transactions.open()) {
                aborts.due.put(producer, now);
            }
        }
        for (Iterator<Map.Entry<ReplayProducer, Long>> it =
                        aborts.due.entrySet().iterator();
                it.hasNext(); ) {
            Map.Entry<ReplayProducer, Long> entry = it.next();
            ReplayProducer producer = entry.getKey();
            Node connection = host.pinned(producer.coordinator, state);
            if (now - entry.getValue() < 0) {
                continue;
            }
            if (!destination.ready(connection)) { // connecting: tried again next round, until the deadline
                if (now - aborts.deadlineNanos > 0) {
                    it.remove();
                    notAborted(state, producer, "its coordinator " + connection + " cannot be reached");
                }
                continue;
            }
            it.remove();
            aborts.inFlight++;
            destination.send(
                    connection,
                    new EndTxnRequest.Builder(
                            new EndTxnRequestData()
                                    .setTransactionalId(producer.transactionalId)
                                    .setProducerId(producer.identity.producerId())
                                    .setProducerEpoch(producer.identity.producerEpoch())
                                    .setCommitted(false),
                            false),
                    response -> aborted(state, producer, response));
        }
        return aborts.inFlight == 0 && aborts.due.isEmpty();
    }

    /** The aborts of a stopped partition under way: the producers waiting for their next attempt, and the attempts out. */
    static final class Aborts {
        private final long deadlineNanos;
        private final Map<ReplayProducer, Long> due = new LinkedHashMap<>();
        private final Map<ReplayProducer, Integer> attempts = new HashMap<>();
        private int inFlight;

        private Aborts(long deadlineNanos) {
            this.deadlineNanos = deadlineNanos;
        }
    }

    private void aborted(FetchPartition state, ReplayProducer producer, ClientResponse response) {
        Aborts aborts = state.aborts;
        aborts.inFlight--;
        String error;
        boolean retriable;
        if (response.wasDisconnected() || response.wasTimedOut() || response.versionMismatch() != null) {
            error = response.wasDisconnected() ? "disconnected" : response.wasTimedOut() ? "timed out" : "unsupported";
            retriable = response.versionMismatch() == null;
        } else {
            Errors answer = ((EndTxnResponse) response.responseBody()).error();
            if (answer == Errors.NONE) {
                state.transactions.closed(producer);
                LOGGER.infof(
                        "Mirror %s: %s stopped: destination transaction %s (source producer %d) aborted",
                        mirror, state.partition, producer.transactionalId, producer.sourceProducerId);
                destination.wakeup();
                return;
            }
            error = answer.name();
            retriable = ErrorRules.retriable(answer);
        }
        long now = System.nanoTime();
        if (retriable && now - aborts.deadlineNanos < 0) {
            int attempt = aborts.attempts.merge(producer, 1, Integer::sum);
            aborts.due.put(producer, now + ABORT_BACKOFF.backoff(attempt - 1L) * 1_000_000);
            return;
        }
        notAborted(state, producer, error);
        destination.wakeup();
    }

    private void notAborted(FetchPartition state, ReplayProducer producer, String error) {
        LOGGER.errorf(
                "Mirror %s: %s stopped but destination transaction %s could not be aborted (%s); the destination aborts it "
                        + "after its transaction timeout",
                mirror, state.partition, producer.transactionalId, error);
    }
}
