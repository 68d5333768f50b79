package io.clustermirror.fetch;

import io.clustermirror.kafka.ProducerIdentity;
import org.apache.kafka.common.Node;

/**
 * A destination transactional producer that replays the transactions of one source producer on one
 * partition (transactional id {@code cluster-mirror/<mirror>/<topic>/<partition>/<source producer id>}),
 * so that each destination transaction touches that partition only and its marker lands where the
 * source's does. Append thread only.
 */
final class ReplayProducer {

    static final String PREFIX = "cluster-mirror/";

    final String transactionalId;
    final long sourceProducerId;
    final ProducerIdentity identity;
    final Node coordinator;
    int nextSequence;
    /** The open transaction's first offset on this partition (-1 when none is open). */
    long firstOffset = -1;
    /** When the open transaction began here (epoch millis). */
    long openSinceMs;

    ReplayProducer(
            String transactionalId,
            long sourceProducerId,
            ProducerIdentity identity,
            Node coordinator,
            int nextSequence) {
        this.transactionalId = transactionalId;
        this.sourceProducerId = sourceProducerId;
        this.identity = identity;
        this.coordinator = coordinator;
        this.nextSequence = nextSequence;
    }

    static String transactionalIdPrefix(String mirror, String topic, int partition) {
        return PREFIX + mirror + "/" + topic + "/" + partition + "/";
    }

    boolean open() {
        return firstOffset >= 0;
    }
}
