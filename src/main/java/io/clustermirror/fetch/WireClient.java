package io.clustermirror.fetch;

import java.io.IOException;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.ApiVersions;
import org.apache.kafka.clients.ClientRequest;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.clients.ClientUtils;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.DefaultHostResolver;
import org.apache.kafka.clients.KafkaClient;
import org.apache.kafka.clients.ManualMetadataUpdater;
import org.apache.kafka.clients.MetadataRecoveryStrategy;
import org.apache.kafka.clients.NetworkClient;
import org.apache.kafka.clients.NetworkClientUtils;
import org.apache.kafka.clients.RequestCompletionHandler;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.network.Selector;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;

/**
 * Kafka's own {@link NetworkClient} (framing, version negotiation, reconnects, TLS, SASL) pointed at
 * one cluster, for raw Fetch and Produce requests. Not thread-safe except {@link #wakeup()}: one thread
 * owns it and polls it.
 */
public final class WireClient implements AutoCloseable {

    private final String clientId;
    /**
     * The largest response accepted, in bytes: a Fetch carries at most {@code FetchLoop}'s 16 MiB plus one batch over
     * it (a topic's {@code max.message.bytes}), everything else is small. A peer that announces more (a fake or broken
     * broker: 4 bytes of length are enough to ask for 2 GiB) is disconnected before anything is allocated.
     */
    static final int MAX_RECEIVE_BYTES = 128 << 20;

    private final KafkaClient client;
    private final ManualMetadataUpdater nodes;
    private final Metrics metrics;
    private final int requestTimeoutMs;
    private final ApiVersions apiVersions;
    private final Time time = Time.SYSTEM;

    private WireClient(
            String clientId,
            KafkaClient client,
            ManualMetadataUpdater nodes,
            Metrics metrics,
            int requestTimeoutMs,
            ApiVersions apiVersions) {
        this.clientId = clientId;
        this.client = client;
        this.nodes = nodes;
        this.metrics = metrics;
        this.requestTimeoutMs = requestTimeoutMs;
        this.apiVersions = apiVersions;
    }

    /** The newest version of {@code api} both sides speak, once the connection to {@code node} is ready; -1 before. */
    public short usableVersion(Node node, org.apache.kafka.common.protocol.ApiKeys api) {
        org.apache.kafka.clients.NodeApiVersions versions = apiVersions.get(node.idString());
        return versions == null ? -1 : versions.latestUsableVersion(api);
    }

    /** A client with the given connection properties (bootstrap, security, sasl, ssl). */
    public static WireClient create(String clientId, Map<String, ?> connection, int requestTimeoutMs) {
        Map<String, Object> props = new HashMap<>(connection);
        props.put(CommonClientConfigs.CLIENT_ID_CONFIG, clientId);
        props.putIfAbsent(CommonClientConfigs.SEND_BUFFER_CONFIG, 1 << 20);
        props.putIfAbsent(CommonClientConfigs.RECEIVE_BUFFER_CONFIG, 1 << 20);
        props.keySet().retainAll(AdminClientConfig.configNames());
        AdminClientConfig config = new AdminClientConfig(props);
        ManualMetadataUpdater nodes = new ManualMetadataUpdater(List.of());
        Metrics metrics = new Metrics();
        ApiVersions apiVersions = new ApiVersions();
        Time time = Time.SYSTEM;
        LogContext logContext = new LogContext("[" + clientId + "] ");
        ChannelBuilder channelBuilder = ClientUtils.createChannelBuilder(config, time, logContext);
        // kafka-clients' own client, built as ClientUtils.createNetworkClient builds it, but with a bounded receive
        Selector selector = new Selector(
                MAX_RECEIVE_BYTES,
                config.getLong(CommonClientConfigs.CONNECTIONS_MAX_IDLE_MS_CONFIG),
                metrics,
                time,
                "cluster-mirror-wire",
                Map.of(),
                false,
                channelBuilder,
                logContext);
        NetworkClient client = new NetworkClient(
                nodes,
                null,
                selector,
                clientId,
                5,
                config.getLong(CommonClientConfigs.RECONNECT_BACKOFF_MS_CONFIG),
                config.getLong(CommonClientConfigs.RECONNECT_BACKOFF_MAX_MS_CONFIG),
                config.getInt(CommonClientConfigs.SEND_BUFFER_CONFIG),
                config.getInt(CommonClientConfigs.RECEIVE_BUFFER_CONFIG),
                requestTimeoutMs,
                config.getLong(CommonClientConfigs.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG),
                config.getLong(CommonClientConfigs.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG),
                time,
                true,
                apiVersions,
                null,
                logContext,
                new DefaultHostResolver(),
                null,
                config.getLong(CommonClientConfigs.METADATA_RECOVERY_REBOOTSTRAP_TRIGGER_MS_CONFIG),
                MetadataRecoveryStrategy.forName(
                        config.getString(CommonClientConfigs.METADATA_RECOVERY_STRATEGY_CONFIG)));
        return new WireClient(clientId, client, nodes, metrics, requestTimeoutMs, apiVersions);
    }

    /** A client over the given network client (unit tests give kafka-clients' {@code MockClient}). */
    static WireClient over(String clientId, KafkaClient client, int requestTimeoutMs) {
        return new WireClient(
                clientId,
                client,
                new ManualMetadataUpdater(List.of()),
                new Metrics(),
                requestTimeoutMs,
                new ApiVersions());
    }

    public void setNodes(Collection<Node> brokers) {
        nodes.setNodes(List.copyOf(brokers));
    }

    /** Starts connecting if needed; true when a request can be sent now. */
    public boolean ready(Node node) {
        return client.ready(node, time.milliseconds());
    }

    public boolean connectionFailed(Node node) {
        return client.connectionFailed(node);
    }

    public void send(Node node, AbstractRequest.Builder<?> request, RequestCompletionHandler handler) {
        long now = time.milliseconds();
        ClientRequest clientRequest =
                client.newClientRequest(node.idString(), request, now, true, requestTimeoutMs, handler);
        client.send(clientRequest, now);
    }

    /** Does network I/O and runs the completion handlers of finished requests. */
    public void poll(long timeoutMs) {
        client.poll(timeoutMs, time.milliseconds());
    }

    public void wakeup() {
        client.wakeup();
    }

    /** Blocking request/response, for the few calls outside the hot loop. */
    public ClientResponse call(Node node, AbstractRequest.Builder<?> request) throws IOException {
        if (!NetworkClientUtils.awaitReady(client, node, time, requestTimeoutMs)) {
            throw new IOException(clientId + ": broker " + node + " not ready within " + requestTimeoutMs + " ms");
        }
        ClientRequest clientRequest = client.newClientRequest(node.idString(), request, time.milliseconds(), true);
        ClientResponse response = NetworkClientUtils.sendAndReceive(client, clientRequest, time);
        if (response.versionMismatch() != null) {
            throw new IOException(clientId + ": " + response.versionMismatch().getMessage());
        }
        return response;
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

    @Override
    public void close() {
        Utils.closeQuietly(client, clientId);
        metrics.close();
    }
}
