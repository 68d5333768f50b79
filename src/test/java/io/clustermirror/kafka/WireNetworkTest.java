package io.clustermirror.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.ClientRequest;
import org.apache.kafka.clients.MockClient;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Wake-ups of a network by its owner in its turn: a flag, not a system call, and only the next poll of the turn is
 * shortened by it, not the one after its completion handlers (the owner's rounds follow every poll).
 */
class WireNetworkTest {

    private static final Node CONNECTION = new Node(0, "localhost", 9092);

    private final MockTime time = new MockTime();
    private final MockClient mock = new MockClient(time, List.of(CONNECTION));
    private final AtomicInteger systemWakeups = new AtomicInteger();
    private final WireNetwork network = WireNetwork.over("test", mock);

    @BeforeEach
    void countWakeups() {
        mock.advanceTimeDuringPoll(true); // a poll that waits moves the fake clock by its time-out
        mock.setWakeupHook(systemWakeups::incrementAndGet);
    }

    @Test
    void theOwnersWakeupInItsTurnShouldMakeItsNextPollNotWaitWithoutASystemCall() {
        network.turnsOn(Thread.currentThread());
        long start = time.milliseconds();

        network.wakeup();
        network.poll(100);

        assertThat(time.milliseconds()).as("the poll did not wait").isEqualTo(start);
        assertThat(systemWakeups).hasValue(0);
        // and the flag is spent: the next poll waits
        network.poll(100);
        assertThat(time.milliseconds()).isEqualTo(start + 100);
    }

    @Test
    void aWakeupFromACompletionHandlerShouldNotShortenThePollAfterTheOwnersNextRounds() {
        network.turnsOn(Thread.currentThread());
        mock.ready(CONNECTION, time.milliseconds());
        ClientRequest request = mock.newClientRequest(
                CONNECTION.idString(),
                new InitProducerIdRequest.Builder(new InitProducerIdRequestData().setTransactionTimeoutMs(1000)),
                time.milliseconds(),
                true,
                1000,
                response -> network.wakeup()); // a Fetch answer that queued batches wakes the appender so
        network.send(request);
        mock.respond(new InitProducerIdResponse(new InitProducerIdResponseData()));

        network.poll(100); // the answer is there: its handler runs in this poll
        long answered = time.milliseconds();
        // (MockClient waits out every poll's time-out whatever the selector would do: what this shows is that the
        // handler's wake-up made no system call and left no flag behind, not how a real selector would have waited)
        network.poll(100);

        assertThat(time.milliseconds() - answered)
                .as("the poll after the answer waited")
                .isEqualTo(100);
        assertThat(systemWakeups).hasValue(0);
    }

    @Test
    void anotherThreadsWakeupShouldWakeTheSelector() throws Exception {
        network.turnsOn(Thread.currentThread());

        CompletableFuture.runAsync(network::wakeup).get();
        network.turnsOn(null);
        network.wakeup(); // between turns the owner's thread is any thread

        assertThat(systemWakeups).hasValue(2);
    }
}
