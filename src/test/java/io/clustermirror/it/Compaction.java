package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.clustermirror.batches.FillerBatches;
import io.clustermirror.embedded.KafkaBrokerProcess;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/** Making a broker's cleaner run on a compacted topic now, and reading what it left. */
final class Compaction {

    static final String FILLER_KEY = new String(FillerBatches.KEY);

    /** A compacted topic whose cleaner runs as soon as a segment rolls, and rolls every 100 ms. */
    static final Map<String, String> CLEAN_AT_ONCE = Map.of(
            "cleanup.policy",
            "compact",
            "segment.ms",
            "100",
            "min.cleanable.dirty.ratio",
            "0.001",
            "min.compaction.lag.ms",
            "0",
            "delete.retention.ms",
            "0");

    private Compaction() {}

    /**
     * Rolls the segment (one record with key {@code roll-key-0} each time) until the broker's batches of partition 0
     * show what the test needs of the cleaner.
     */
    static void awaitCleaned(KafkaBrokerProcess broker, String topic, Predicate<List<Kafka.Batch>> cleaned) {
        await(topic + " cleaned on " + broker.bootstrapServers())
                .atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(500))
                .untilAsserted(() -> {
                    Kafka.produce(broker.bootstrapServers(), topic, 1, "none", "roll");
                    List<Kafka.Batch> batches = Kafka.batches(broker, topic, 0, 0);
                    // a timeout then shows what the cleaner had left at the last look
                    assertThat(cleaned.test(batches))
                            .as("the cleaner's result in %s", batches)
                            .isTrue();
                });
    }

    /** Whether the cleaner removed records of the batch holding {@code offset}, or the whole batch. */
    static Predicate<List<Kafka.Batch>> cleanedAt(long offset) {
        return batches ->
                batches.stream().noneMatch(b -> b.baseOffset() <= offset && offset <= b.lastOffset() && !hasHoles(b));
    }

    static boolean hasHoles(Kafka.Batch batch) {
        return !batch.control() && batch.count() != null && batch.count() < batch.lastOffset() - batch.baseOffset() + 1;
    }

    /** The last value of every key, fillers left out: what a compacted topic means. */
    static Map<String, String> latestByKey(List<Kafka.Rec> records) {
        Map<String, String> latest = new HashMap<>();
        records.stream().filter(r -> !FILLER_KEY.equals(r.key())).forEach(r -> latest.put(r.key(), r.value()));
        return latest;
    }
}
