package io.clustermirror.fetch;

import io.clustermirror.batches.BatchContinuity;
import io.clustermirror.batches.SourceBatch;
import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.WireClient;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.clients.FetchSessionHandler;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.DisconnectException;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.jboss.logging.Logger;

/**
 * The fetch side of a mirror's data plane, on its fetcher's thread: one Fetch in flight per fetcher lane ({@link FetchLanes}:
 * {@code mirror.num.replica.fetchers} connections per source broker, each with an incremental fetch session), carrying
 * many partitions, each with the epoch it last fetched (so the leader says when its log diverged: EPOCH_FENCING).
 * Fetched batches are sliced, checked for continuity ({@link BatchContinuity}) and queued for the {@link AppendLoop},
 * up to {@value #MAX_QUEUED_BYTES_PER_PARTITION} bytes per partition. Every Fetch asks the
 * instance's {@link ReplicationThrottle} first, which every mirror's loop shares.
 */
final class FetchLoop {

    private static final Logger LOGGER = Logger.getLogger(FetchLoop.class);

    static final long MAX_QUEUED_BYTES_PER_PARTITION = 4L << 20;
    /**
     * A partition is fetched again once this much of its queue is free, and asks for all that is free: the broker cuts
     * the last batch of a partition's answer at the byte limit, so few large reads waste less than many small ones.
     */
    static final long MIN_FREE_QUEUE_BYTES = 1L << 20;
    /** What a single read-back of the destination asks for (resets, transaction markers). */
    static final int PARTITION_FETCH_BYTES = 1 << 20;

    private static final int FETCH_MAX_BYTES = 16 << 20;
    /**
     * How long a Fetch of caught-up partitions alone waits on its broker for new data. No longer than a start takes to
     * bring its partitions to the data plane (~0.1 s: the destination topic, two state writes, the LOG_TRUNCATION
     * check): the lane has one Fetch in flight, so a start's partitions wait for the long poll sent before the start
     * began ({@link Pipeline#joining} shortens only the next ones). With 250 ms, a profile of a start on a mirror with
     * caught-up topics showed its first Fetch sent 90 ms after its partitions were added (decisions §13). The price:
     * an idle lane asks its broker ten times a second, not four (Kafka's consumer and replica fetcher wait 500 ms).
     */
    static final int FETCH_MAX_WAIT_MS = 100;
    /** How long a Fetch of caught-up partitions waits on its broker while partitions are about to join. */
    static final int JOINING_WAIT_MS = 10;
    /** A broker that lost or refused the fetch session: the next Fetch starts a new one, nothing else is wrong. */
    private static final Set<Errors> SESSION_ERRORS =
            EnumSet.of(Errors.FETCH_SESSION_ID_NOT_FOUND, Errors.INVALID_FETCH_SESSION_EPOCH);
    /** Fetch v12 (Kafka 2.7) introduced LastFetchedEpoch, which older versions cannot carry. */
    private static final short FIRST_FETCH_WITH_LAST_FETCHED_EPOCH = 12;

    private final Pipeline pipeline;
    private final String mirror;
    private final String sourceClusterId;
    private final WireClient source;
    private final WireClient destination;
    private final DataPlane.Listener listener;
    private final Map<TopicPartition, FetchPartition> partitions;
    private final FetchLanes lanes;
    /** The source view being loaded, or null. */
    private final ViewLoads views;

    private final LoopBackoff backoff;
    private final ReplicationThrottle throttle;
    /** Whether this round held a Fetch back for the replication budget. */
    private boolean heldBack;
    /** How soon (ms) a Fetch this round held back for a partition's room is to go anyway; Long.MAX_VALUE: none held. */
    private long roomWaitMs;

    FetchLoop(
            Pipeline pipeline,
            String sourceClusterId,
            Pipeline.Views sourceViews,
            int fetchersPerBroker,
            ReplicationThrottle throttle) {
        this.pipeline = pipeline;
        this.mirror = pipeline.mirror;
        this.sourceClusterId = sourceClusterId;
        this.views = new ViewLoads(sourceViews, pipeline.source::wakeup);
        this.source = pipeline.source;
        this.destination = pipeline.destination;
        this.listener = pipeline.listener;
        this.partitions = pipeline.partitions;
        this.backoff = new LoopBackoff(mirror, "fetcher");
        this.lanes = new FetchLanes(fetchersPerBroker, source, mirror);
        this.throttle = throttle;
    }

    /**
     * A Fetch in flight: its lane, what each partition in it was fetched from, the bytes it asked for (the budget holds
     * them for it), the bytes the throttle granted it when sent (0 for a long poll), whether that has been settled.
     */
    private record FetchContext(
            FetchLanes.Lane lane,
            Map<TopicPartition, FetchPartition.FetchTicket> tickets,
            int maxBytes,
            int granted,
            AtomicBoolean settled) {}

    /**
     * One round on the fetcher's thread: takes up a loaded view of the source (a new load when one was asked for and none
     * is under way), then sends the Fetches that can go; their answers are handled when the fetcher polls. A failure to
     * reach the source backs off without sleeping; anything else that escapes (an Error) ends this data plane.
     *
     * @return how long the fetcher may poll before this loop wants another round (a Fetch held back for the
     *     replication budget goes when the budget is paid off), or {@code Long.MAX_VALUE}
     */
    long round() {
        pipeline.fetcherBeat = System.nanoTime();
        heldBack = false;
        roomWaitMs = Long.MAX_VALUE;
        takeUpView();
        if (backoff.waiting()) {
            return Long.MAX_VALUE;
        }
        if (views.start(pipeline.sourceRefresh, pipeline::topics)) {
            pipeline.sourceRefresh = false;
            takeUpView(); // a view at hand (tests) is used at once
        }
        try {
            sendFetches();
        } catch (RuntimeException e) {
            pipeline.sourceRefresh = true;
            backoff.failed(e);
        }
        return Math.min(roomWaitMs, heldBack ? throttle.delayMs() : Long.MAX_VALUE);
    }

    private void takeUpView() {
        try {
            ClusterView view = views.finished();
            if (view == null) {
                return;
            }
            if (!sourceClusterId.equals(view.clusterId())) {
                pipeline.sourceView = ClusterView.empty(); // nothing is fetched from another cluster
                listener.onSourceClusterChanged(view.clusterId());
                throw new IllegalStateException(
                        "source cluster id is " + view.clusterId() + ", expected " + sourceClusterId);
            }
            pipeline.sourceView = view;
            backoff.succeeded();
        } catch (Exception e) {
            pipeline.sourceRefresh = true;
            backoff.failed(e);
        }
    }

    private void sendFetches() {
        for (FetchLanes.Lane lane : lanes.all()) {
            lane.heldBack = false;
        }
        try {
            sendLaneFetches();
        } finally {
            // a lane not held back this round waits no more (its Fetch went, or it had nothing to ask for)
            for (FetchLanes.Lane lane : lanes.all()) {
                if (!lane.heldBack) {
                    throttled(lane, false);
                }
            }
        }
    }

    /**
     * A lane's throttle time, told as it accrues (so that a long wait shows before it ends): the time since the last
     * report while it is held back ({@code still}), and once more when the wait ends.
     */
    private void throttled(FetchLanes.Lane lane, boolean still) {
        long since = lane.throttledSinceMs;
        if (since < 0 && !still) {
            return;
        }
        long now = throttle.nowMs();
        lane.throttledSinceMs = still ? now : -1;
        if (since >= 0 && now > since) {
            listener.onThrottled(lane.broker, lane.index, now - since);
        }
    }

    private void sendLaneFetches() {
        ClusterView view = pipeline.sourceView;
        Map<FetchLanes.Lane, List<FetchPartition>> byLane = new LinkedHashMap<>();
        boolean withoutLeader = false;
        for (FetchPartition state : partitions.values()) {
            Node leader = view.leaders().get(state.tp);
            if (leader == null || !view.topicIds().containsKey(state.tp.topic())) {
                pipeline.sourceRefresh = true;
                withoutLeader = true;
                continue;
            }
            FetchLanes.Lane lane = lanes.lane(leader, state.tp);
            if (!lane.inFlight) {
                byLane.computeIfAbsent(lane, l -> new ArrayList<>()).add(state);
            }
        }
        // while partitions are about to join, or have joined and wait for the view that names their leaders, a Fetch
        // of caught-up partitions holds its lane only briefly
        int maxWaitMs =
                pipeline.joining() || (withoutLeader && pipeline.joinedLately()) ? JOINING_WAIT_MS : FETCH_MAX_WAIT_MS;
        byLane.forEach((lane, candidates) -> {
            if (!source.ready(lane.node)) {
                if (source.connectionFailed(lane.node)) {
                    pipeline.sourceRefresh = true;
                }
                return;
            }
            // brokers before 2.7 (Fetch < v12) cannot take the epoch: fetch without it (no EPOCH_FENCING there)
            boolean withEpochs = source.usableVersion(lane.node, ApiKeys.FETCH) >= FIRST_FETCH_WITH_LAST_FETCHED_EPOCH;
            FetchSessionHandler.Builder session = lane.session.newBuilder();
            Map<TopicPartition, FetchPartition.FetchTicket> tickets = new HashMap<>();
            // a full Fetch is answered in request order, and only its first partition may exceed its byte limit: the
            // first place goes round (an incremental session's order is the broker's, which also rotates)
            int first = Math.floorMod(lane.fetches++, candidates.size());
            for (int i = 0; i < candidates.size(); i++) {
                FetchPartition state = candidates.get((first + i) % candidates.size());
                FetchPartition.FetchTicket ticket = state.ticket(MAX_QUEUED_BYTES_PER_PARTITION, MIN_FREE_QUEUE_BYTES);
                if (ticket == null) {
                    continue;
                }
                Optional<Integer> lastFetchedEpoch = withEpochs && ticket.lastFetchedEpoch() >= 0
                        ? Optional.of(ticket.lastFetchedEpoch())
                        : Optional.empty();
                session.add(
                        state.tp,
                        new FetchRequest.PartitionData(
                                view.topicIds().get(state.tp.topic()),
                                ticket.fetchOffset(),
                                -1,
                                ticket.maxBytes(),
                                Optional.empty(),
                                lastFetchedEpoch));
                tickets.put(state.tp, ticket);
            }
            if (tickets.isEmpty()) {
                return; // nothing to ask for; the session forgets these partitions with the next Fetch
            }
            // a long poll (every partition caught up; the broker holds it until data comes) mostly brings nothing: it
            // is not sent while a partition of its lane waits for room; it asks for one partition's fetch size, so
            // that idle lanes hold little of the budget through the broker's wait; the throttle charges it what it
            // brings, when it brings it
            boolean longPoll = tickets.values().stream().allMatch(t -> t.state().caughtUp());
            if (longPoll && waitsForRoom(lane, candidates)) {
                tickets.values().forEach(t -> t.state().fetchDone());
                return;
            }
            int wanted = longPoll
                    ? PARTITION_FETCH_BYTES
                    : (int) Math.min(FETCH_MAX_BYTES, Math.max(MIN_FREE_QUEUE_BYTES, pipeline.budget.available()));
            int maxBytes = longPoll
                    ? throttle.allowance(wanted, PARTITION_FETCH_BYTES)
                    : throttle.acquire(wanted, PARTITION_FETCH_BYTES);
            if (maxBytes == 0) { // the instance's replication budget is in debt: sent once it is paid off
                heldBack = true;
                lane.heldBack = true;
                throttled(lane, true);
                tickets.values().forEach(t -> t.state().fetchDone());
                return;
            }
            FetchContext context =
                    new FetchContext(lane, tickets, maxBytes, longPoll ? 0 : maxBytes, new AtomicBoolean());
            // the answer's bytes are held against the instance's budget until they are queued (at most a grant each)
            pipeline.budget.add(maxBytes);
            try {
                FetchSessionHandler.FetchRequestData data = session.build();
                // Fetch v12 is the newest that works without topic ids (sources before 2.8)
                short maxVersion = data.canUseTopicIds() ? ApiKeys.FETCH.latestVersion() : (short) 12;
                FetchRequest.Builder request = FetchRequest.Builder.forConsumer(maxVersion, maxWaitMs, 1, data.toSend())
                        .isolationLevel(IsolationLevel.READ_UNCOMMITTED)
                        .setMaxBytes(maxBytes)
                        .metadata(data.metadata())
                        .removed(data.toForget())
                        .replaced(data.toReplace());
                lane.inFlight = true;
                listener.onRequest("fetch", false);
                source.send(lane.node, request, response -> onFetchResponseGuarded(context, response));
            } catch (RuntimeException e) {
                // nothing went out: the grant, the budget and the partitions are free again, the session starts anew
                settle(context, 0);
                lane.inFlight = false;
                lane.session.handleError(e);
                tickets.values().forEach(t -> t.state().fetchDone());
                throw e;
            }
        });
    }

    /**
     * Whether the lane's long poll waits for a partition's room: a Fetch of caught-up partitions alone waits on the broker
     * for up to {@value #FETCH_MAX_WAIT_MS} ms, and holds the lane that long (one Fetch in flight), while a partition of
     * the lane that is behind, its queue full, gets its room back within milliseconds, as its batches are appended. So
     * such a Fetch is not sent while one waits for room, for at most {@value #FETCH_MAX_WAIT_MS} ms after the lane's
     * last answer: the Fetch that goes when room comes back (an append answer wakes the fetcher) carries them all.
     * Measured (with the 250 ms wait then): a lagging topic next to a caught-up one was copied in bursts, its queues
     * empty for 250 ms out of every ~300 (decisions §13).
     */
    private boolean waitsForRoom(FetchLanes.Lane lane, List<FetchPartition> candidates) {
        long waitMs = lane.answeredAtMs + FETCH_MAX_WAIT_MS - throttle.nowMs();
        if (waitMs <= 0
                || candidates.stream()
                        .noneMatch(s -> s.waitsForRoom(MAX_QUEUED_BYTES_PER_PARTITION, MIN_FREE_QUEUE_BYTES))) {
            return false;
        }
        roomWaitMs = Math.min(roomWaitMs, waitMs);
        return true;
    }

    /** Once per Fetch: the throttle is charged what came back, and the budget's hold on the answer ends. */
    private void settle(FetchContext context, long received) {
        if (context.settled().compareAndSet(false, true)) {
            throttle.settle(context.granted(), received);
            pipeline.budget.release(context.maxBytes());
        }
    }

    /**
     * kafka-clients only logs what a completion handler throws: the partitions of this Fetch would wait for an answer
     * that never comes. They fail here instead, with the reason.
     */
    private void onFetchResponseGuarded(FetchContext context, ClientResponse response) {
        try {
            onFetchResponse(context, response);
        } catch (RuntimeException e) {
            settle(context, 0);
            context.lane().inFlight = false;
            context.lane().session.handleError(e);
            String reason = "handling the Fetch response of source broker " + context.lane().broker + " failed: " + e;
            LOGGER.debugf(e, "Mirror %s: %s", mirror, reason);
            context.tickets().values().forEach(ticket -> {
                ticket.state().fetchDone();
                if (partitions.get(ticket.state().tp) == ticket.state()) {
                    pipeline.fail(ticket.state(), reason);
                }
            });
        }
    }

    private void onFetchResponse(FetchContext context, ClientResponse response) {
        FetchLanes.Lane lane = context.lane();
        lane.inFlight = false;
        lane.answeredAtMs = throttle.nowMs();
        context.tickets().values().forEach(t -> t.state().fetchDone());
        boolean failed = response.wasDisconnected() || response.wasTimedOut() || response.versionMismatch() != null;
        long received = failed ? 0 : receivedBytes((FetchResponse) response.responseBody());
        settle(context, received);
        if (failed) {
            listener.onRequest("fetch", true);
            lane.session.handleError(
                    response.versionMismatch() != null
                            ? response.versionMismatch()
                            : new DisconnectException("disconnected or timed out"));
            LOGGER.debugf(
                    "Mirror %s: fetch from source broker %d (fetcher %d) failed (disconnected or timed out)",
                    mirror, lane.broker, lane.index);
            pipeline.sourceRefresh = true;
            return;
        }
        FetchResponse fetch = (FetchResponse) response.responseBody();
        short version = response.requestHeader().apiVersion();
        if (!lane.session.handleResponse(fetch, version)) {
            // the session is started again with the next Fetch; other errors may mean stale metadata
            if (!SESSION_ERRORS.contains(fetch.error())) {
                LOGGER.debugf("Mirror %s: fetch error %s from source broker %d", mirror, fetch.error(), lane.broker);
                pipeline.sourceRefresh = true;
            }
            return;
        }
        Map<TopicPartition, FetchResponseData.PartitionData> data =
                fetch.responseData(lane.session.sessionTopicNames(), version);
        boolean queued = false;
        for (Map.Entry<TopicPartition, FetchResponseData.PartitionData> entry : data.entrySet()) {
            FetchPartition.FetchTicket ticket = context.tickets().get(entry.getKey());
            if (ticket != null && partitions.get(entry.getKey()) == ticket.state()) {
                queued |= onFetchedPartition(ticket, entry.getValue());
            }
        }
        listener.onFetched(lane.broker, lane.index, received);
        if (queued) {
            destination.wakeup();
        }
    }

    /** The record bytes a Fetch answer brought, cut batches included: what the replication budget is charged. */
    private static long receivedBytes(FetchResponse fetch) {
        long bytes = 0;
        for (FetchResponseData.FetchableTopicResponse topic : fetch.data().responses()) {
            for (FetchResponseData.PartitionData partition : topic.partitions()) {
                bytes += partition.records() == null ? 0 : partition.records().sizeInBytes();
            }
        }
        return bytes;
    }

    private boolean onFetchedPartition(FetchPartition.FetchTicket ticket, FetchResponseData.PartitionData data) {
        FetchPartition state = ticket.state();
        Errors error = Errors.forCode(data.errorCode());
        String failure = null;
        String fenced = null;
        long epochEndOffset = -1;
        boolean queued = false;
        if (state.generation != ticket.generation()
                || state.fetchOffset != ticket.fetchOffset()
                || !(state.phase() instanceof FetchPartition.Fetching)) {
            return false; // reset, removed or failed since the Fetch went
        }
        if (data.highWatermark() >= 0) {
            state.sourceHighWatermark = data.highWatermark();
            if (error == Errors.NONE) {
                state.sourceSeenAtMs = System.currentTimeMillis();
            }
        }
        if (error == Errors.NONE && data.divergingEpoch().epoch() >= 0) {
            epochEndOffset = data.divergingEpoch().endOffset();
            fenced = SourceDivergence.describe(
                    ticket.lastFetchedEpoch(),
                    ticket.fetchOffset(),
                    data.divergingEpoch().epoch(),
                    epochEndOffset);
        } else if (error == Errors.OFFSET_OUT_OF_RANGE) {
            failure = SourceDivergence.outOfRange(state.fetchOffset, data.logStartOffset(), data.highWatermark());
        } else if (ErrorRules.retriable(error)) {
            pipeline.sourceRefresh = true;
        } else if (error != Errors.NONE) {
            failure = "source fetch failed: " + error.name() + " (" + error.message() + ")";
        } else {
            MemoryRecords records = (MemoryRecords) FetchResponse.recordsOrFail(data);
            for (SourceBatch sourceBatch : SourceBatch.slices(records)) {
                if (sourceBatch.lastOffset() < state.fetchOffset) {
                    continue;
                }
                BatchContinuity.Plan plan = BatchContinuity.plan(sourceBatch, state.fetchOffset);
                queued = true;
                if (plan.isBlocked()) {
                    state.block(plan.blocked()); // what came before it is still appended
                    break;
                }
                for (SourceBatch batch : plan.batches()) {
                    state.enqueue(batch);
                }
                state.fetchOffset = plan.nextOffset();
                if (sourceBatch.partitionLeaderEpoch() >= 0) {
                    state.fetchedEpoch = sourceBatch.partitionLeaderEpoch();
                }
            }
        }
        if (queued) {
            state.noteUnmirrored();
        }
        if (failure != null) {
            pipeline.fail(state, failure);
        } else if (fenced != null) {
            pipeline.fence(state, fenced, epochEndOffset);
        }
        return queued;
    }
}
