package io.clustermirror.kafka;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.ClientRequest;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.clients.ClientUtils;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.KafkaClient;
import org.apache.kafka.clients.NetworkClientUtils;
import org.apache.kafka.clients.RequestCompletionHandler;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;

/**
 * One cluster as one owner reaches it over a {@link WireNetwork}, for raw Fetch and Produce requests: its connection
 * settings (security, TLS, SASL), its client id (what the brokers see in their request logs and quotas), its request
 * timeout. A client made by {@link #create} has a network of its own; a fetcher of the pool gives its data planes
 * clients on its shared network, so that the connections of many mirrors are polled by one thread. Brokers are named
 * as their cluster names them; {@link #connection} gives further connections to one broker. Not thread-safe except
 * {@link #wakeup()}: the network's owner thread uses it.
 */
public final class WireClient implements AutoCloseable {

    private final WireNetwork network;
    private final boolean ownsNetwork;
    private final String group;
    private final String clientId;
    private final ChannelBuilder channels;
    private final boolean ownsChannels;
    private final int requestTimeoutMs;
    private final Time time;
    /** Connections to a broker by index, the first {@link #CACHED_CONNECTIONS} ({@link #connection}). */
    private final Map<Node, Node[]> connectionsByBroker = new ConcurrentHashMap<>();

    private static final int CACHED_CONNECTIONS = 8;
    /** How many times a blocking call connects before it fails ({@link #call}). */
    static final int CONNECT_ATTEMPTS = 3;

    private WireClient(
            WireNetwork network,
            boolean ownsNetwork,
            String group,
            String clientId,
            ChannelBuilder channels,
            boolean ownsChannels,
            int requestTimeoutMs) {
        this.network = network;
        this.ownsNetwork = ownsNetwork;
        this.group = group;
        this.clientId = clientId;
        this.channels = channels;
        this.ownsChannels = ownsChannels;
        this.requestTimeoutMs = requestTimeoutMs;
        this.time = network.time();
    }

    /** A client with a network of its own, for the given connection properties (bootstrap, security, sasl, ssl). */
    public static WireClient create(String clientId, Map<String, ?> connection, int requestTimeoutMs) {
        return new WireClient(
                WireNetwork.create(clientId, requestTimeoutMs),
                true,
                clientId,
                clientId,
                channelBuilder(clientId, connection),
                true,
                requestTimeoutMs);
    }

    /**
     * A client on a shared network: its connections are those of {@code group} (clients of one group share them, e.g.
     * every mirror's view of the destination on one fetcher), built by {@code channels} (null: a test network).
     */
    public static WireClient on(
            WireNetwork network,
            String group,
            String clientId,
            ChannelBuilder channels,
            boolean ownsChannels,
            int requestTimeoutMs) {
        return new WireClient(network, false, group, clientId, channels, ownsChannels, requestTimeoutMs);
    }

    /**
     * A client over the given network client: the test seam of the data plane's and LOG_TRUNCATION's unit tests, which
     * give kafka-clients' {@code MockClient} (public for them only, since they live in other packages; the service
     * never calls it).
     */
    public static WireClient over(String clientId, KafkaClient client, int requestTimeoutMs) {
        return new WireClient(
                WireNetwork.over(clientId, client), true, clientId, clientId, null, false, requestTimeoutMs);
    }

    /** kafka-clients' channel builder for a cluster's connection properties (security protocol, TLS, SASL). */
    public static ChannelBuilder channelBuilder(String clientId, Map<String, ?> connection) {
        Map<String, Object> props = new HashMap<>(connection);
        props.put(CommonClientConfigs.CLIENT_ID_CONFIG, clientId);
        props.keySet().retainAll(AdminClientConfig.configNames());
        return ClientUtils.createChannelBuilder(
                new AdminClientConfig(props), Time.SYSTEM, new LogContext("[" + clientId + "] "));
    }

    /**
     * Connection {@code index} to {@code broker} (connection 0 is the one every other method uses for a broker). The
     * rounds ask this for every partition they send for, so the first {@value #CACHED_CONNECTIONS} of each broker are
     * kept here by broker, a look-up without building the network's key.
     */
    public Node connection(Node broker, int index) {
        if (index >= CACHED_CONNECTIONS) {
            return network.connection(group, channels, broker, index);
        }
        Node[] known = connectionsByBroker.get(broker);
        if (known == null) {
            known = connectionsByBroker.computeIfAbsent(broker, b -> new Node[CACHED_CONNECTIONS]);
        }
        Node connection = known[index];
        if (connection == null) {
            connection = network.connection(group, channels, broker, index);
            known[index] = connection; // the network's node for this key: a racing writer stores the same one
        }
        return connection;
    }

    /** The broker a node names: itself, or the broker behind one of this client's connections. */
    int brokerOf(Node node) {
        return network.isConnection(node) ? network.brokerOf(node) : node.id();
    }

    private Node mapped(Node node) {
        return network.isConnection(node) ? node : connection(node, 0);
    }

    /** The newest version of {@code api} both sides speak, once the connection to {@code node} is ready; -1 before. */
    public short usableVersion(Node node, ApiKeys api) {
        return network.usableVersion(mapped(node), api);
    }

    /** Starts connecting if needed; true when a request can be sent now. */
    public boolean ready(Node node) {
        return network.client().ready(mapped(node), time.milliseconds());
    }

    public boolean connectionFailed(Node node) {
        return network.client().connectionFailed(mapped(node));
    }

    public void send(Node node, AbstractRequest.Builder<?> request, RequestCompletionHandler handler) {
        network.send(request(mapped(node), request, handler));
    }

    private ClientRequest request(
            Node connection, AbstractRequest.Builder<?> request, RequestCompletionHandler handler) {
        return new ClientRequest(
                connection.idString(),
                request,
                network.nextCorrelationId(),
                clientId,
                time.milliseconds(),
                true,
                requestTimeoutMs,
                handler);
    }

    /** Does network I/O and runs the completion handlers of finished requests (of every client on the network). */
    public void poll(long timeoutMs) {
        network.poll(timeoutMs);
    }

    public void wakeup() {
        network.wakeup();
    }

    /**
     * Blocking request/response, for the few calls outside the hot loop. On a shared network the wait polls it, so the
     * other clients' answers are handled meanwhile.
     */
    public ClientResponse call(Node node, AbstractRequest.Builder<?> request) throws IOException {
        Node connection = mapped(node);
        KafkaClient client = network.client();
        awaitReady(client, node, connection);
        ClientResponse response = NetworkClientUtils.sendAndReceive(client, request(connection, request, null), time);
        if (response.versionMismatch() != null) {
            throw new IOException(clientId + ": " + response.versionMismatch().getMessage());
        }
        return response;
    }

    /**
     * Connects for a call: up to {@value #CONNECT_ATTEMPTS} attempts within the request timeout, each once
     * kafka-clients' reconnect back-off is over. kafka-clients' {@code awaitReady} fails a call on its first failed
     * attempt, and at once on a connection whose last attempt failed, which a client kept between calls
     * (LOG_TRUNCATION's) carries from a moment its broker was down: a resume's check begun as the source came back
     * failed so (decisions §36).
     */
    private void awaitReady(KafkaClient client, Node node, Node connection) throws IOException {
        long deadline = time.milliseconds() + requestTimeoutMs;
        IOException failed;
        int attempts = 0;
        do { // the first attempt always: a connection that is ready is used whatever the timeout
            attempts++;
            waitOutReconnectBackoff(client, connection, deadline);
            try {
                long left = Math.max(0, deadline - time.milliseconds());
                if (NetworkClientUtils.awaitReady(client, connection, time, left)) {
                    return;
                }
                failed = null; // the request timeout is over: that, not an earlier attempt's failure, is the reason
            } catch (IOException e) {
                failed = e;
            }
        } while (attempts < CONNECT_ATTEMPTS && time.milliseconds() < deadline);
        throw failed != null
                ? failed
                : new IOException(clientId + ": broker " + node + " not ready within " + requestTimeoutMs + " ms");
    }

    /** Polls until a connection whose last attempt failed may be tried again (or the deadline). */
    private void waitOutReconnectBackoff(KafkaClient client, Node connection, long deadline) {
        long now = time.milliseconds();
        while (client.connectionFailed(connection) && now < deadline) {
            long backoff = client.connectionDelay(connection, now);
            if (backoff <= 0) {
                return;
            }
            client.poll(Math.min(backoff, deadline - now), now);
            now = time.milliseconds();
        }
    }

    /** A fresh idempotent producer identity on this (destination) cluster. */
    public ProducerIdentity initProducerId(Node node) throws IOException {
        InitProducerIdResponse response = (InitProducerIdResponse) call(
                        node,
                        new InitProducerIdRequest.Builder(new InitProducerIdRequestData()
                                .setTransactionalId(null)
                                .setTransactionTimeoutMs(60000)))
                .responseBody();
        Errors error = Errors.forCode(response.data().errorCode());
        if (error != Errors.NONE) {
            throw new IOException(clientId + ": InitProducerId failed: " + error.name() + " " + error.message());
        }
        return new ProducerIdentity(
                response.data().producerId(), response.data().producerEpoch());
    }

    /**
     * A client with a network of its own closes it; one on a shared network closes its group's connections (on the
     * network's owner thread).
     */
    @Override
    public void close() {
        if (ownsNetwork) {
            network.close();
        } else {
            network.release(group);
        }
        if (ownsChannels) {
            Utils.closeQuietly(channels, clientId);
        }
    }
}
