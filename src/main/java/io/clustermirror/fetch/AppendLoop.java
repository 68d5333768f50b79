package io.clustermirror.fetch;

import io.clustermirror.batches.SourceBatch;
import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.WireClient;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.jboss.logging.Logger;

/**
 * The append side of a mirror's data plane, as rounds on its fetcher's thread: the fetched batches go to the destination leaders as
 * they are (one batch per partition per Produce, up to {@value #MAX_PRODUCE_REQUEST_BYTES} bytes of batches per
 * request, up to {@value #MAX_IN_FLIGHT_PER_PARTITION} in flight per partition under the partition's own idempotent
 * producer id), and every answer is checked: a batch lands at its source offset or the partition stops. Batches whose
 * answers were lost are sent again as they are ({@link LostAnswers}); transactional batches go through
 * {@link TransactionReplay}. Removals finish here, once nothing of a partition is in flight or unanswered.
 */
final class AppendLoop {

    private static final Logger LOGGER = Logger.getLogger(AppendLoop.class);

    static final int MAX_IN_FLIGHT_PER_PARTITION = 5;
    /** How soon a data plane looks at its append lease again while it is not valid. */
    static final long LEASE_RECHECK_MS = 50;
    /**
     * Connections of a fetcher to each destination broker, its partitions pinned to one each: a broker handles one
     * request per connection at a time, so no broker validates a fetcher's batches on one request thread alone.
     */
    static final int CONNECTIONS_PER_BROKER = 2;
    /** The least time between two read-backs of the destination's open transactions while one is still completing. */
    private static final long RECOVERY_SPACING_MS = 100;
    /** How long the stop of a partition outside the data plane waits to read back the transactions left open on it. */
    private static final long LEFT_OPEN_WAIT_NANOS = 10_000_000_000L;
    /**
     * The bytes of batches one Produce request carries at most (a request always takes one): decisions §34. Unbounded,
     * a request to a broker leading thousands of partitions could pass its {@code socket.request.max.bytes} (100 MiB),
     * be dropped with the connection, and be built again.
     */
    static final int MAX_PRODUCE_REQUEST_BYTES = 1 << 20;

    private final Pipeline pipeline;
    private final String mirror;
    private final WireClient source;
    private final WireClient destination;
    private final DataPlane.Listener listener;
    private final Map<TopicPartition, FetchPartition> partitions;
    private final long timeoutMs;
    private final TransactionReplay replay;
    private final TransactionRecovery recovery;
    private final PipelineReset resets;
    private final LostAnswers lostAnswers;
    private final ProduceRounds produces;
    private final ProducerIds producerIds;
    private final LoopBackoff backoff;
    private final LoopBackoff recoveryBackoff;
    private long nextRecoveryAttemptMs;
    private final ViewLoads views;

    private long recoveryFailingSinceMs;

    AppendLoop(Pipeline pipeline, Pipeline.Views destinationViews, TransactionRecovery recovery) {
        this.pipeline = pipeline;
        this.views = new ViewLoads(destinationViews, pipeline.destination::wakeup);
        this.mirror = pipeline.mirror;
        this.source = pipeline.source;
        this.destination = pipeline.destination;
        this.listener = pipeline.listener;
        this.partitions = pipeline.partitions;
        this.timeoutMs = pipeline.timeoutMs;
        this.replay = new TransactionReplay(mirror, destination, (int) timeoutMs, new ReplayHost());
        this.recovery = recovery;
        this.resets = new PipelineReset(pipeline);
        this.lostAnswers = new LostAnswers(
                pipeline, (leader, state, sent, request) -> send(leader, Map.of(state.tp, sent), request));
        this.produces = new ProduceRounds(pipeline, MAX_PRODUCE_REQUEST_BYTES, MAX_IN_FLIGHT_PER_PARTITION, this::send);
        this.producerIds = new ProducerIds(pipeline);
        this.backoff = new LoopBackoff(mirror, "appender");
        this.recoveryBackoff = new LoopBackoff(mirror, "reading back its open destination transactions");
    }

    private record ProduceContext(
            Node node, Map<TopicPartition, FetchPartition.Sent> sent, Map<Uuid, String> topicNames) {}

    /**
     * One round on the fetcher's thread: takes up a loaded view of the destination (a new load when one was asked for
     * and none is under way), finishes removals and resets, then sends what can go; the answers are handled when the
     * fetcher polls. A failure to reach the destination backs off without sleeping; anything else that escapes (an
     * Error) ends this data plane.
     *
     * @return how long the fetcher may poll before a transaction step is due again (ms); Long.MAX_VALUE: no bound
     */
    long round() {
        pipeline.appenderBeat = System.nanoTime();
        takeUpView();
        if (backoff.waiting()) {
            return Long.MAX_VALUE;
        }
        if (views.start(pipeline.destinationRefresh, pipeline::topics)) {
            pipeline.destinationRefresh = false;
            takeUpView(); // a view at hand (tests) is used at once
        }
        if (!pipeline.lease.valid()) {
            leaveWithoutSending();
            return LEASE_RECHECK_MS;
        }
        try {
            finishRemovalsAndResets();
            producerIds.request(partitions.values());
            recoverTransactions();
            long replayDueMs = replay.replay(partitions.values());
            lostAnswers.sendDue(partitions.values());
            produces.send(partitions.values());
            return replayDueMs;
        } catch (RuntimeException e) {
            pipeline.destinationRefresh = true;
            backoff.failed(e);
            return Long.MAX_VALUE;
        }
    }

    private void takeUpView() {
        try {
            ClusterView view = views.finished();
            if (view != null) {
                pipeline.destinationView = view;
                backoff.succeeded();
            }
        } catch (Exception e) {
            pipeline.destinationRefresh = true;
            backoff.failed(e);
        }
    }

    /**
     * What the phase of each partition of which nothing is in flight asks for: a drained Blocked one fails with its
     * reason, a Removing or Failed one leaves (after its lost answers, and the aborts of its transactions), a Resetting
     * one takes its next step.
     */
    private void finishRemovalsAndResets() {
        for (Iterator<FetchPartition> it = partitions.values().iterator(); it.hasNext(); ) {
            FetchPartition state = it.next();
            if (!state.inFlight.isEmpty() || TransactionReplay.stepInFlight(state)) {
                continue; // what the answers say is known first
            }
            FetchPartition.Phase phase = state.phase();
            if (phase instanceof FetchPartition.Blocked) {
                String blocked = state.blockedAndDrained();
                if (blocked != null) {
                    pipeline.fail(state, blocked);
                }
            } else if (phase instanceof FetchPartition.Removing removing) {
                if (!state.unconfirmed.isEmpty() && !lostAnswers.expired(state)) {
                    // the removal waits for the retries (after a reset, for their bound without re-sending): a batch
                    // still landing after it would be a stranger's
                    continue;
                }
                if (mayLeave(state, removing.abortTransactions(), removing.leftOpenSinceNanos())) {
                    it.remove();
                    pipeline.left(state);
                }
            } else if (phase instanceof FetchPartition.Failed failed) {
                if (mayLeave(state, failed.abortTransactions(), 0)) {
                    it.remove();
                    pipeline.left(state);
                }
            } else if (phase instanceof FetchPartition.Resetting resetting) {
                if (!state.transactions.settling()) {
                    resets.step(state, resetting);
                } else if (System.nanoTime() - resetting.requestedAtNanos() > 4_000_000L * timeoutMs) {
                    pipeline.fail(
                            state,
                            "after a pipeline reset, a destination transaction of this partition was still writing its marker "
                                    + (4 * timeoutMs)
                                    + " ms later (PREPARE_COMMIT or PREPARE_ABORT); its end is checked "
                                    + "again by LOG_TRUNCATION");
                }
            }
        }
    }

    /**
     * While the lease is not valid nothing is sent, so a leaving partition goes once its requests under way are
     * answered, without its retries and aborts: this instance may have lost the mirror to another, which reads the
     * destination's end when it resumes, and whose first batch fences whatever of ours lands later (decisions §48).
     */
    private void leaveWithoutSending() {
        for (Iterator<FetchPartition> it = partitions.values().iterator(); it.hasNext(); ) {
            FetchPartition state = it.next();
            FetchPartition.Phase phase = state.phase();
            if (state.inFlight.isEmpty()
                    && !TransactionReplay.stepInFlight(state)
                    && (phase instanceof FetchPartition.Removing || phase instanceof FetchPartition.Failed)) {
                if (!state.unconfirmed.isEmpty() || state.transactions.settling()) {
                    LOGGER.warnf(
                            "Mirror %s: %s leaves without sending its retries or aborts: this instance may no longer"
                                    + " own it (its append lease lapsed)",
                            mirror, state.partition);
                }
                it.remove();
                pipeline.left(state);
            }
        }
    }

    /**
     * Whether a leaving partition may go now: without {@code abort}, at once; with it, once the destination transactions
     * held open for it are aborted, or (a partition outside the data plane, {@code leftOpenSince} ≠ 0) once those left
     * open on it have been read back and aborted, or could not be read back within 10 s.
     */
    private boolean mayLeave(FetchPartition state, boolean abort, long leftOpenSince) {
        if (!abort) {
            return true;
        }
        if (leftOpenSince != 0 && state.transactions.recoveryNeeded) {
            if (System.nanoTime() - leftOpenSince < LEFT_OPEN_WAIT_NANOS) {
                return false; // its open transactions are read back first (recoverTransactions)
            }
            LOGGER.errorf(
                    "Mirror %s: %s stopped, but the destination transactions left open on it could not be read back within "
                            + "10 s; the destination aborts them after their transaction timeout",
                    mirror, state.partition);
            return true;
        }
        return replay.abortOpen(state); // false while its EndTxn answers are still to come
    }

    /**
     * kafka-clients only logs what a completion handler throws: the batches of this Produce would stay in flight for
     * good, and their partitions with them. They fail here instead, with the reason.
     */
    private void onProduceResponseGuarded(ProduceContext context, ClientResponse response) {
        try {
            onProduceResponse(context, response);
        } catch (RuntimeException e) {
            String reason = "handling the Produce response of destination broker " + context.node() + " failed: " + e;
            LOGGER.debugf(e, "Mirror %s: %s", mirror, reason);
            context.sent().forEach((tp, sent) -> {
                FetchPartition state = partitions.get(tp);
                if (state != null && state.inFlight.remove(sent)) {
                    pipeline.fail(state, reason);
                }
            });
            source.wakeup();
        }
    }

    private void onProduceResponse(ProduceContext context, ClientResponse response) {
        boolean failedRequest =
                response.wasDisconnected() || response.wasTimedOut() || response.versionMismatch() != null;
        if (failedRequest) {
            listener.onRequest("produce", true);
        }
        Map<TopicPartition, ProduceResponseData.PartitionProduceResponse> results = new HashMap<>();
        if (!failedRequest) {
            ProduceResponse produce = (ProduceResponse) response.responseBody();
            for (ProduceResponseData.TopicProduceResponse topic : produce.data().responses()) {
                String name = topic.name() != null && !topic.name().isEmpty()
                        ? topic.name()
                        : context.topicNames().get(topic.topicId());
                topic.partitionResponses().forEach(p -> results.put(new TopicPartition(name, p.index()), p));
            }
        }
        boolean wakeFetcher = false;
        for (Map.Entry<TopicPartition, FetchPartition.Sent> entry :
                context.sent().entrySet()) {
            FetchPartition state = partitions.get(entry.getKey());
            if (state == null) {
                continue;
            }
            FetchPartition.Sent sent = entry.getValue();
            if (!state.inFlight.remove(sent)) {
                continue; // an answer for an earlier instance of this partition
            }
            wakeFetcher = true;
            ProduceResponseData.PartitionProduceResponse result = results.get(entry.getKey());
            if (state.phase() instanceof FetchPartition.Failed) {
                continue;
            }
            boolean appended = result != null && Errors.forCode(result.errorCode()) == Errors.NONE;
            if (sent.generation() != state.generation) {
                // dropped by a reset, but if it was appended it must still be where it belongs; if not, the reset
                // reads back whether it landed
                if (appended && result.baseOffset() != sent.batch().baseOffset()) {
                    pipeline.fail(state, misplaced(sent.batch(), result.baseOffset()));
                } else if (appended) {
                    confirmed(state, sent.batch());
                } else {
                    state.unconfirmed.put(sent.batch().baseOffset(), sent);
                }
                continue;
            }
            if (result == null) {
                if (failedRequest) {
                    pipeline.destinationRefresh = true; // the broker may have gone, and its leaderships with it
                }
                lostAnswers.lost(
                        state,
                        sent,
                        failedRequest
                                ? "destination request to " + context.node() + " failed"
                                : "no answer for the partition");
                continue;
            }
            onAnswered(state, sent, result);
        }
        if (wakeFetcher) {
            source.wakeup();
        }
    }

    private void onAnswered(
            FetchPartition state, FetchPartition.Sent sent, ProduceResponseData.PartitionProduceResponse result) {
        SourceBatch batch = sent.batch();
        Errors error = Errors.forCode(result.errorCode());
        switch (ErrorRules.verdict(error, earlierUnsettled(state, batch))) {
            case APPENDED -> {
                // a copy of a batch that did land is answered with the original's offset: the same check holds
                if (result.baseOffset() != batch.baseOffset()) {
                    pipeline.fail(
                            state,
                            misplaced(batch, result.baseOffset())
                                    + (state.unconfirmed.containsKey(batch.baseOffset())
                                            ? " (it was sent again after a lost answer: the destination no longer had"
                                                    + " the producer state to recognise it, see producer.id.expiration.ms)"
                                            : ""));
                } else {
                    confirmed(state, batch);
                }
            }
            case RETRY -> {
                if (ErrorRules.staleMetadata(error)) {
                    pipeline.destinationRefresh = true;
                }
                lostAnswers.lost(state, sent, error.name());
            }
            case RESET -> {
                if (ErrorRules.fenced(error) && sent.transactionalId() == null) {
                    pipeline.fail(
                            state,
                            "fenced: the destination holds a newer epoch of this partition's producer id ("
                                    + error.name()
                                    + "): another instance took the mirror over and appends to it; this one stops");
                } else {
                    state.unconfirmed.put(batch.baseOffset(), sent); // it may have landed: the reset reads it back
                    pipeline.requestReset(state, error.name());
                }
            }
            case FAIL -> {
                String message = result.errorMessage() == null ? error.message() : result.errorMessage();
                pipeline.fail(
                        state,
                        "destination refused source batch [" + batch.baseOffset() + ".." + batch.lastOffset() + "]: "
                                + error.name() + " (" + message + ")");
            }
        }
    }

    /** Whether a batch sent before {@code batch} is still unanswered or waits for its retry. */
    private static boolean earlierUnsettled(FetchPartition state, SourceBatch batch) {
        if (state.unconfirmed.lowerKey(batch.baseOffset()) != null) {
            return true;
        }
        for (FetchPartition.Sent sent : state.inFlight) {
            if (sent.batch().baseOffset() < batch.baseOffset()) {
                return true;
            }
        }
        return false;
    }

    private void confirmed(FetchPartition state, SourceBatch batch) {
        lostAnswers.acknowledged(state, batch);
        if (batch.lastOffset() + 1 > state.ackedEnd) {
            state.ackedEnd = batch.lastOffset() + 1;
            if (batch.partitionLeaderEpoch() >= 0) { // fillers carry none
                state.lastEpoch = batch.partitionLeaderEpoch();
            }
        }
        state.appended(batch.recordCount(), batch.sizeInBytes());
        state.noteUnmirrored();
        listener.onAppended(state.partition, batch.recordCount(), batch.sizeInBytes());
    }

    private static String misplaced(SourceBatch batch, long destinationOffset) {
        return "source batch [" + batch.baseOffset() + ".." + batch.lastOffset()
                + "] was appended at destination offset "
                + destinationOffset + " instead of " + batch.baseOffset()
                + ": the destination was written by another producer (or lost data); mirroring stopped";
    }

    /** Sends a Produce whose batches ({@code sent}, by partition) are in flight; its answer is checked here. */
    private void send(Node node, Map<TopicPartition, FetchPartition.Sent> sent, ProduceRequest.Builder request) {
        ProduceContext context = new ProduceContext(node, sent, pipeline.destinationView.topicNames());
        listener.onRequest("produce", false);
        destination.send(node, request, response -> onProduceResponseGuarded(context, response));
    }

    // ---------------------------------------------------------------- transactions (DESIGN §4.2)

    /**
     * Reads back the destination transactions this mirror holds open on partitions that just entered the
     * data plane or were reset (after a restart, resume or retry): they are continued with their producer
     * id, epoch and next sequence, never re-initialised, which would abort them and put a marker where the
     * source has none. Transactions still writing their markers are waited for.
     */
    private void recoverTransactions() {
        List<FetchPartition> recovering = List.of();
        for (FetchPartition s : partitions.values()) {
            if (s.transactions.recoveryNeeded && s.inFlight.isEmpty() && !TransactionReplay.stepInFlight(s)) {
                if (recovering.isEmpty()) {
                    recovering = new ArrayList<>();
                }
                recovering.add(s);
            }
        }
        if (recovering.isEmpty() && !recovery.underWay()) {
            return; // the common case, every round: nothing to recover, nothing under way
        }
        try {
            // a listing that goes through does not end the failing streak while a description keeps failing
            if (recovery.takeUp(recovering, pipeline.destinationView) && !recovery.failing()) {
                recoveryBackoff.succeeded();
                recoveryFailingSinceMs = 0;
            }
            if (!recovering.isEmpty() && !recovery.underWay() && System.currentTimeMillis() >= nextRecoveryAttemptMs) {
                // a marker still being written is read again, but not every turn: ListTransactions covers the cluster
                nextRecoveryAttemptMs = System.currentTimeMillis() + RECOVERY_SPACING_MS;
                recovery.start();
            }
        } catch (Exception e) {
            // plain batches go on; transactional ones wait until the open transactions are known, then give up
            long now = System.currentTimeMillis();
            nextRecoveryAttemptMs = now + 5_000;
            recoveryFailingSinceMs = recoveryFailingSinceMs == 0 ? now : recoveryFailingSinceMs;
            recoveryBackoff.report(e);
            if (now - recoveryFailingSinceMs > 4 * timeoutMs) {
                recovering.stream()
                        .filter(state -> TransactionReplay.replayed(state.peekQueue()) || state.transactions.settling())
                        .forEach(state -> pipeline.fail(
                                state,
                                "the destination transactions open on this partition cannot be read back (ListTransactions, DescribeTransactions, "
                                        + "DescribeProducers; the service principal needs DESCRIBE on its transactional ids): "
                                        + e));
            }
        }
    }

    /** What the transaction replay needs from the data plane. */
    private final class ReplayHost implements TransactionReplay.Host {
        @Override
        public ClusterView destinationView() {
            return pipeline.destinationView;
        }

        @Override
        public void refreshDestination() {
            pipeline.destinationRefresh = true;
        }

        @Override
        public void fail(FetchPartition state, String error) {
            pipeline.fail(state, error);
        }

        @Override
        public void reset(FetchPartition state, String reason) {
            pipeline.requestReset(state, reason);
        }

        @Override
        public void send(Node leader, FetchPartition state, FetchPartition.Sent entry, ProduceRequest.Builder request) {
            AppendLoop.this.send(leader, Map.of(state.tp, entry), request);
        }

        @Override
        public Node pinned(Node broker, FetchPartition state) {
            return pipeline.pinned(broker, state.tp);
        }

        @Override
        public void markerAppended(FetchPartition state, SourceBatch marker) {
            state.appended(1, marker.sizeInBytes());
            listener.onAppended(state.partition, 1, marker.sizeInBytes());
        }
    }
}
