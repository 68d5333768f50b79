package io.clustermirror.fetch;

import io.clustermirror.batches.BatchRestamp;
import io.clustermirror.batches.ControlMarker;
import io.clustermirror.batches.OneBatchProduce;
import io.clustermirror.batches.RawFetch;
import io.clustermirror.batches.SourceBatch;
import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.ProducerIdentity;
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
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.DefaultRecordBatch;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.requests.EndTxnResponse;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.utils.ExponentialBackoff;
import org.jboss.logging.Logger;

/**
 * The data plane's transactional path (DESIGN §4.2): a source transactional batch is written by the
 * replay producer of its source producer inside a destination transaction that touches this partition
 * only; at a source marker the transaction is committed or aborted and the marker is fetched back at the
 * source marker's offset before the partition moves on. One step at a time per partition ({@link Step}: a request
 * sent, answered when the fetcher polls; nothing here waits), on the fetcher's thread, which owns {@code destination}.
 */
final class TransactionReplay {

    private static final Logger LOGGER = Logger.getLogger(TransactionReplay.class);
    /** Between attempts to abort a transaction whose coordinator is busy (CONCURRENT_TRANSACTIONS, a new coordinator). */
    private static final ExponentialBackoff ABORT_BACKOFF = new ExponentialBackoff(20, 2, 500, 0.2);
    /** How long the destination leader may hold a fetch for a transaction marker that is being written. */
    private static final int MARKER_WAIT_MS = 100;
    /** Between attempts of a transaction step the destination asked to retry (CONCURRENT_TRANSACTIONS, a coordinator loading). */
    private static final ExponentialBackoff STEP_BACKOFF = new ExponentialBackoff(1, 2, 100, 0.2);

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
    private final long timeoutMs;
    private final Host host;
    /** The earliest moment a step waiting to be sent again is due (System.nanoTime), for the fetcher's poll. */
    private long nextDueNanos = Long.MAX_VALUE;

    TransactionReplay(String mirror, WireClient destination, int timeoutMs, Host host) {
        this.mirror = mirror;
        this.destination = destination;
        this.timeoutMs = timeoutMs;
        this.host = host;
    }

    /** Transactional batches and markers go through a destination transaction, one at a time per partition. */
    static boolean replayed(SourceBatch batch) {
        return batch != null && (batch.transactional() || batch.control());
    }

    /** Whether a transaction step of the partition has been sent and not answered yet: it is waited for before a reset or leave. */
    static boolean stepInFlight(FetchPartition state) {
        return state.replayStep != null && state.replayStep.inFlight;
    }

    /**
     * Sends the transactional batch, the transaction step or the marker at the head of each partition whose turn it is.
     * Nothing here waits: a step is a request whose answer the fetcher's poll hands to it, and the partition's next step
     * is taken in a later round.
     *
     * @return how long until a step waiting to be sent again is due (ms), for the fetcher's poll; Long.MAX_VALUE: none
     */
    long replay(Collection<FetchPartition> partitions) {
        nextDueNanos = Long.MAX_VALUE;
        for (FetchPartition state : partitions) {
            Step step = state.replayStep;
            if (step != null) {
                if (step.inFlight) {
                    continue;
                }
                if (step.generation != state.generation || !state.sending()) {
                    state.replayStep = null; // the partition was reset or is leaving: a step not sent yet is dropped
                } else {
                    send(step);
                    continue;
                }
            }
            while (!state.transactions.recoveryNeeded
                    && state.inFlight.isEmpty()
                    && state.unconfirmed.isEmpty() // a lost answer is sent again first (LostAnswers)
                    && state.replayStep == null
                    && state.sendable()
                    && replayed(state.peekQueue())) {
                SourceBatch head = state.peekQueue();
                Node leader = host.destinationView().leaders().get(state.tp);
                if (leader == null) {
                    host.refreshDestination();
                    break;
                }
                if (!(head.control() ? writeMarker(state, head) : sendTransactional(state, leader, head))) {
                    break;
                }
            }
        }
        return nextDueNanos == Long.MAX_VALUE
                ? Long.MAX_VALUE
                : Math.max(0, (nextDueNanos - System.nanoTime()) / 1_000_000);
    }

    /** Sends one source transactional batch under the replay producer of its source producer; false: nothing more now. */
    private boolean sendTransactional(FetchPartition state, Node leader, SourceBatch head) {
        Node connection = host.pinned(leader, state);
        if (!destination.ready(connection)) {
            return false;
        }
        ReplayProducer producer = replayProducer(state, head.producerId(), head.baseOffset());
        if (producer == null) {
            return false; // a step towards it is under way
        }
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
     * Commits or aborts the replayed transaction at the source marker's offset (an {@link EndTxn} step, then a
     * {@link MarkerReadBack}): the partition moves on only once the destination's marker sits at the source's offset.
     */
    private boolean writeMarker(FetchPartition state, SourceBatch marker) {
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
        if (producer == null || state.pollQueue() != marker) {
            return false;
        }
        start(new EndTxn(state, producer, marker, commit.get()));
        return false;
    }

    /**
     * The replay producer of the source producer on this partition, with a transaction open here; null while a step
     * towards it is under way (FindCoordinator and InitProducerId for a new one, AddPartitionsToTxn to begin).
     */
    private ReplayProducer replayProducer(FetchPartition state, long sourceProducerId, long offset) {
        ReplayProducer producer = state.transactions.get(sourceProducerId);
        if (producer == null) {
            String transactionalId =
                    ReplayProducer.transactionalIdPrefix(mirror, state.tp.topic(), state.tp.partition())
                            + sourceProducerId;
            start(new FindCoordinator(state, transactionalId, sourceProducerId));
            return null;
        }
        if (!producer.open()) {
            start(new Begin(state, producer, offset));
            return null;
        }
        return producer;
    }

    // ---------------------------------------------------------------- steps

    /**
     * One request of the transaction protocol for a partition, the only step of it under way: sent and not answered
     * yet ({@link #inFlight}), or waiting to be sent (again, after a retriable error) from {@link #dueNanos}. Retried
     * with a back-off until {@link #deadlineMs}; then the partition is reset. Refused for good: the partition fails.
     * Fetcher's thread only.
     */
    abstract class Step {
        final FetchPartition state;
        final int generation;
        final String what;
        final long deadlineMs;
        int attempts;
        long dueNanos;
        boolean inFlight;

        Step(FetchPartition state, String what) {
            this.state = state;
            this.generation = state.generation;
            this.what = what;
            this.deadlineMs = System.currentTimeMillis() + timeoutMs;
            this.dueNanos = System.nanoTime();
        }

        /** The broker the request goes to (over the partition's pinned connection); null when none is known now. */
        abstract Node broker();

        abstract AbstractRequest.Builder<?> request() throws IOException;

        /** The error the answer carries; NONE when the step went through. */
        abstract Errors error(AbstractResponse answer);

        /**
         * The step went through: what it established is recorded, and the step that follows it comes back (null: the
         * partition's next batch). {@code current} is false when the partition was reset or is leaving meanwhile: then
         * only what the destination now holds is recorded (a transaction begun stays open, so a stop aborts it).
         */
        abstract Step done(ClientResponse answer, boolean current) throws IOException;

        /** Whether {@code error} is met by asking again at once, differently (a shorter transaction timeout). */
        boolean adjusted(Errors error) {
            return false;
        }
    }

    /** The transaction coordinator of a new replay producer's transactional id. */
    private final class FindCoordinator extends Step {
        private final String transactionalId;
        private final long sourceProducerId;

        FindCoordinator(FetchPartition state, String transactionalId, long sourceProducerId) {
            super(state, "FindCoordinator for " + transactionalId);
            this.transactionalId = transactionalId;
            this.sourceProducerId = sourceProducerId;
        }

        @Override
        Node broker() {
            return host.destinationView().anyNode();
        }

        @Override
        AbstractRequest.Builder<?> request() {
            return DestinationTransactions.findCoordinator(transactionalId);
        }

        @Override
        Errors error(AbstractResponse answer) {
            return DestinationTransactions.error((FindCoordinatorResponse) answer);
        }

        @Override
        Step done(ClientResponse answer, boolean current) {
            return new InitProducer(
                    state,
                    transactionalId,
                    sourceProducerId,
                    DestinationTransactions.coordinator((FindCoordinatorResponse) answer.responseBody()));
        }
    }

    /** A fresh epoch for a new replay producer (this aborts any transaction its transactional id still had open). */
    private final class InitProducer extends Step {
        private final String transactionalId;
        private final long sourceProducerId;
        private final Node coordinator;
        private int timeoutAttempt;

        InitProducer(FetchPartition state, String transactionalId, long sourceProducerId, Node coordinator) {
            super(state, "InitProducerId for " + transactionalId);
            this.transactionalId = transactionalId;
            this.sourceProducerId = sourceProducerId;
            this.coordinator = coordinator;
        }

        @Override
        Node broker() {
            return coordinator;
        }

        @Override
        AbstractRequest.Builder<?> request() {
            return DestinationTransactions.initProducerId(transactionalId, timeoutAttempt);
        }

        @Override
        Errors error(AbstractResponse answer) {
            return Errors.forCode(((InitProducerIdResponse) answer).data().errorCode());
        }

        @Override
        boolean adjusted(Errors error) {
            if (error == Errors.INVALID_TRANSACTION_TIMEOUT
                    && DestinationTransactions.shorterTimeoutAfter(timeoutAttempt)) {
                timeoutAttempt++; // the destination's transaction.max.timeout.ms is lower
                return true;
            }
            return false;
        }

        @Override
        Step done(ClientResponse answer, boolean current) {
            var data = ((InitProducerIdResponse) answer.responseBody()).data();
            state.transactions.put(new ReplayProducer(
                    transactionalId,
                    sourceProducerId,
                    new ProducerIdentity(data.producerId(), data.producerEpoch()),
                    coordinator,
                    0));
            return null;
        }
    }

    /** Adds the partition to the replay producer's transaction, which begins it. */
    private final class Begin extends Step {
        private final ReplayProducer producer;
        private final long firstOffset;

        Begin(FetchPartition state, ReplayProducer producer, long firstOffset) {
            super(state, "AddPartitionsToTxn of " + state.tp + " for " + producer.transactionalId);
            this.producer = producer;
            this.firstOffset = firstOffset;
        }

        @Override
        Node broker() {
            return producer.coordinator;
        }

        @Override
        AbstractRequest.Builder<?> request() {
            return DestinationTransactions.addPartition(producer, state.tp);
        }

        @Override
        Errors error(AbstractResponse answer) {
            return DestinationTransactions.error((AddPartitionsToTxnResponse) answer, state.tp);
        }

        @Override
        Step done(ClientResponse answer, boolean current) {
            state.transactions.opened(producer, firstOffset, System.currentTimeMillis());
            if (!current && state.phase() instanceof FetchPartition.Resetting) {
                state.transactions.recoveryNeeded = true; // as a reset asked for with it open would have
            }
            return null;
        }
    }

    /** Commits or aborts the replayed transaction at the source marker's offset; the coordinator writes the marker. */
    private final class EndTxn extends Step {
        private final ReplayProducer producer;
        private final SourceBatch marker;
        private final boolean commit;

        EndTxn(FetchPartition state, ReplayProducer producer, SourceBatch marker, boolean commit) {
            super(state, (commit ? "commit" : "abort") + " of " + producer.transactionalId);
            this.producer = producer;
            this.marker = marker;
            this.commit = commit;
        }

        @Override
        Node broker() {
            return producer.coordinator;
        }

        @Override
        AbstractRequest.Builder<?> request() {
            return DestinationTransactions.endTxn(producer, commit);
        }

        @Override
        Errors error(AbstractResponse answer) {
            return ((EndTxnResponse) answer).error();
        }

        @Override
        Step done(ClientResponse answer, boolean current) {
            // not current: the transaction stays open here, and the reset's recovery reads back where its marker went
            return current ? new MarkerReadBack(state, producer, marker, commit) : null;
        }
    }

    /**
     * Fetches the destination at the source marker's offset until the marker is there (it appears a few milliseconds
     * after EndTxn is answered; the leader holds each Fetch up to {@value #MARKER_WAIT_MS} ms for it), then checks that
     * it is the marker just written.
     */
    private final class MarkerReadBack extends Step {
        private final ReplayProducer producer;
        private final SourceBatch marker;
        private final boolean commit;

        MarkerReadBack(FetchPartition state, ReplayProducer producer, SourceBatch marker, boolean commit) {
            super(
                    state,
                    "the read-back of the " + (commit ? "commit" : "abort") + " marker of " + producer.transactionalId);
            this.producer = producer;
            this.marker = marker;
            this.commit = commit;
        }

        @Override
        Node broker() {
            return host.destinationView().leaders().get(state.tp);
        }

        @Override
        AbstractRequest.Builder<?> request() throws IOException {
            return RawFetch.request(host.destinationView(), state.tp, marker.baseOffset(), 64 * 1024, MARKER_WAIT_MS);
        }

        @Override
        Errors error(AbstractResponse answer) {
            return Errors.NONE; // a partition's error is read with its batches
        }

        @Override
        Step done(ClientResponse answer, boolean current) throws IOException {
            if (!current) {
                return null; // the reset's recovery reads back where the marker went
            }
            List<SourceBatch> landed = RawFetch.batches(answer, host.destinationView(), state.tp, marker.baseOffset());
            if (landed.isEmpty() && System.currentTimeMillis() < deadlineMs) {
                dueNanos = System.nanoTime();
                return this; // asked again at once: the leader holds the next Fetch until something is there
            }
            String misplaced = markerMismatch(landed, marker.baseOffset(), producer, commit);
            state.transactions.closed(producer);
            if (misplaced != null) {
                host.fail(
                        state,
                        "the " + (commit ? "commit" : "abort") + " marker of destination transaction "
                                + producer.transactionalId
                                + " belongs at offset " + marker.baseOffset() + " but " + misplaced
                                + " (another writer, or the destination ended "
                                + "the transaction on its own: transaction.max.timeout.ms, an expired transactional id)");
                return null;
            }
            state.ackedEnd = marker.baseOffset() + 1;
            state.lastEpoch = marker.partitionLeaderEpoch();
            host.markerAppended(state, marker);
            return null;
        }
    }

    /** What is at {@code offset} if it is not the marker just written; null when it is. */
    private String markerMismatch(List<SourceBatch> landed, long offset, ReplayProducer producer, boolean commit) {
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

    /** Makes {@code step} the partition's step under way and sends it if its connection takes it now. */
    private void start(Step step) {
        step.state.replayStep = step;
        send(step);
    }

    /** Sends a step that is due; one whose broker or connection is not ready goes in a later round, until its deadline. */
    private void send(Step step) {
        FetchPartition state = step.state;
        long now = System.nanoTime();
        if (now - step.dueNanos < 0) {
            nextDueNanos = Math.min(nextDueNanos, step.dueNanos);
            return;
        }
        Node broker = step.broker();
        Node connection = broker == null ? null : host.pinned(broker, state);
        if (connection == null || !destination.ready(connection)) {
            if (connection == null) {
                host.refreshDestination();
            }
            if (System.currentTimeMillis() > step.deadlineMs) {
                state.replayStep = null;
                host.reset(
                        state,
                        step.what + ": "
                                + (connection == null ? "no destination leader known" : connection + " not ready")
                                + " within " + timeoutMs + " ms");
            } else if (connection == null) {
                step.dueNanos = now + STEP_BACKOFF.backoff(step.attempts++) * 1_000_000;
                nextDueNanos = Math.min(nextDueNanos, step.dueNanos);
            } // else: connecting; the poll wakes when it is ready
            return;
        }
        AbstractRequest.Builder<?> request;
        try {
            request = step.request();
        } catch (IOException e) {
            state.replayStep = null;
            host.reset(state, step.what + ": " + e.getMessage());
            return;
        }
        step.inFlight = true;
        destination.send(connection, request, response -> answeredGuarded(step, response));
    }

    /** kafka-clients only logs what a completion handler throws: the partition would wait for good. It fails instead. */
    private void answeredGuarded(Step step, ClientResponse response) {
        try {
            answered(step, response);
        } catch (RuntimeException e) {
            step.inFlight = false;
            if (step.state.replayStep == step) {
                step.state.replayStep = null;
            }
            host.fail(step.state, "handling the answer to " + step.what + " failed: " + e);
        }
        destination.wakeup();
    }

    private void answered(Step step, ClientResponse response) {
        FetchPartition state = step.state;
        step.inFlight = false;
        boolean current = state.replayStep == step && step.generation == state.generation && state.sending();
        if (state.replayStep == step) {
            state.replayStep = null;
        }
        if (response.versionMismatch() != null) {
            if (current) {
                host.fail(
                        state,
                        step.what + " refused: " + response.versionMismatch().getMessage());
            }
            return;
        }
        if (response.wasDisconnected() || response.wasTimedOut()) {
            // the request may have been applied (an EndTxn's marker written): the reset reads back what is there
            if (current) {
                host.reset(state, step.what + ": " + (response.wasDisconnected() ? "disconnected" : "timed out"));
            }
            return;
        }
        AbstractResponse answer = response.responseBody();
        Errors error = step.error(answer);
        if (error == Errors.NONE) {
            Step next;
            try {
                next = step.done(response, current);
            } catch (IOException e) {
                if (current) {
                    host.reset(state, step.what + ": " + e.getMessage());
                }
                return;
            }
            if (current && next != null) {
                state.replayStep = next; // sent in the next round, which this poll's end starts
            }
            return;
        }
        if (!current) {
            return;
        }
        if (step.adjusted(error)) {
            step.dueNanos = System.nanoTime();
            state.replayStep = step;
        } else if (!ErrorRules.retriable(error)) {
            host.fail(state, step.what + " refused: " + error.name() + " (" + error.message() + ")");
        } else if (System.currentTimeMillis() > step.deadlineMs) {
            host.reset(state, step.what + " still failing: " + error.name());
        } else {
            // CONCURRENT_TRANSACTIONS while the last marker is written, a coordinator loading or moving
            step.dueNanos = System.nanoTime() + STEP_BACKOFF.backoff(step.attempts++) * 1_000_000;
            state.replayStep = step;
            nextDueNanos = Math.min(nextDueNanos, step.dueNanos);
        }
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
                    DestinationTransactions.endTxn(producer, false),
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
