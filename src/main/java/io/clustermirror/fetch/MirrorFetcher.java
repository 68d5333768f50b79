package io.clustermirror.fetch;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.jboss.logging.Logger;

import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.OpenTransaction;

/**
 * The data plane of one mirror: a fetch thread pulls raw record batches from the source partition
 * leaders (one Fetch in flight per broker, many partitions each), an append thread produces the same
 * bytes to the destination leaders (one batch per partition per request, up to
 * {@value #MAX_IN_FLIGHT_PER_PARTITION} in flight per partition under the partition's own idempotent
 * producer id), and checks that every batch lands at its source offset. Neither thread is an event loop.
 */
public final class MirrorFetcher implements DataPlane, AutoCloseable {

    private static final Logger LOGGER = Logger.getLogger(MirrorFetcher.class);

    static final int MAX_IN_FLIGHT_PER_PARTITION = 5;
    private static final long MAX_QUEUED_BYTES_PER_PARTITION = 4L << 20;
    private static final int PARTITION_FETCH_BYTES = 1 << 20;
    private static final int FETCH_MAX_BYTES = 16 << 20;
    private static final int FETCH_MAX_WAIT_MS = 250;
    /** Fetch v12 (Kafka 2.7) introduced LastFetchedEpoch, which older versions cannot carry. */
    private static final short FIRST_FETCH_WITH_LAST_FETCHED_EPOCH = 12;
    private static final Set<Errors> REFRESH_ERRORS = Set.of(Errors.NOT_LEADER_OR_FOLLOWER, Errors.FENCED_LEADER_EPOCH,
            Errors.UNKNOWN_LEADER_EPOCH, Errors.LEADER_NOT_AVAILABLE, Errors.UNKNOWN_TOPIC_ID, Errors.UNKNOWN_TOPIC_OR_PARTITION,
            Errors.KAFKA_STORAGE_ERROR, Errors.REPLICA_NOT_AVAILABLE, Errors.OFFSET_NOT_AVAILABLE, Errors.NOT_ENOUGH_REPLICAS,
            Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, Errors.REQUEST_TIMED_OUT, Errors.NETWORK_EXCEPTION,
            Errors.INCONSISTENT_TOPIC_ID, Errors.UNKNOWN_SERVER_ERROR);
    private static final Set<Errors> NEW_IDENTITY_ERRORS = Set.of(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, Errors.UNKNOWN_PRODUCER_ID,
            Errors.INVALID_PRODUCER_EPOCH, Errors.PRODUCER_FENCED, Errors.DUPLICATE_SEQUENCE_NUMBER);

    private final String mirror;
    private final String sourceClusterId;
    private final WireClient source;
    private final WireClient destination;
    private final TransactionReplay replay;
    private final TransactionRecovery recovery;
    private final Admin sourceAdmin;
    private final Admin destinationAdmin;
    private final Map<String, ?> destinationConnection;
    private final Listener listener;
    private final long timeoutMs;
    private final Map<TopicPartition, FetchPartition> partitions = new ConcurrentHashMap<>();
    /** One counter for every generation of every partition: a re-added partition never reuses a value. */
    private final java.util.concurrent.atomic.AtomicInteger generations = new java.util.concurrent.atomic.AtomicInteger();
    private final Thread fetchThread;
    private final Thread appendThread;
    private volatile boolean running = true;
    private volatile boolean sourceRefresh = true;
    private volatile boolean destinationRefresh = true;
    private volatile ClusterView sourceView = ClusterView.empty();
    private volatile ClusterView destinationView = ClusterView.empty();
    // fetch thread only
    private final Set<Integer> fetchingFrom = new HashSet<>();
    private final Backoff fetchBackoff = new Backoff();
    private final Backoff appendBackoff = new Backoff();
    private final Backoff recoveryBackoff = new Backoff();
    private long nextRecoveryAttemptMs;
    private long recoveryFailingSinceMs;

    /**
     * Back-off of a loop that cannot reach its cluster: 0.5 s doubling to 10 s; one WARN per new error,
     * repeats at DEBUG, one INFO when it recovers.
     */
    private final class Backoff {
        private int failures;
        private String lastError;

        void failed(String loop, Exception e) {
            report(loop, e);
            sleep(Math.min(10_000L, 500L << Math.min(failures - 1, 5)));
        }

        void report(String loop, Exception e) {
            String error = e.toString();
            if (!error.equals(lastError)) {
                LOGGER.warnf("Mirror %s %s: %s; retrying with back-off", mirror, loop, error);
            } else {
                LOGGER.debugf("Mirror %s %s: still %s", mirror, loop, error);
            }
            lastError = error;
            failures++;
        }

        void succeeded() {
            if (failures > 0) {
                LOGGER.infof("Mirror %s: connection recovered after %d failed attempt(s)", mirror, failures);
                failures = 0;
                lastError = null;
            }
        }
    }

    public MirrorFetcher(String mirror, String sourceClusterId, Map<String, ?> sourceConnection, Map<String, ?> destinationConnection, Admin sourceAdmin,
            Admin destinationAdmin, Listener listener, int timeoutMs) {
        this.mirror = mirror;
        this.sourceClusterId = sourceClusterId;
        this.source = WireClient.create("cluster-mirror-" + mirror + "-fetcher", sourceConnection, timeoutMs);
        this.destination = WireClient.create("cluster-mirror-" + mirror + "-appender", destinationConnection, timeoutMs);
        this.replay = new TransactionReplay(mirror, destination, timeoutMs, new ReplayHost());
        this.recovery = new TransactionRecovery(mirror, destinationAdmin, timeoutMs);
        this.sourceAdmin = sourceAdmin;
        this.destinationAdmin = destinationAdmin;
        this.destinationConnection = destinationConnection;
        this.listener = listener;
        this.timeoutMs = timeoutMs;
        this.fetchThread = new Thread(this::fetchLoop, "mirror-fetcher-" + mirror);
        this.appendThread = new Thread(this::appendLoop, "mirror-appender-" + mirror);
        fetchThread.setDaemon(true);
        appendThread.setDaemon(true);
        fetchThread.start();
        appendThread.start();
    }

    @Override
    public void add(MirrorPartition partition, long startOffset, int sourceEpoch) {
        FetchPartition state = new FetchPartition(partition, startOffset, sourceEpoch, generations.incrementAndGet());
        FetchPartition previous = partitions.putIfAbsent(state.tp, state);
        if (previous != null) {
            throw new IllegalStateException(partition + " is still in the data plane of " + mirror + "; wait for whenGone()");
        }
        sourceRefresh = true;
        destinationRefresh = true;
        source.wakeup();
        destination.wakeup();
    }

    @Override
    public CompletableFuture<Progress> remove(MirrorPartition partition, boolean abortTransactions) {
        FetchPartition state = partitions.get(new TopicPartition(partition.topic(), partition.partition()));
        if (state == null && abortTransactions) {
            return CompletableFuture.supplyAsync(() -> {
                abortLeftOpen(partition);
                return null;
            }, task -> {
                Thread thread = new Thread(task, "mirror-stop-" + mirror);
                thread.setDaemon(true);
                thread.start();
            });
        }
        if (state == null) {
            return CompletableFuture.completedFuture(null);
        }
        synchronized (state) {
            state.removing = true;
            state.abortOnRemove = abortTransactions;
            state.queue.clear();
            state.queuedBytes = 0;
        }
        destination.wakeup();
        return state.removed;
    }

    /**
     * Stop of a partition that is not in the data plane (FAILED, PAUSED, or after a restart): the destination
     * transactions left open on it are read back and aborted like those of a partition being mirrored.
     */
    private void abortLeftOpen(MirrorPartition partition) {
        FetchPartition state = new FetchPartition(partition, -1, -1, 0);
        try (WireClient client = WireClient.create("cluster-mirror-" + mirror + "-stop", destinationConnection, (int) timeoutMs)) {
            ClusterView view = ClusterView.load(destinationAdmin, Set.of(partition.topic()), (int) timeoutMs);
            client.setNodes(view.nodes());
            for (int attempt = 0; state.transactions.recoveryNeeded; attempt++) {
                if (attempt == 100) {
                    throw new IOException("a destination transaction on it is still completing after 10 s");
                }
                recovery.recover(List.of(state), view);
                if (state.transactions.recoveryNeeded) {
                    sleep(100);
                }
            }
            TransactionReplay.abortOpen(mirror, state, new DestinationTransactions(client, (int) timeoutMs));
        } catch (Exception e) {
            LOGGER.errorf("Mirror %s: %s stopped, but the destination transactions left open on it could not be read back or aborted (%s); "
                    + "the destination aborts them after their transaction timeout", mirror, partition, e.toString());
        }
    }

    @Override
    public CompletableFuture<Progress> whenGone(MirrorPartition partition) {
        FetchPartition state = partitions.get(new TopicPartition(partition.topic(), partition.partition()));
        return state == null ? CompletableFuture.completedFuture(null) : state.removed;
    }

    public Optional<Progress> progress(MirrorPartition partition) {
        FetchPartition state = partitions.get(new TopicPartition(partition.topic(), partition.partition()));
        return state == null ? Optional.empty()
                : Optional.of(state.progress());
    }

    /** The destination transactions held open over all partitions in the data plane. */
    public List<OpenTransaction> openTransactions() {
        List<OpenTransaction> open = new ArrayList<>();
        partitions.values().forEach(state -> open.addAll(state.transactions.snapshot()));
        return open;
    }

    /** The largest known lag (source high watermark - destination end) over the partitions being mirrored. */
    public long maxLag() {
        return lags().values().stream().mapToLong(Long::longValue).max().orElse(0);
    }

    /** Each partition's lag in records (source high watermark minus destination end), once its source end is known. */
    public Map<MirrorPartition, Long> lags() {
        Map<MirrorPartition, Long> lags = new HashMap<>();
        for (FetchPartition state : partitions.values()) {
            long sourceEnd = state.sourceHighWatermark;
            if (sourceEnd >= 0) {
                lags.put(state.partition, Math.max(0, sourceEnd - state.ackedEnd));
            }
        }
        return lags;
    }

    // ---------------------------------------------------------------- fetch side

    private record FetchContext(Node node, Map<TopicPartition, FetchPartition.FetchTicket> tickets, Map<Uuid, String> topicNames) {
    }

    private void fetchLoop() {
        while (running) {
            try {
                if (sourceRefresh) {
                    ClusterView view = refresh(sourceAdmin, source);
                    if (!sourceClusterId.equals(view.clusterId())) {
                        listener.onSourceClusterChanged(view.clusterId());
                        throw new IllegalStateException("source cluster id is " + view.clusterId() + ", expected " + sourceClusterId);
                    }
                    sourceView = view;
                    sourceRefresh = false;
                }
                sendFetches();
                fetchBackoff.succeeded();
                source.poll(500);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception e) {
                if (running) {
                    sourceRefresh = true;
                    fetchBackoff.failed("fetcher", e);
                }
            }
        }
    }

    private void sendFetches() {
        Map<Node, Map<TopicPartition, FetchRequest.PartitionData>> byNode = new HashMap<>();
        Map<Node, Map<TopicPartition, FetchPartition.FetchTicket>> tickets = new HashMap<>();
        ClusterView view = sourceView;
        for (FetchPartition state : partitions.values()) {
            Node leader = view.leaders().get(state.tp);
            Uuid topicId = view.topicIds().get(state.tp.topic());
            if (leader == null || topicId == null) {
                sourceRefresh = true;
                continue;
            }
            if (fetchingFrom.contains(leader.id())) {
                continue;
            }
            FetchPartition.FetchTicket ticket = state.ticket(MAX_QUEUED_BYTES_PER_PARTITION);
            if (ticket == null) {
                continue;
            }
            Optional<Integer> lastFetchedEpoch = ticket.lastFetchedEpoch() >= 0 ? Optional.of(ticket.lastFetchedEpoch()) : Optional.empty();
            byNode.computeIfAbsent(leader, n -> new HashMap<>()).put(state.tp, new FetchRequest.PartitionData(topicId,
                    ticket.fetchOffset(), -1, PARTITION_FETCH_BYTES, Optional.empty(), lastFetchedEpoch));
            tickets.computeIfAbsent(leader, n -> new HashMap<>()).put(state.tp, ticket);
        }
        byNode.forEach((node, data) -> {
            if (!source.ready(node)) {
                if (source.connectionFailed(node)) {
                    sourceRefresh = true;
                }
                tickets.get(node).values().forEach(t -> t.state().fetchDone());
                return;
            }
            if (source.usableVersion(node, ApiKeys.FETCH) < FIRST_FETCH_WITH_LAST_FETCHED_EPOCH) {
                // brokers before 2.7 (Fetch < v12) cannot take the epoch: fetch without it (no EPOCH_FENCING there)
                data.replaceAll((tp, d) -> new FetchRequest.PartitionData(d.topicId, d.fetchOffset, d.logStartOffset, d.maxBytes,
                        d.currentLeaderEpoch, Optional.empty()));
            }
            fetchingFrom.add(node.id());
            FetchContext context = new FetchContext(node, tickets.get(node), view.topicNames());
            FetchRequest.Builder request = FetchRequest.Builder.forConsumer(ApiKeys.FETCH.latestVersion(), FETCH_MAX_WAIT_MS, 1, data)
                    .isolationLevel(IsolationLevel.READ_UNCOMMITTED).setMaxBytes(FETCH_MAX_BYTES);
            listener.onRequest("fetch", false);
            source.send(node, request, response -> onFetchResponse(context, response));
        });
    }

    private void onFetchResponse(FetchContext context, ClientResponse response) {
        fetchingFrom.remove(context.node().id());
        context.tickets().values().forEach(t -> t.state().fetchDone());
        if (response.wasDisconnected() || response.wasTimedOut() || response.versionMismatch() != null) {
            listener.onRequest("fetch", true);
            LOGGER.debugf("Mirror %s: fetch from source broker %s failed (disconnected or timed out)", mirror, context.node());
            sourceRefresh = true;
            return;
        }
        FetchResponse fetch = (FetchResponse) response.responseBody();
        if (fetch.error() != Errors.NONE) {
            LOGGER.debugf("Mirror %s: fetch error %s from %s", mirror, fetch.error(), context.node());
            sourceRefresh = true;
            return;
        }
        Map<TopicPartition, FetchResponseData.PartitionData> data = fetch.responseData(context.topicNames(),
                response.requestHeader().apiVersion());
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

    private boolean onFetchedPartition(FetchPartition.FetchTicket ticket, FetchResponseData.PartitionData data) {
        FetchPartition state = ticket.state();
        Errors error = Errors.forCode(data.errorCode());
        String failure = null;
        String fenced = null;
        long epochEndOffset = -1;
        boolean queued = false;
        synchronized (state) {
            if (state.generation != ticket.generation() || state.fetchOffset != ticket.fetchOffset() || state.removing || state.failed
                    || state.resetPending) {
                return false;
            }
            if (data.highWatermark() >= 0) {
                state.sourceHighWatermark = data.highWatermark();
            }
            if (error == Errors.NONE && data.divergingEpoch().epoch() >= 0) {
                epochEndOffset = data.divergingEpoch().endOffset();
                fenced = SourceDivergence.describe(ticket.lastFetchedEpoch(), ticket.fetchOffset(), data.divergingEpoch().epoch(),
                        epochEndOffset);
            } else if (error == Errors.OFFSET_OUT_OF_RANGE) {
                failure = SourceDivergence.outOfRange(state.fetchOffset, data.logStartOffset(), data.highWatermark());
            } else if (REFRESH_ERRORS.contains(error)) {
                sourceRefresh = true;
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
            fail(state, failure);
        } else if (fenced != null) {
            fence(state, fenced, epochEndOffset);
        }
        return queued;
    }

    // ---------------------------------------------------------------- append side

    private record ProduceContext(Node node, Map<TopicPartition, FetchPartition.Sent> sent, Map<Uuid, String> topicNames) {
    }

    private void appendLoop() {
        while (running) {
            try {
                if (destinationRefresh) {
                    destinationView = refresh(destinationAdmin, destination);
                    destinationRefresh = false;
                }
                finishRemovalsAndResets();
                ensureIdentities();
                recoverTransactions();
                replay.replay(partitions.values());
                sendProduces();
                appendBackoff.succeeded();
                destination.poll(500);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (Exception e) {
                if (running) {
                    destinationRefresh = true;
                    appendBackoff.failed("appender", e);
                }
            }
        }
        partitions.values().forEach(state -> state.removed.complete(state.progress()));
    }

    private void finishRemovalsAndResets() {
        for (FetchPartition state : partitions.values()) {
            if (!state.inFlight.isEmpty()) {
                continue;
            }
            boolean removing;
            boolean reset;
            boolean abort;
            synchronized (state) {
                removing = state.removing || state.failed;
                reset = state.resetPending;
                abort = state.removing && state.abortOnRemove;
            }
            String blocked = state.blockedAndDrained();
            if (blocked != null && !removing && !reset) {
                fail(state, blocked);
            } else if (removing) {
                if (abort) {
                    replay.abortOpen(state);
                }
                partitions.remove(state.tp, state);
                state.removed.complete(state.progress());
            } else if (reset) {
                finishReset(state);
            }
        }
    }

    /**
     * Nothing of the partition is in flight any more: the destination's end must be exactly what was
     * acknowledged, then fetching goes on from there under a new producer id. Anything else (a batch that
     * landed without an answer, a foreign write, data lost by the destination) is for LOG_TRUNCATION to judge.
     */
    private void finishReset(FetchPartition state) {
        long end;
        String unverified = null;
        try {
            end = destinationAdmin.listOffsets(Map.of(state.tp, OffsetSpec.latest())).partitionResult(state.tp)
                    .get(timeoutMs, TimeUnit.MILLISECONDS).offset();
            if (end > state.ackedEnd) {
                // batches whose answers were lost may have landed: they must be exactly ours, checked by content
                unverified = verifyUnconfirmed(state, end);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } catch (Exception e) {
            // the destination is not answering yet (e.g. a restarted broker without leaders): read it again, for a while
            destinationRefresh = true;
            if (System.nanoTime() - state.resetRequestedAt > TimeUnit.MILLISECONDS.toNanos(4L * timeoutMs)) {
                fail(state, "could not read the destination back after a pipeline reset: " + e);
            }
            return;
        }
        if (end > state.ackedEnd) {
            if (unverified != null) {
                fail(state, unverified);
                return;
            }
            LOGGER.infof("Mirror %s: %s: batches up to %d landed without an answer; verified by content", mirror, state.partition, end);
            state.ackedEnd = end;
        } else if (end < state.ackedEnd) {
            fail(state, "after a pipeline reset the destination ends at " + end + " but " + state.ackedEnd
                    + " was acknowledged: the destination lost data");
            return;
        }
        state.unconfirmed.clear();
        synchronized (state) {
            state.generation = generations.incrementAndGet();
            state.queue.clear();
            state.queuedBytes = 0;
            state.fetchOffset = end;
            state.fetchedEpoch = state.lastEpoch;
            state.resetPending = false;
        }
        state.identity = null;
        state.transactions.recoveryNeeded = true;
        LOGGER.infof("Mirror %s: %s resumes at destination log end %d", mirror, state.partition, end);
        source.wakeup();
    }

    /**
     * Null when every destination batch in [ackedEnd, end) is one of ours, content for content; else why not.
     * Throws when the destination cannot be read yet (the reset is then tried again).
     */
    private String verifyUnconfirmed(FetchPartition state, long end) throws IOException {
        long offset = state.ackedEnd;
        while (offset < end) {
            List<SourceBatch> landed = RawFetch.batches(destination, destinationView, state.tp, offset, PARTITION_FETCH_BYTES);
            if (landed.isEmpty()) {
                return "destination offsets [" + offset + ", " + end + ") could not be read back after a pipeline reset";
            }
            for (SourceBatch batch : landed) {
                if (batch.lastOffset() < offset || batch.baseOffset() >= end) {
                    continue;
                }
                SourceBatch ours = state.unconfirmed.get(batch.baseOffset());
                if (ours == null || !RawFetch.sameContent(ours, batch)) {
                    return "destination batch [" + batch.baseOffset() + ".." + batch.lastOffset() + "] is not the source batch sent "
                            + "there (written by another producer?); the destination is checked again by LOG_TRUNCATION";
                }
                offset = batch.lastOffset() + 1;
                if (ours.partitionLeaderEpoch() >= 0) {
                    state.lastEpoch = ours.partitionLeaderEpoch();
                }
            }
        }
        return null;
    }

    private void ensureIdentities() throws IOException {
        for (FetchPartition state : partitions.values()) {
            if (state.identity == null && state.inFlight.isEmpty() && state.sendable() && !destinationView.nodes().isEmpty()) {
                state.identity = destination.initProducerId(destinationView.anyNode());
                state.nextSequence = 0;
            }
        }
    }

    private void sendProduces() {
        ClusterView view = destinationView;
        Map<Node, List<FetchPartition>> byNode = new HashMap<>();
        for (FetchPartition state : partitions.values()) {
            if (state.identity == null || state.inFlight.size() >= MAX_IN_FLIGHT_PER_PARTITION || state.transactionalInFlight()
                    || !state.plainSendable()) {
                continue;
            }
            Node leader = view.leaders().get(state.tp);
            if (leader == null || !view.topicIds().containsKey(state.tp.topic())) {
                destinationRefresh = true;
                continue;
            }
            byNode.computeIfAbsent(leader, n -> new ArrayList<>()).add(state);
        }
        byNode.forEach((node, candidates) -> {
            while (destination.ready(node)) {
                Map<TopicPartition, FetchPartition.Sent> sent = new HashMap<>();
                Map<String, ProduceRequestData.TopicProduceData> topics = new HashMap<>();
                for (FetchPartition state : candidates) {
                    if (state.inFlight.size() >= MAX_IN_FLIGHT_PER_PARTITION) {
                        continue;
                    }
                    SourceBatch batch = state.pollPlain();
                    if (batch == null) {
                        continue;
                    }
                    ByteBuffer bytes = BatchRestamp.restampInPlace(batch, state.identity, state.nextSequence);
                    state.nextSequence = BatchRestamp.nextSequence(state.nextSequence, batch.recordCount());
                    FetchPartition.Sent entry = new FetchPartition.Sent(batch, state.generation);
                    state.inFlight.add(entry);
                    sent.put(state.tp, entry);
                    topics.computeIfAbsent(state.tp.topic(), t -> new ProduceRequestData.TopicProduceData()
                            .setName(t).setTopicId(view.topicIds().get(t))).partitionData()
                            .add(new ProduceRequestData.PartitionProduceData().setIndex(state.tp.partition())
                                    .setRecords(MemoryRecords.readableRecords(bytes)));
                }
                if (sent.isEmpty()) {
                    return;
                }
                ProduceRequestData.TopicProduceDataCollection collection = new ProduceRequestData.TopicProduceDataCollection();
                topics.values().forEach(collection::add);
                ProduceRequestData data = new ProduceRequestData().setAcks((short) -1).setTimeoutMs((int) Math.max(1000, timeoutMs / 2))
                        .setTopicData(collection);
                ProduceContext context = new ProduceContext(node, sent, view.topicNames());
                listener.onRequest("produce", false);
                destination.send(node, ProduceRequest.builder(data), response -> onProduceResponse(context, response));
            }
        });
    }

    private void onProduceResponse(ProduceContext context, ClientResponse response) {
        boolean failedRequest = response.wasDisconnected() || response.wasTimedOut() || response.versionMismatch() != null;
        if (failedRequest) {
            listener.onRequest("produce", true);
        }
        Map<TopicPartition, ProduceResponseData.PartitionProduceResponse> results = new HashMap<>();
        if (!failedRequest) {
            ProduceResponse produce = (ProduceResponse) response.responseBody();
            for (ProduceResponseData.TopicProduceResponse topic : produce.data().responses()) {
                String name = topic.name() != null && !topic.name().isEmpty() ? topic.name() : context.topicNames().get(topic.topicId());
                topic.partitionResponses().forEach(p -> results.put(new TopicPartition(name, p.index()), p));
            }
        }
        boolean wakeFetcher = false;
        for (Map.Entry<TopicPartition, FetchPartition.Sent> entry : context.sent().entrySet()) {
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
            if (state.failed) {
                continue;
            }
            boolean appended = result != null && Errors.forCode(result.errorCode()) == Errors.NONE;
            if (!appended) {
                state.unconfirmed.put(sent.batch().baseOffset(), sent.batch());
            }
            if (sent.generation() != state.generation) {
                // dropped by a reset, but if it was appended it must still be where it belongs
                if (appended && result.baseOffset() != sent.batch().baseOffset()) {
                    fail(state, misplaced(sent.batch(), result.baseOffset()));
                } else if (appended) {
                    confirmed(state, sent.batch());
                }
                continue;
            }
            if (result == null) {
                requestReset(state, failedRequest ? "destination request to " + context.node() + " failed" : "no answer for partition");
                continue;
            }
            onAppended(state, sent.batch(), result);
        }
        if (wakeFetcher) {
            source.wakeup();
        }
    }

    private void onAppended(FetchPartition state, SourceBatch batch, ProduceResponseData.PartitionProduceResponse result) {
        Errors error = Errors.forCode(result.errorCode());
        if (error == Errors.NONE) {
            if (result.baseOffset() != batch.baseOffset()) {
                fail(state, misplaced(batch, result.baseOffset()));
                return;
            }
            confirmed(state, batch);
        } else if (NEW_IDENTITY_ERRORS.contains(error) || REFRESH_ERRORS.contains(error)) {
            requestReset(state, error.name());
        } else {
            String message = result.errorMessage() == null ? error.message() : result.errorMessage();
            fail(state, "destination refused source batch [" + batch.baseOffset() + ".." + batch.lastOffset() + "]: " + error.name()
                    + " (" + message + ")");
        }
    }

    private void confirmed(FetchPartition state, SourceBatch batch) {
        state.unconfirmed.remove(batch.baseOffset());
        if (batch.lastOffset() + 1 > state.ackedEnd) {
            state.ackedEnd = batch.lastOffset() + 1;
            if (batch.partitionLeaderEpoch() >= 0) { // fillers carry none
                state.lastEpoch = batch.partitionLeaderEpoch();
            }
        }
        listener.onAppended(state.partition, batch.recordCount(), batch.sizeInBytes());
    }

    private static String misplaced(SourceBatch batch, long destinationOffset) {
        return "source batch [" + batch.baseOffset() + ".." + batch.lastOffset() + "] was appended at destination offset "
                + destinationOffset + " instead of " + batch.baseOffset()
                + ": the destination was written by another producer (or lost data); mirroring stopped";
    }

    /** Drops what is queued and in flight for the partition and resumes from the destination's log end with a new producer id. */
    private void requestReset(FetchPartition state, String reason) {
        synchronized (state) {
            if (state.resetPending || state.removing || state.failed) {
                return;
            }
            state.resetPending = true;
            state.resetRequestedAt = System.nanoTime();
            state.blocked = null;
            state.generation = generations.incrementAndGet();
            state.queue.clear();
            state.queuedBytes = 0;
        }
        destinationRefresh = true;
        LOGGER.infof("Mirror %s: %s pipeline reset (%s)", mirror, state.partition, reason);
    }

    private void fail(FetchPartition state, String error) {
        if (halt(state)) {
            LOGGER.errorf("Mirror %s: %s FAILED: %s", mirror, state.partition, error);
            listener.onFailed(state.partition, error);
            destination.wakeup();
        }
    }

    private void fence(FetchPartition state, String reason, long epochEndOffset) {
        if (halt(state)) {
            LOGGER.warnf("Mirror %s: %s EPOCH_FENCING: %s", mirror, state.partition, reason);
            listener.onEpochFenced(state.partition, reason, epochEndOffset);
            destination.wakeup();
        }
    }

    /** Stops fetching and sending for the partition, once; false when it was already stopped. */
    private boolean halt(FetchPartition state) {
        synchronized (state) {
            if (state.failed) {
                return false;
            }
            state.failed = true;
            state.generation = generations.incrementAndGet();
            state.queue.clear();
            state.queuedBytes = 0;
        }
        return true;
    }

    // ---------------------------------------------------------------- transactions (DESIGN §4.2)

    /**
     * Reads back the destination transactions this mirror holds open on partitions that just entered the
     * data plane or were reset (after a restart, resume or retry): they are continued with their producer
     * id, epoch and next sequence, never re-initialised, which would abort them and put a marker where the
     * source has none. Transactions still writing their markers are waited for.
     */
    private void recoverTransactions() throws InterruptedException {
        List<FetchPartition> recovering = partitions.values().stream()
                .filter(s -> s.transactions.recoveryNeeded && s.inFlight.isEmpty()).toList();
        if (recovering.isEmpty() || System.currentTimeMillis() < nextRecoveryAttemptMs) {
            return;
        }
        try {
            recovery.recover(recovering, destinationView);
            recoveryBackoff.succeeded();
            recoveryFailingSinceMs = 0;
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            // plain batches go on; transactional ones wait until the open transactions are known, then give up
            long now = System.currentTimeMillis();
            nextRecoveryAttemptMs = now + 5_000;
            recoveryFailingSinceMs = recoveryFailingSinceMs == 0 ? now : recoveryFailingSinceMs;
            recoveryBackoff.report("reading back its open destination transactions", e);
            if (now - recoveryFailingSinceMs > 4 * timeoutMs) {
                recovering.stream().filter(state -> TransactionReplay.replayed(state.peekQueue())).forEach(state -> fail(state,
                        "the destination transactions open on this partition cannot be read back (ListTransactions, DescribeTransactions, "
                                + "DescribeProducers; the service principal needs DESCRIBE on its transactional ids): " + e));
            }
        }
    }

    /** What the transaction replay needs from the data plane. */
    private final class ReplayHost implements TransactionReplay.Host {
        @Override
        public ClusterView destinationView() {
            return destinationView;
        }

        @Override
        public void refreshDestination() {
            destinationRefresh = true;
        }

        @Override
        public void fail(FetchPartition state, String error) {
            MirrorFetcher.this.fail(state, error);
        }

        @Override
        public void reset(FetchPartition state, String reason) {
            requestReset(state, reason);
        }

        @Override
        public void send(Node leader, FetchPartition state, FetchPartition.Sent entry, ProduceRequest.Builder request) {
            ProduceContext context = new ProduceContext(leader, Map.of(state.tp, entry), destinationView.topicNames());
            listener.onRequest("produce", false);
            destination.send(leader, request, response -> onProduceResponse(context, response));
        }

        @Override
        public void markerAppended(FetchPartition state, SourceBatch marker) {
            listener.onAppended(state.partition, 1, marker.sizeInBytes());
        }
    }

    // ---------------------------------------------------------------- shared

    private ClusterView refresh(Admin admin, WireClient client) throws Exception {
        Set<String> topics = partitions.keySet().stream().map(TopicPartition::topic).collect(Collectors.toSet());
        ClusterView view = ClusterView.load(admin, topics, timeoutMs);
        client.setNodes(view.nodes());
        return view;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        running = false;
        source.wakeup();
        destination.wakeup();
        fetchThread.interrupt();
        appendThread.interrupt();
        try {
            fetchThread.join(5000);
            appendThread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        source.close();
        destination.close();
        partitions.clear(); // nothing of a closed data plane is reported (lag gauges) any more
    }
}
