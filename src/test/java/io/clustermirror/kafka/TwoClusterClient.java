package io.clustermirror.kafka;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.ClientRequest;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.clients.KafkaClient;
import org.apache.kafka.clients.LeastLoadedNode;
import org.apache.kafka.clients.MockClient;
import org.apache.kafka.clients.RequestCompletionHandler;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.requests.AbstractRequest;

/**
 * Two of kafka-clients' {@link MockClient}s behind one network client, as a fetcher's one network carries both the
 * source's and the destination's connections: a connection goes to the mock of its broker's host, so a test prepares
 * each cluster's answers on its own mock.
 */
public final class TwoClusterClient implements KafkaClient {

    private final Map<String, MockClient> byHost;
    private final Map<String, MockClient> byConnection = new ConcurrentHashMap<>();
    /** Every request sent, in order, with the connection it went over. */
    public final List<ClientRequest> sent = new CopyOnWriteArrayList<>();

    public TwoClusterClient(Map<String, MockClient> byHost) {
        this.byHost = byHost;
    }

    private MockClient of(Node node) {
        MockClient client = byHost.get(node.host());
        byConnection.put(node.idString(), client);
        return client;
    }

    private MockClient of(String connection) {
        return byConnection.get(connection);
    }

    @Override
    public boolean isReady(Node node, long now) {
        return of(node).isReady(node, now);
    }

    @Override
    public boolean ready(Node node, long now) {
        return of(node).ready(node, now);
    }

    @Override
    public long connectionDelay(Node node, long now) {
        return of(node).connectionDelay(node, now);
    }

    @Override
    public long pollDelayMs(Node node, long now) {
        return of(node).pollDelayMs(node, now);
    }

    @Override
    public boolean connectionFailed(Node node) {
        return of(node).connectionFailed(node);
    }

    @Override
    public AuthenticationException authenticationException(Node node) {
        return of(node).authenticationException(node);
    }

    @Override
    public void send(ClientRequest request, long now) {
        sent.add(request);
        of(request.destination()).send(request, now);
    }

    @Override
    public List<ClientResponse> poll(long timeout, long now) {
        List<ClientResponse> responses = new ArrayList<>();
        byHost.values().forEach(client -> responses.addAll(client.poll(0, now)));
        return responses;
    }

    @Override
    public void disconnect(String nodeId) {
        of(nodeId).disconnect(nodeId);
    }

    @Override
    public void close(String nodeId) {
        MockClient client = of(nodeId);
        if (client != null) {
            client.close(nodeId);
        }
    }

    @Override
    public LeastLoadedNode leastLoadedNode(long now) {
        return byHost.values().iterator().next().leastLoadedNode(now);
    }

    @Override
    public int inFlightRequestCount() {
        return byHost.values().stream()
                .mapToInt(MockClient::inFlightRequestCount)
                .sum();
    }

    @Override
    public boolean hasInFlightRequests() {
        return byHost.values().stream().anyMatch(MockClient::hasInFlightRequests);
    }

    @Override
    public int inFlightRequestCount(String nodeId) {
        return of(nodeId).inFlightRequestCount(nodeId);
    }

    @Override
    public boolean hasInFlightRequests(String nodeId) {
        return of(nodeId).hasInFlightRequests(nodeId);
    }

    @Override
    public boolean hasReadyNodes(long now) {
        return byHost.values().stream().anyMatch(c -> c.hasReadyNodes(now));
    }

    @Override
    public void wakeup() {
        byHost.values().forEach(MockClient::wakeup);
    }

    @Override
    public ClientRequest newClientRequest(
            String nodeId, AbstractRequest.Builder<?> requestBuilder, long createdTimeMs, boolean expectResponse) {
        return of(nodeId).newClientRequest(nodeId, requestBuilder, createdTimeMs, expectResponse);
    }

    @Override
    public ClientRequest newClientRequest(
            String nodeId,
            AbstractRequest.Builder<?> requestBuilder,
            long createdTimeMs,
            boolean expectResponse,
            int requestTimeoutMs,
            RequestCompletionHandler callback) {
        return of(nodeId)
                .newClientRequest(nodeId, requestBuilder, createdTimeMs, expectResponse, requestTimeoutMs, callback);
    }

    @Override
    public void initiateClose() {
        byHost.values().forEach(MockClient::initiateClose);
    }

    @Override
    public boolean active() {
        return byHost.values().iterator().next().active();
    }

    @Override
    public void close() {
        byHost.values().forEach(MockClient::close);
    }
}
