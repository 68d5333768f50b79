package io.clustermirror.kafka;

import java.nio.channels.SelectionKey;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.ApiVersions;
import org.apache.kafka.clients.ClientRequest;
import org.apache.kafka.clients.DefaultHostResolver;
import org.apache.kafka.clients.KafkaClient;
import org.apache.kafka.clients.ManualMetadataUpdater;
import org.apache.kafka.clients.MetadataRecoveryStrategy;
import org.apache.kafka.clients.NetworkClient;
import org.apache.kafka.clients.NodeApiVersions;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.memory.MemoryPool;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.network.ChannelMetadataRegistry;
import org.apache.kafka.common.network.KafkaChannel;
import org.apache.kafka.common.network.Selector;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;

/**
 * One kafka-clients {@link NetworkClient} (framing, version negotiation, reconnects, TLS, SASL) that carries the
 * connections of many {@link WireClient}s: several clusters with their own security, several connections to one broker
 * (fetcher lanes). The client keys connections by node id, so each connection is a node of this network's own
 * numbering, and a connection is built by its cluster's channel builder. Not thread-safe except {@link #wakeup()} and
 * {@link #connection}: one thread owns it and polls it (a fetcher of the pool, or the caller of a standalone client).
 */
public final class WireNetwork implements AutoCloseable {

    /**
     * The largest response accepted, in bytes: a Fetch carries at most {@code FetchLoop}'s 16 MiB plus one batch over
     * it (a topic's {@code max.message.bytes}), everything else is small. A peer that announces more (a fake or broken
     * broker: 4 bytes of length are enough to ask for 2 GiB) is disconnected before anything is allocated.
     */
    static final int MAX_RECEIVE_BYTES = 128 << 20;

    private static final int MAX_IN_FLIGHT_PER_CONNECTION = 5;

    /** Which connection a node of this network is: a group (a cluster as one owner sees it), a broker, an index. */
    private record Key(String group, int broker, String host, int port, int index) {}

    private final String name;
    private final KafkaClient client;
    private final ApiVersions apiVersions;
    private final Metrics metrics;
    private final ChannelMux channels;
    private final Time time = Time.SYSTEM;
    private final Map<Key, Node> connections = new ConcurrentHashMap<>();
    private final Map<Integer, Key> keys = new ConcurrentHashMap<>();
    private final AtomicInteger nextId = new AtomicInteger();
    private final AtomicInteger nextCorrelationId = new AtomicInteger();
    /** The thread in a turn of this network's owner ({@link #turnsOn}), null between turns. */
    private volatile Thread owner;
    /** The owner woke its own network in its turn: its next poll does not wait. Touched by the owner only. */
    private boolean ownerWoke;

    private WireNetwork(
            String name, KafkaClient client, ApiVersions apiVersions, Metrics metrics, ChannelMux channels) {
        this.name = name;
        this.client = client;
        this.apiVersions = apiVersions;
        this.metrics = metrics;
        this.channels = channels;
    }

    /** A network of kafka-clients' own client, built as {@code ClientUtils.createNetworkClient} builds it, but with a bounded receive. */
    public static WireNetwork create(String name, int defaultRequestTimeoutMs) {
        Metrics metrics = new Metrics();
        ApiVersions apiVersions = new ApiVersions();
        LogContext logContext = new LogContext("[" + name + "] ");
        ChannelMux channels = new ChannelMux();
        Selector selector = new Selector(
                MAX_RECEIVE_BYTES,
                9 * 60 * 1000L,
                metrics,
                Time.SYSTEM,
                "cluster-mirror-wire",
                Map.of(),
                false,
                channels,
                logContext);
        NetworkClient client = new NetworkClient(
                new ManualMetadataUpdater(List.of()),
                null,
                selector,
                name,
                MAX_IN_FLIGHT_PER_CONNECTION,
                50,
                1000,
                1 << 20,
                1 << 20,
                defaultRequestTimeoutMs,
                10_000,
                30_000,
                Time.SYSTEM,
                true,
                apiVersions,
                null,
                logContext,
                new DefaultHostResolver(),
                null,
                300_000,
                MetadataRecoveryStrategy.NONE);
        return new WireNetwork(name, client, apiVersions, metrics, channels);
    }

    /**
     * A network over the given client: the test seam of the data plane's unit tests, which give kafka-clients'
     * {@code MockClient} (public for them only, since they live in another package; the service never calls it).
     */
    public static WireNetwork over(String name, KafkaClient client) {
        return new WireNetwork(name, client, new ApiVersions(), new Metrics(), null);
    }

    /**
     * The node under which this network connects to {@code broker} as connection {@code index} of {@code group}
     * (stable while the broker keeps its address, so a connection and its fetch session survive metadata refreshes),
     * built by {@code channels} (null: the network's own test client).
     */
    Node connection(String group, ChannelBuilder builder, Node broker, int index) {
        return connections.computeIfAbsent(new Key(group, broker.id(), broker.host(), broker.port(), index), key -> {
            int id = nextId.getAndIncrement();
            if (channels != null) {
                channels.register(Integer.toString(id), builder);
            }
            keys.put(id, key);
            return new Node(id, broker.host(), broker.port(), broker.rack());
        });
    }

    /** Whether {@code node} is one of this network's connections (not a broker as a cluster names it). */
    boolean isConnection(Node node) {
        Key key = keys.get(node.id());
        return key != null && connections.get(key) == node;
    }

    /** The broker a connection of this network goes to, as its cluster numbers it. */
    int brokerOf(Node connection) {
        Key key = keys.get(connection.id());
        return key == null ? -1 : key.broker();
    }

    /** Closes every connection of {@code group} (on the owner thread). */
    void release(String group) {
        connections.entrySet().removeIf(entry -> {
            if (!entry.getKey().group().equals(group)) {
                return false;
            }
            String id = entry.getValue().idString();
            client.close(id);
            keys.remove(entry.getValue().id());
            if (channels != null) {
                channels.unregister(id);
            }
            return true;
        });
    }

    KafkaClient client() {
        return client;
    }

    Time time() {
        return time;
    }

    int nextCorrelationId() {
        return nextCorrelationId.getAndIncrement();
    }

    /** The newest version of {@code api} both sides speak, once the connection is ready; -1 before. */
    short usableVersion(Node connection, ApiKeys api) {
        NodeApiVersions versions = apiVersions.get(connection.idString());
        return versions == null ? -1 : versions.latestUsableVersion(api);
    }

    void send(ClientRequest request) {
        client.send(request, time.milliseconds());
    }

    /**
     * The owner's turns: {@code thread} polls this network and runs its rounds after every poll, until
     * {@code turnsOn(null)}. Its own wake-ups in a turn then cost no system call (below).
     */
    public void turnsOn(Thread thread) {
        owner = thread;
        ownerWoke = false;
    }

    /**
     * Does network I/O and runs the completion handlers of finished requests. It does not wait if the owner woke the
     * network in its turn; what the completion handlers wake it for, the owner's rounds after this poll take up.
     */
    public void poll(long timeoutMs) {
        long wait = ownerWoke ? 0 : timeoutMs;
        ownerWoke = false;
        client.poll(wait, time.milliseconds());
        ownerWoke = false;
    }

    /**
     * Ends a poll under way at once, or makes the next one not wait. From the owner in its turn this is a flag: a
     * completion handler's wake-up (a Fetch answer queued batches, a Produce answer freed queue room) was a system call
     * to the selector's wake-up pipe, and made the poll after the next rounds return at once, an empty turn more per
     * answer (decisions §8).
     */
    public void wakeup() {
        if (Thread.currentThread() == owner) {
            ownerWoke = true;
        } else {
            client.wakeup();
        }
    }

    @Override
    public void close() {
        Utils.closeQuietly(client, name);
        metrics.close();
        if (channels != null) {
            channels.close();
        }
    }

    /**
     * The channel builder of the network's selector: each connection is built by the builder of its cluster (its
     * security protocol, TLS and SASL settings), registered with its node id before the first connect.
     */
    private static final class ChannelMux implements ChannelBuilder {
        private final Map<String, ChannelBuilder> byConnection = new ConcurrentHashMap<>();

        void register(String connectionId, ChannelBuilder builder) {
            byConnection.put(connectionId, builder);
        }

        void unregister(String connectionId) {
            byConnection.remove(connectionId);
        }

        @Override
        public KafkaChannel buildChannel(
                String id,
                SelectionKey key,
                int maxReceiveSize,
                MemoryPool memoryPool,
                ChannelMetadataRegistry metadataRegistry)
                throws KafkaException {
            ChannelBuilder builder = byConnection.get(id);
            if (builder == null) {
                throw new KafkaException("connection " + id + " has no cluster (released while connecting)");
            }
            return builder.buildChannel(id, key, maxReceiveSize, memoryPool, metadataRegistry);
        }

        @Override
        public void configure(Map<String, ?> configs) {}

        /** The builders belong to the clients that registered them; nothing of their own to close here. */
        @Override
        public void close() {}
    }
}
