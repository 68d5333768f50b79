package io.clustermirror.fetch;

import io.clustermirror.kafka.WireClient;
import java.util.Collection;
import java.util.HashMap;
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
 * <p>Owned by the fetcher's thread.
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
        /** Since when (the throttle's clock, ms) this lane's Fetch has been held back for the budget, or -1. */
        long throttledSinceMs = -1;
        /** Whether the current round held this lane's Fetch back. */
        boolean heldBack;
        /** When (the throttle's clock, ms) this lane's last Fetch was answered. */
        long answeredAtMs = Long.MIN_VALUE / 2;

        Lane(Node node, int broker, int index, FetchSessionHandler session) {
            this.node = node;
            this.broker = broker;
            this.index = index;
            this.session = session;
        }
    }

    private record Key(int broker, String host, int port, int index) {}

    private final int perBroker;
    private final WireClient source;
    private final LogContext logContext;
    private final Map<Key, Lane> lanes = new HashMap<>();

    FetchLanes(int perBroker, WireClient source, String mirror) {
        if (perBroker < 1) {
            throw new IllegalArgumentException("mirror.num.replica.fetchers must be at least 1, was " + perBroker);
        }
        this.perBroker = perBroker;
        this.source = source;
        this.logContext = new LogContext("[mirror " + mirror + " fetch session] ");
    }

    /** Kafka's replica fetcher rule: which of a broker's n lanes fetches the partition. */
    static int laneIndex(TopicPartition tp, int perBroker) {
        return Utils.abs(31 * tp.topic().hashCode() + tp.partition()) % perBroker;
    }

    /**
     * The lane that fetches {@code tp} from its leader: a connection of the source client of its own (stable while the
     * broker keeps its address, so the connection and its fetch session survive metadata refreshes).
     */
    Lane lane(Node leader, TopicPartition tp) {
        return lanes.computeIfAbsent(
                new Key(leader.id(), leader.host(), leader.port(), laneIndex(tp, perBroker)), key -> {
                    Node connection = source.connection(leader, key.index());
                    return new Lane(
                            connection,
                            key.broker(),
                            key.index(),
                            new FetchSessionHandler(logContext, connection.id()));
                });
    }

    Collection<Lane> all() {
        return lanes.values();
    }
}
