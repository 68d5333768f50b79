package io.clustermirror.topics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.MockAdminClient;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.junit.jupiter.api.Test;

/** {@link DestinationTopicBatch#awaitServed}: how long a REST start waits between two looks at a new topic. */
class DestinationTopicBatchTest {

    private static final Node BROKER = new Node(0, "localhost", 9092);

    @Test
    void aTopicNotShownYetShouldBeLookedAtAgainAfterTenMillisecondsThenAfterWaitsDoublingToAHundred() throws Exception {
        MockAdminClient destination = new MockAdminClient(List.of(BROKER), BROKER);
        List<Long> waits = new ArrayList<>();
        DestinationTopicBatch batch = new DestinationTopicBatch(destination, destination, 30_000, millis -> {
            waits.add(millis);
            if (waits.size() == 6) { // the broker shows it from the seventh look on
                destination.addTopic(false, "created", List.of(led(0)), Map.of());
            }
        });

        batch.awaitServed(Map.of("created", 1));

        assertThat(waits).hasSize(6);
        // kafka-clients' ExponentialBackoff(10, 2, 100, 0.2): 10, 20, 40, 80, then 100 ms, each ±20%, never past 100
        assertThat(waits.get(0)).isBetween(8L, 12L);
        assertThat(waits.get(1)).isBetween(16L, 24L);
        assertThat(waits.get(2)).isBetween(32L, 48L);
        assertThat(waits.get(3)).isBetween(64L, 96L);
        assertThat(waits.subList(4, 6)).allSatisfy(wait -> assertThat(wait).isBetween(80L, 100L));
    }

    @Test
    void topicsShownLedAtTheFirstLookShouldNotBeWaitedFor() throws Exception {
        MockAdminClient destination = new MockAdminClient(List.of(BROKER), BROKER);
        destination.addTopic(false, "served", List.of(led(0), led(1)), Map.of());
        List<Long> waits = new ArrayList<>();
        DestinationTopicBatch batch = new DestinationTopicBatch(destination, destination, 30_000, waits::add);

        batch.awaitServed(Map.of("served", 2));

        assertThat(waits).isEmpty();
    }

    private static TopicPartitionInfo led(int partition) {
        return new TopicPartitionInfo(partition, BROKER, List.of(BROKER), List.of(BROKER));
    }
}
