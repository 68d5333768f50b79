package io.clustermirror.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.List;
import org.apache.kafka.clients.MockClient;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.Test;

/**
 * A blocking call's connection over kafka-clients' {@link MockClient}: a connection whose last attempt failed (the
 * broker was down a moment ago) is tried again after the reconnect back-off, a bounded number of times.
 */
class WireClientTest {

    private static final Node BROKER = new Node(1, "localhost", 9092);
    /** The network's own node for the broker's first connection (a network numbers its connections from 0). */
    private static final Node CONNECTION = new Node(0, "localhost", 9092);

    @Test
    void aCallShouldConnectAgainAfterAFailedAttemptRatherThanFailAtOnce() throws IOException {
        MockClient mock = new MockClient(Time.SYSTEM, List.of(CONNECTION));
        // the first attempt fails and backs off 100 ms, the second too, the third connects
        mock.setUnreachable(CONNECTION, 150);
        mock.prepareResponse(new InitProducerIdResponse(
                new InitProducerIdResponseData().setProducerId(7).setProducerEpoch((short) 1)));

        try (WireClient client = WireClient.over("check", mock, 5_000)) {
            assertThat(client.initProducerId(BROKER).producerId()).isEqualTo(7);
        }
    }

    @Test
    void aBrokerThatStaysUnreachableShouldFailTheCallAfterItsAttempts() {
        MockClient mock = new MockClient(Time.SYSTEM, List.of(CONNECTION));
        mock.setUnreachable(CONNECTION, 60_000);
        long started = System.nanoTime();

        try (WireClient client = WireClient.over("check", mock, 30_000)) {
            assertThatThrownBy(() -> client.initProducerId(BROKER))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("failed");
        }
        // three attempts, each after kafka-clients' back-off: not the request timeout
        assertThat(System.nanoTime() - started).isLessThan(5_000_000_000L);
    }
}
