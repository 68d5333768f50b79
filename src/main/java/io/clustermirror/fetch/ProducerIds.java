package io.clustermirror.fetch;

import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.ProducerIdentity;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.utils.ExponentialBackoff;
import org.jboss.logging.Logger;

/**
 * The producer ids of a data plane's partitions. Each destination partition has a name of its own,
 * {@code cluster-mirror/<mirror>/<topic>/<partition>}, and its producer id comes from the destination's transaction
 * coordinator for that name (FindCoordinator, then InitProducerId with it as the transactional id): the coordinator
 * hands out the same producer id every time, with the epoch raised, so whoever asked last holds the highest epoch the
 * partition's producer id ever had, and once its first batch lands the partition leader refuses every batch of an
 * earlier holder (INVALID_PRODUCER_EPOCH): an instance that lost the mirror while paused appends nothing after the new
 * owner's first batch (decisions §48). The batches stay non-transactional, byte for byte what the source wrote.
 *
 * <p>The requests go on {@value #CONNECTIONS} connections to each broker beside the Produce connections (on those, a
 * start of 10,000 partitions filled every in-flight slot with InitProducerIds and no Produce could go; on one, a
 * connection takes one new request per poll: both measured with bench/partitions.sh) and are taken up when the fetcher
 * polls, like Produce answers: a start of thousands of partitions has up to {@value #MAX_IN_FLIGHT} of them under way
 * at once instead of one blocking round trip after the other on the fetcher's thread. A lost or retriable answer is
 * asked again after a back-off of its own partition (kafka-clients' retry back-off); a refusal fails the partition
 * with the broker's reason. No request goes while the instance's {@link AppendLease} is not valid. Append thread only.
 */
final class ProducerIds {

    private static final Logger LOGGER = Logger.getLogger(ProducerIds.class);
    /** InitProducerId requests a data plane has under way at most, so a large start does not crowd out its Produces. */
    static final int MAX_IN_FLIGHT = 64;
    /** Connections to each destination broker that carry InitProducerIds, beside the Produce connections. */
    static final int CONNECTIONS = 4;
    /** Names one FindCoordinator asks for at most (FindCoordinator v4, brokers 3.0 and later, takes many). */
    static final int MAX_KEYS_PER_FIND = 1000;
    /** kafka-clients' {@code retry.backoff.ms} and {@code retry.backoff.max.ms} defaults. */
    private static final ExponentialBackoff BACKOFF = new ExponentialBackoff(100, 2, 1000, 0.2);

    /**
     * How long a partition keeps its producer id and epoch before it asks for a new epoch (once nothing of it is in flight):
     * the destination's transaction coordinator forgets a name unused for {@code transactional.id.expiration.ms} (7 days
     * by default), and a forgotten name gets a new producer id, which would not fence the old one.
     */
    static final long REFRESH_NANOS = TimeUnit.HOURS.toNanos(24);
    /** The prefix of the partitions' names at the destination's transaction coordinators. */
    static final String PREFIX = "cluster-mirror/";

    private final Pipeline pipeline;
    private int inFlight;

    ProducerIds(Pipeline pipeline) {
        this.pipeline = pipeline;
    }

    /** The destination partition's name, whose producer id and epochs the transaction coordinator keeps. */
    static String transactionalId(String mirror, TopicPartition tp) {
        return PREFIX + mirror + "/" + tp.topic() + "/" + tp.partition();
    }

    /**
     * Asks for a producer id for each partition that has none and batches to send, or records on the source beyond its
     * fetch offset (they come with its next Fetch), as far as the cap allows: where
     * its name's coordinator is not known yet, FindCoordinator to its leader (up to {@value #MAX_KEYS_PER_FIND} names
     * in one request to each leader: a start of 10,000 partitions finds their coordinators in a few requests), else
     * InitProducerId to the coordinator.
     */
    void request(Collection<FetchPartition> partitions) {
        if (!pipeline.lease.valid()) {
            return;
        }
        long now = pipeline.nanoClock.getAsLong();
        ClusterView view = pipeline.destinationView;
        Set<Node> busy = new HashSet<>(); // brokers whose producer-id connections take no further request this round
        Map<Node, List<FetchPartition>> finds = new HashMap<>(); // by leader: partitions whose coordinator is unknown
        for (FetchPartition state : partitions) {
            if (inFlight >= MAX_IN_FLIGHT) {
                break;
            }
            if (state.identity != null
                    && now - state.identitySince > REFRESH_NANOS
                    && state.inFlight.isEmpty()
                    && state.unconfirmed.isEmpty()) {
                state.identity = null; // a new epoch of the same producer id, so the name stays known
            }
            if (state.identity != null
                    || state.identityRequested
                    || now - state.identityNotBefore < 0
                    || !state.inFlight.isEmpty()
                    || !state.sending()) {
                continue;
            }
            if (state.identityCoordinator == null) {
                // found from the partition's entry on, while its first Fetch is under way: the producer id is then
                // one InitProducerId away when its first batch comes (measured: 40 ms of a start)
                Node leader = view.leaders().get(state.tp);
                if (leader == null) {
                    if (state.sendable() || state.behind()) {
                        pipeline.leaderless(state);
                    } else {
                        pipeline.destinationRefresh = true; // idle: nothing waits on it
                    }
                } else {
                    state.leaderless.clear();
                    List<FetchPartition> batch = finds.computeIfAbsent(leader, l -> new ArrayList<>());
                    if (batch.size() < MAX_KEYS_PER_FIND) {
                        batch.add(state);
                    }
                }
                continue;
            }
            if (!state.sendable() && !state.behind()) {
                // a producer id is a write on the coordinator: asked for once there is a batch to send, or one to
                // fetch (so that it is under way while the Fetch is: measured, 2-50 ms of a start)
                continue;
            }
            Node coordinator = state.identityCoordinator;
            if (busy.contains(coordinator)) {
                continue;
            }
            Node connection = readyConnection(coordinator, state);
            if (connection == null) {
                busy.add(coordinator); // every producer-id connection to it took its request for this round
                continue;
            }
            state.identityRequested = true;
            inFlight++;
            pipeline.destination.send(
                    connection,
                    new InitProducerIdRequest.Builder(new InitProducerIdRequestData()
                            .setTransactionalId(transactionalId(pipeline.mirror, state.tp))
                            .setTransactionTimeoutMs(60000)),
                    response -> answered(state, connection, response));
        }
        finds.forEach((leader, batch) -> find(leader, batch, busy));
    }

    /** One FindCoordinator to the leader for the names of {@code batch}, when one of its connections takes it. */
    private void find(Node leader, List<FetchPartition> batch, Set<Node> busy) {
        if (inFlight >= MAX_IN_FLIGHT || busy.contains(leader)) {
            return;
        }
        Node connection = readyConnection(leader, batch.get(0));
        if (connection == null) {
            busy.add(leader);
            return;
        }
        Map<String, FetchPartition> byName = new HashMap<>();
        batch.forEach(state -> {
            state.identityRequested = true;
            byName.put(transactionalId(pipeline.mirror, state.tp), state);
        });
        inFlight++;
        pipeline.destination.send(
                connection,
                new FindCoordinatorRequest.Builder(new FindCoordinatorRequestData()
                        .setKeyType(FindCoordinatorRequest.CoordinatorType.TRANSACTION.id())
                        .setCoordinatorKeys(List.copyOf(byName.keySet()))),
                response -> found(byName, connection, response));
    }

    /** Takes up a FindCoordinator's answer: each name's coordinator, or its retry or refusal. */
    private void found(Map<String, FetchPartition> byName, Node connection, ClientResponse response) {
        inFlight--;
        Set<FetchPartition> current = new HashSet<>(); // looked up per name: a set, the answer names up to 1,000
        byName.values().forEach(state -> {
            state.identityRequested = false;
            if (pipeline.partitions.get(state.tp) == state && state.identity == null) {
                current.add(state); // not one that left (or came back as a new instance) meanwhile
            }
        });
        try {
            String lost = lost(response);
            if (lost != null) {
                pipeline.destinationRefresh = true;
                current.forEach(state -> retryLater(state, "FindCoordinator to " + connection + " " + lost));
                return;
            }
            for (FindCoordinatorResponseData.Coordinator answer :
                    ((FindCoordinatorResponse) response.responseBody()).data().coordinators()) {
                FetchPartition state = byName.get(answer.key());
                if (state != null && current.contains(state)) {
                    coordinatorFound(state, answer);
                }
            }
        } catch (RuntimeException e) {
            // kafka-clients only logs what a completion handler throws: the partitions would wait for good
            current.forEach(state ->
                    pipeline.fail(state, "handling the FindCoordinator response of " + connection + " failed: " + e));
        }
    }

    private static String lost(ClientResponse response) {
        return response.wasDisconnected()
                ? "disconnected"
                : response.wasTimedOut()
                        ? "timed out"
                        : response.versionMismatch() != null
                                ? response.versionMismatch().getMessage()
                                : null;
    }

    /**
     * One of the leader's producer-id connections that takes a request now, or null. A connection takes one new request
     * per poll of the network (kafka-clients sends the next once the last is written), and the broker answers one
     * request of a connection after the other: {@value #CONNECTIONS} connections ask {@value #CONNECTIONS} at a time.
     */
    private Node readyConnection(Node broker, FetchPartition state) {
        for (int i = 0; i < CONNECTIONS; i++) {
            Node connection = pipeline.destination.connection(broker, AppendLoop.CONNECTIONS_PER_BROKER + i);
            if (pipeline.destination.ready(connection)) {
                return connection;
            }
            if (pipeline.destination.connectionFailed(connection)) {
                // the broker may have gone or moved: its leaderships and coordinators are found again, the partition
                // waits its turn
                pipeline.destinationRefresh = true;
                state.identityCoordinator = null;
                retryLater(state, "destination broker " + connection + " cannot be reached");
                return null;
            }
        }
        return null; // connecting or busy: asked by a later round
    }

    /** Requests under way (for tests and the liveness of a start). */
    int inFlight() {
        return inFlight;
    }

    private void answered(FetchPartition state, Node connection, ClientResponse response) {
        inFlight--;
        state.identityRequested = false;
        if (pipeline.partitions.get(state.tp) != state || state.identity != null) {
            return; // the partition left (or came back as a new instance) meanwhile
        }
        try {
            String lost = lost(response);
            if (lost != null) {
                pipeline.destinationRefresh = true;
                state.identityCoordinator = null; // it may have moved: found again
                retryLater(state, "InitProducerId to destination broker " + connection + " " + lost);
                return;
            }
            InitProducerIdResponse answer = (InitProducerIdResponse) response.responseBody();
            Errors error = Errors.forCode(answer.data().errorCode());
            if (error == Errors.NONE) {
                state.identity = new ProducerIdentity(
                        answer.data().producerId(), answer.data().producerEpoch());
                state.nextSequence = 0;
                state.identityAttempts = 0;
                state.identityRefusals.clear();
                state.identitySince = pipeline.nanoClock.getAsLong();
                pipeline.destination.wakeup(); // its batches can go now
            } else if (error == Errors.NOT_COORDINATOR || error == Errors.COORDINATOR_NOT_AVAILABLE) {
                state.identityCoordinator = null; // found again
                retryLater(state, "InitProducerId: " + error.name());
            } else if (error == Errors.CONCURRENT_TRANSACTIONS || ErrorRules.retriable(error)) {
                retryLater(state, "InitProducerId: " + error.name());
            } else {
                pipeline.fail(
                        state,
                        "the destination refused the partition's producer id (InitProducerId for transactional id "
                                + transactionalId(pipeline.mirror, state.tp) + "): " + error.name() + " ("
                                + error.message() + ")");
            }
        } catch (RuntimeException e) {
            // kafka-clients only logs what a completion handler throws: the partition would wait for good
            pipeline.fail(state, "handling the InitProducerId response of " + connection + " failed: " + e);
        }
    }

    private void coordinatorFound(FetchPartition state, FindCoordinatorResponseData.Coordinator found) {
        Errors error = Errors.forCode(found.errorCode());
        if (error == Errors.NONE) {
            state.identityCoordinator = new Node(found.nodeId(), found.host(), found.port());
            state.identityAttempts = 0;
            pipeline.destination.wakeup(); // its InitProducerId can go now
        } else if (ErrorRules.retriable(error)) {
            retryLater(state, "FindCoordinator: " + error.name());
        } else {
            pipeline.fail(
                    state,
                    "the destination refused to name the transaction coordinator of the partition's producer id"
                            + " (FindCoordinator for " + transactionalId(pipeline.mirror, state.tp) + "): "
                            + error.name() + " (" + error.message() + ")");
        }
    }

    /**
     * Asks again after a back-off. A partition with records to append or to fetch that has been refused its producer
     * id for four request timeouts (failures no further apart than two: a destination whose transaction coordinator
     * for the name stays unavailable, its {@code __transaction_state} partition without a leader or below
     * min.insync.replicas) fails with the last reason, instead of staying MIRRORING without appending; an idle one's
     * failures start no such count.
     */
    private void retryLater(FetchPartition state, String reason) {
        long now = pipeline.nanoClock.getAsLong();
        long timeoutNanos = TimeUnit.MILLISECONDS.toNanos(pipeline.timeoutMs);
        boolean waiting = state.sendable() || state.behind();
        if (state.identityRefusals.seen(now, 2 * timeoutNanos, waiting) > 4 * timeoutNanos) {
            pipeline.fail(
                    state,
                    "the destination gave the partition no producer id for " + (4 * pipeline.timeoutMs)
                            + " ms (FindCoordinator and InitProducerId for transactional id "
                            + transactionalId(pipeline.mirror, state.tp)
                            + "; are the destination's __transaction_state partitions available?); the last attempt: "
                            + reason);
            return;
        }
        long backoffMs = BACKOFF.backoff(state.identityAttempts++);
        state.identityNotBefore = now + TimeUnit.MILLISECONDS.toNanos(backoffMs);
        LOGGER.debugf("Mirror %s: %s: %s; asked again in %d ms", pipeline.mirror, state.partition, reason, backoffMs);
    }
}
