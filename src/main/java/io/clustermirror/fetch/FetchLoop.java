package io.clustermirror.fetch;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.jboss.logging.Logger;

/**
 * The fetch side of a mirror's data plane, on its own thread: one Fetch in flight per source leader, carrying many
 * partitions, each with the epoch it last fetched (so the leader says when its log diverged: EPOCH_FENCING). Fetched
 * batches are sliced, checked for continuity ({@link BatchContinuity}) and queued for the {@link AppendLoop}, up to
 * {@value #MAX_QUEUED_BYTES_PER_PARTITION} bytes per partition. Every Fetch asks the instance's
 * {@link ReplicationThrottle} first, which every mirror's loop shares.
 */
final class FetchLoop implements Runnable {

    private static final Logger LOGGER = Logger.getLogger(FetchLoop.class);

    static final long MAX_QUEUED_BYTES_PER_PARTITION = 4L << 20;
    static final int PARTITION_FETCH_BYTES = 1 << 20;
    private static final int FETCH_MAX_BYTES = 16 << 20;
    private static final int FETCH_MAX_WAIT_MS = 250;
    /** Fetch v12 (Kafka 2.7) introduced LastFetchedEpoch, which older versions cannot carry. */
    private static final short FIRST_FETCH_WITH_LAST_FETCHED_EPOCH = 12;

    private final Pipeline pipeline;
    private final String mirror;
    private final String sourceClusterId;
    private final Pipeline.Views sourceViews;
    private final WireClient source;
    private final WireClient destination;
    private final DataPlane.Listener listener;
    private final Map<TopicPartition, FetchPartition> partitions;
    private final Set<Integer> fetchingFrom = new HashSet<>();
    private final LoopBackoff backoff;
    private final ReplicationThrottle throttle;
    /** Whether this round held a Fetch back for the instance's replication budget (the poll then waits no longer). */
    private boolean throttled;

    FetchLoop(Pipeline pipeline, String sourceClusterId, Pipeline.Views sourceViews, ReplicationThrottle throttle) {
        this.pipeline = pipeline;
        this.mirror = pipeline.mirror;
        this.sourceClusterId = sourceClusterId;
        this.sourceViews = sourceViews;
        this.source = pipeline.source;
        this.destination = pipeline.destination;
        this.listener = pipeline.listener;
        this.partitions = pipeline.partitions;
        this.backoff = new LoopBackoff(mirror, "fetcher");
        this.throttle = throttle;
    }

    private record FetchContext(
            Node node,
            Map<TopicPartition, FetchPartition.FetchTicket> tickets,
            Map<Uuid, String> topicNames,
            int maxBytes) {}

    /**
     * Runs until the data plane closes. A failure to reach the source (its Admin, a broker) is retried with back-off;
     * anything else that reaches here (an Error, or the network client throwing, which leaves it in an unknown state)
     * ends the loop, and the whole data plane with it: {@link Pipeline#loopDied}.
     */
    @Override
    public void run() {
        try {
            loop();
        } catch (Throwable t) {
            if (pipeline.running) {
                pipeline.loopDied("fetcher", "died", t);
            }
        }
    }

    private void loop() {
        while (pipeline.running) {
            pipeline.fetcherBeat = System.nanoTime();
            try {
                if (pipeline.sourceRefresh) {
                    ClusterView view = pipeline.refresh(sourceViews, source);
                    if (!sourceClusterId.equals(view.clusterId())) {
                        listener.onSourceClusterChanged(view.clusterId());
                        throw new IllegalStateException(
                                "source cluster id is " + view.clusterId() + ", expected " + sourceClusterId);
                    }
                    pipeline.sourceView = view;
                    pipeline.sourceRefresh = false;
                }
                sendFetches();
                backoff.succeeded();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception e) {
                if (pipeline.running) {
                    pipeline.sourceRefresh = true;
                    backoff.failed(e);
                }
                continue;
            }
            source.poll(throttled ? Math.min(500, throttle.delayMs()) : 500);
        }
    }

    private void sendFetches() {
        throttled = false;
        Map<Node, Map<TopicPartition, FetchRequest.PartitionData>> byNode = new HashMap<>();
        Map<Node, Map<TopicPartition, FetchPartition.FetchTicket>> tickets = new HashMap<>();
        ClusterView view = pipeline.sourceView;
        for (FetchPartition state : partitions.values()) {
            Node leader = view.leaders().get(state.tp);
            Uuid topicId = view.topicIds().get(state.tp.topic());
            if (leader == null || topicId == null) {
                pipeline.sourceRefresh = true;
                continue;
            }
            if (fetchingFrom.contains(leader.id())) {
                continue;
            }
            FetchPartition.FetchTicket ticket = state.ticket(MAX_QUEUED_BYTES_PER_PARTITION);
            if (ticket == null) {
                continue;
            }
            Optional<Integer> lastFetchedEpoch =
                    ticket.lastFetchedEpoch() >= 0 ? Optional.of(ticket.lastFetchedEpoch()) : Optional.empty();
            byNode.computeIfAbsent(leader, n -> new HashMap<>())
                    .put(
                            state.tp,
                            new FetchRequest.PartitionData(
                                    topicId,
                                    ticket.fetchOffset(),
                                    -1,
                                    PARTITION_FETCH_BYTES,
                                    Optional.empty(),
                                    lastFetchedEpoch));
            tickets.computeIfAbsent(leader, n -> new HashMap<>()).put(state.tp, ticket);
        }
        byNode.forEach((node, data) -> {
            if (!source.ready(node)) {
                if (source.connectionFailed(node)) {
                    pipeline.sourceRefresh = true;
                }
                tickets.get(node).values().forEach(t -> t.state().fetchDone());
                return;
            }
            if (source.usableVersion(node, ApiKeys.FETCH) < FIRST_FETCH_WITH_LAST_FETCHED_EPOCH) {
                // brokers before 2.7 (Fetch < v12) cannot take the epoch: fetch without it (no EPOCH_FENCING there)
                data.replaceAll((tp, d) -> new FetchRequest.PartitionData(
                        d.topicId,
                        d.fetchOffset,
                        d.logStartOffset,
                        d.maxBytes,
                        d.currentLeaderEpoch,
                        Optional.empty()));
            }
            int maxBytes = throttle.acquire(FETCH_MAX_BYTES, PARTITION_FETCH_BYTES);
            if (maxBytes == 0) { // the instance's replication budget is in debt: sent once it is paid off
                throttled = true;
                tickets.get(node).values().forEach(t -> t.state().fetchDone());
                return;
            }
            fetchingFrom.add(node.id());
            FetchContext context = new FetchContext(node, tickets.get(node), view.topicNames(), maxBytes);
            FetchRequest.Builder request = FetchRequest.Builder.forConsumer(
                            ApiKeys.FETCH.latestVersion(), FETCH_MAX_WAIT_MS, 1, data)
                    .isolationLevel(IsolationLevel.READ_UNCOMMITTED)
                    .setMaxBytes(maxBytes);
            listener.onRequest("fetch", false);
            source.send(node, request, response -> onFetchResponseGuarded(context, response));
        });
    }

    /**
     * kafka-clients only logs what a completion handler throws: the partitions of this Fetch would wait for an answer
     * that never comes. They fail here instead, with the reason.
     */
    private void onFetchResponseGuarded(FetchContext context, ClientResponse response) {
        try {
            onFetchResponse(context, response);
        } catch (RuntimeException e) {
            fetchingFrom.remove(context.node().id());
            String reason = "handling the Fetch response of source broker " + context.node() + " failed: " + e;
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
        fetchingFrom.remove(context.node().id());
        context.tickets().values().forEach(t -> t.state().fetchDone());
        boolean failed = response.wasDisconnected() || response.wasTimedOut() || response.versionMismatch() != null;
        throttle.settle(context.maxBytes(), failed ? 0 : receivedBytes((FetchResponse) response.responseBody()));
        if (failed) {
            listener.onRequest("fetch", true);
            LOGGER.debugf(
                    "Mirror %s: fetch from source broker %s failed (disconnected or timed out)",
                    mirror, context.node());
            pipeline.sourceRefresh = true;
            return;
        }
        FetchResponse fetch = (FetchResponse) response.responseBody();
        if (fetch.error() != Errors.NONE) {
            LOGGER.debugf("Mirror %s: fetch error %s from %s", mirror, fetch.error(), context.node());
            pipeline.sourceRefresh = true;
            return;
        }
        Map<TopicPartition, FetchResponseData.PartitionData> data = fetch.responseData(
                context.topicNames(), response.requestHeader().apiVersion());
        boolean queued = false;
        for (Map.Entry<TopicPartition, FetchResponseData.PartitionData> entry : data.entrySet()) {
            FetchPartition.FetchTicket ticket = context.tickets().get(entry.getKey());
            if (ticket != null && partitions.get(entry.getKey()) == ticket.state()) {
                queued |= onFetchedPartition(ticket, entry.getValue());
            }
        }
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
        synchronized (state) {
            if (state.generation != ticket.generation()
                    || state.fetchOffset != ticket.fetchOffset()
                    || state.removing
                    || state.failed
                    || state.resetPending) {
                return false;
            }
            if (data.highWatermark() >= 0) {
                state.sourceHighWatermark = data.highWatermark();
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
                        state.blocked = plan.blocked(); // what came before it is still appended
                        break;
                    }
                    for (SourceBatch batch : plan.batches()) {
                        state.queue.add(batch);
                        state.queuedBytes += batch.sizeInBytes();
                    }
                    state.fetchOffset = plan.nextOffset();
                    if (sourceBatch.partitionLeaderEpoch() >= 0) {
                        state.fetchedEpoch = sourceBatch.partitionLeaderEpoch();
                    }
                }
            }
        }
        if (failure != null) {
            pipeline.fail(state, failure);
        } else if (fenced != null) {
            pipeline.fence(state, fenced, epochEndOffset);
        }
        return queued;
    }
}
