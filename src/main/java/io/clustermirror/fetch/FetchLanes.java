package io.clustermirror.fetch;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.FetchSessionHandler;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Utils;

/**
 * The fetcher lanes of one mirror: {@code mirror.num.replica.fetchers} per source broker, each its own connection with
 * its own incremental fetch session (KIP-227) and at most one Fetch in flight. A partition goes to a lane by Kafka's own
 * rule for replica fetchers, {@code abs(31 * topic.hashCode() + partition) % n}, so a broker serves a mirror's
 * partitions over n connections as it serves its followers' (a broker handles one request per connection at a time).
 *
 * <p>The network client keys connections by node id, so each lane is a node of its own: the broker's host and port
 * under an id of this class (stable for as long as the broker keeps its address, so the connection and the session
 * survive metadata refreshes). Owned by the fetch thread.
 */
final class FetchLanes {

    /** One lane: a connection to {@code broker} under {@link #node}'s id, its fetch session, whether a Fetch is out. */
    static final class Lane {
        final Node node;
        final int broker;
        final int index;
        final FetchSessionHandler session;
        boolean inFlight;
        /** Fetches built so far, for rotating which partition comes first. */
        int fetches;

        Lane(Node node, int broker, int index, FetchSessionHandler session) {
            this.node = node;
            this.broker = broker;
            this.index = index;
            this.session = session;
        }
    }

    private record Key(int broker, String host, int port, int index) {}

    private final int perBroker;
    private final LogContext logContext;
    private final Map<Key, Lane> lanes = new HashMap<>();
    private int nextId;

    FetchLanes(int perBroker, String mirror) {
        if (perBroker < 1) {
            throw new IllegalArgumentException("mirror.num.replica.fetchers must be at least 1, was " + perBroker);
        }
        this.perBroker = perBroker;
        this.logContext = new LogContext("[mirror " + mirror + " fetch session] ");
    }

    /** Kafka's replica fetcher rule: which of a broker's n lanes fetches the partition. */
    static int laneIndex(TopicPartition tp, int perBroker) {
        return Utils.abs(31 * tp.topic().hashCode() + tp.partition()) % perBroker;
    }

    /** The lane that fetches {@code tp} from its leader. */
    Lane lane(Node leader, TopicPartition tp) {
        return lanes.computeIfAbsent(
                new Key(leader.id(), leader.host(), leader.port(), laneIndex(tp, perBroker)), this::newLane);
    }

    private Lane newLane(Key key) {
        int id = nextId++;
        return new Lane(
                new Node(id, key.host(), key.port(), null),
                key.broker(),
                key.index(),
                new FetchSessionHandler(logContext, id));
    }

    /**
     * The nodes for the network client: every lane to every broker of the view (lanes of brokers that left it or
     * moved are dropped; their idle connections close after {@code connections.max.idle.ms}).
     */
    List<Node> nodes(Collection<Node> brokers) {
        Map<Key, Lane> kept = new HashMap<>();
        for (Node broker : brokers) {
            for (int index = 0; index < perBroker; index++) {
                Key key = new Key(broker.id(), broker.host(), broker.port(), index);
                Lane lane = lanes.get(key);
                kept.put(key, lane != null ? lane : newLane(key));
            }
        }
        lanes.clear();
        lanes.putAll(kept);
        List<Node> nodes = new ArrayList<>();
        lanes.values().forEach(l -> nodes.add(l.node));
        return nodes;
    }

    Collection<Lane> all() {
        return lanes.values();
    }
}
