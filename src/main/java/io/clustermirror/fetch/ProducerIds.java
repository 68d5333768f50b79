package io.clustermirror.fetch;

import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.ProducerIdentity;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.utils.ExponentialBackoff;
import org.jboss.logging.Logger;

/**
 * The idempotent producer ids of a data plane's partitions, asked for as InitProducerId requests on
 * {@value #CONNECTIONS} connections to the leader beside the Produce connections (on those, a start of 10,000
 * partitions filled every in-flight slot with InitProducerIds and no Produce could go; on one, a connection takes one
 * new request per poll and a start got about 150 ids a second: both measured with bench/partitions.sh) and taken up
 * when the fetcher polls, like Produce answers: a start of thousands of partitions has up to {@value #MAX_IN_FLIGHT}
 * of them under way at once instead of one blocking round trip after the other on the fetcher's thread, which every
 * other data plane on it would wait for. A lost or retriable answer is asked again after a back-off of its own
 * partition (kafka-clients' retry back-off); a refusal fails the partition with the broker's reason. Append thread
 * only.
 */
final class ProducerIds {

    private static final Logger LOGGER = Logger.getLogger(ProducerIds.class);
    /** InitProducerId requests a data plane has under way at most, so a large start does not crowd out its Produces. */
    static final int MAX_IN_FLIGHT = 64;
    /** Connections to each destination broker that carry InitProducerIds, beside the Produce connections. */
    static final int CONNECTIONS = 4;
    /** kafka-clients' {@code retry.backoff.ms} and {@code retry.backoff.max.ms} defaults. */
    private static final ExponentialBackoff BACKOFF = new ExponentialBackoff(100, 2, 1000, 0.2);

    private final Pipeline pipeline;
    private int inFlight;

    ProducerIds(Pipeline pipeline) {
        this.pipeline = pipeline;
    }

    /** Asks for a producer id for each partition that has batches to send and none, as far as the cap allows. */
    void request(Collection<FetchPartition> partitions) {
        long now = System.nanoTime();
        ClusterView view = pipeline.destinationView;
        Set<Node> busy = new HashSet<>(); // leaders whose producer-id connections take no further request this round
        for (FetchPartition state : partitions) {
            if (inFlight >= MAX_IN_FLIGHT) {
                return;
            }
            if (state.identity != null
                    || state.identityRequested
                    || now - state.identityNotBefore < 0
                    || !state.inFlight.isEmpty()
                    || !state.sendable()) {
                continue;
            }
            Node leader = view.leaders().get(state.tp);
            if (leader == null) {
                pipeline.destinationRefresh = true;
                continue;
            }
            if (busy.contains(leader)) {
                continue;
            }
            Node connection = readyConnection(leader, state);
            if (connection == null) {
                busy.add(leader); // every producer-id connection to it took its request for this round
                continue;
            }
            state.identityRequested = true;
            inFlight++;
            pipeline.destination.send(
                    connection,
                    new InitProducerIdRequest.Builder(new InitProducerIdRequestData()
                            .setTransactionalId(null)
                            .setTransactionTimeoutMs(60000)),
                    response -> answered(state, connection, response));
        }
    }

    /**
     * One of the leader's producer-id connections that takes a request now, or null. A connection takes one new request
     * per poll of the network (kafka-clients sends the next once the last is written), and the broker answers one
     * request of a connection after the other: {@value #CONNECTIONS} connections ask {@value #CONNECTIONS} at a time.
     */
    private Node readyConnection(Node leader, FetchPartition state) {
        for (int i = 0; i < CONNECTIONS; i++) {
            Node connection = pipeline.destination.connection(leader, AppendLoop.CONNECTIONS_PER_BROKER + i);
            if (pipeline.destination.ready(connection)) {
                return connection;
            }
            if (pipeline.destination.connectionFailed(connection)) {
                // the leader may have gone or moved: its leaderships are loaded again, the partition waits its turn
                pipeline.destinationRefresh = true;
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
            String lost = response.wasDisconnected()
                    ? "disconnected"
                    : response.wasTimedOut()
                            ? "timed out"
                            : response.versionMismatch() != null
                                    ? response.versionMismatch().getMessage()
                                    : null;
            if (lost != null) {
                pipeline.destinationRefresh = true;
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
                pipeline.destination.wakeup(); // its batches can go now
            } else if (ErrorRules.retriable(error)) {
                if (ErrorRules.staleMetadata(error)) {
                    pipeline.destinationRefresh = true;
                }
                retryLater(state, "InitProducerId: " + error.name());
            } else {
                pipeline.fail(
                        state,
                        "the destination refused a producer id (InitProducerId): " + error.name() + " ("
                                + error.message() + ")");
            }
        } catch (RuntimeException e) {
            // kafka-clients only logs what a completion handler throws: the partition would wait for good
            pipeline.fail(state, "handling the InitProducerId response of " + connection + " failed: " + e);
        }
    }

    private void retryLater(FetchPartition state, String reason) {
        long backoffMs = BACKOFF.backoff(state.identityAttempts++);
        state.identityNotBefore = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(backoffMs);
        LOGGER.debugf("Mirror %s: %s: %s; asked again in %d ms", pipeline.mirror, state.partition, reason, backoffMs);
    }
}
