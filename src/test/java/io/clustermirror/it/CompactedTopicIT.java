package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.batches.FillerBatches;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;

/** Issue 5: a cleaned compacted source keeps every surviving record at its offset; the holes are filled. */
class CompactedTopicIT extends ServiceIT {

    @Test
    void cleanedCompactedSourceTopicShouldKeepEveryRecordAtItsSourceOffset() throws Exception {
        String mirror = uniqueName("compact");
        String topic = uniqueName("compact");
        createMirrorAndSourceTopic(mirror, topic, 1, Compaction.CLEAN_AT_ONCE);
        // rounds 0-2 write keys 0..199, round 3 overwrites keys 0..99: whole batches go, and batches keep some records.
        // The cleaner keeps an idempotent producer's last batch as an empty batch; other producers' batches vanish.
        Kafka.produce(bed.source().bootstrapServers(), topic, 200, "none", "round");
        Kafka.produce(
                bed.source().bootstrapServers(),
                topic,
                200,
                "lz4",
                "round",
                Map.of("enable.idempotence", false, "acks", "1"));
        Kafka.produce(
                bed.source().bootstrapServers(),
                topic,
                200,
                "none",
                "round",
                Map.of("enable.idempotence", false, "acks", "1"));
        Kafka.produce(bed.source().bootstrapServers(), topic, 100, "zstd", "round");
        Compaction.awaitCleaned(
                bed.source(), topic, batches -> batches.stream().anyMatch(Compaction::hasHoles) && hasGaps(batches));
        stopCleaning(topic);
        List<Kafka.Batch> sourceBatches = Kafka.batches(bed.source(), topic, 0, 0);
        assertThat(sourceBatches)
                .as("source batches with holes inside: " + sourceBatches)
                .anyMatch(Compaction::hasHoles);
        assertThat(hasGaps(sourceBatches))
                .as("gaps between batches: " + sourceBatches)
                .isTrue();

        // When
        startTopics(mirror, topic);
        awaitConverged(mirror, topic);

        // Then
        assertMirroredWithFillers(topic, "read_uncommitted");

        // and a pause/resume (which checks the destination's last batch against the source) goes on from there
        topicVerb(mirror, "pause", topic);
        awaitPartitionState(mirror, topic, "PAUSED");
        topicVerb(mirror, "resume", topic);
        Kafka.produce(bed.source().bootstrapServers(), topic, 50, "gzip", "after");
        awaitConverged(mirror, topic);
        assertMirroredWithFillers(topic, "read_uncommitted");
    }

    @Test
    void aSourceCleanedWhileTheMirrorWasPausedShouldResumeWhereItStopped() throws Exception {
        // Given a compacted topic mirrored to its end, then paused
        String mirror = uniqueName("clean-paused");
        String topic = uniqueName("clean-paused");
        createMirrorAndSourceTopic(mirror, topic, 1, Compaction.CLEAN_AT_ONCE);
        Kafka.produce(bed.source().bootstrapServers(), topic, 100, "lz4", "round");
        startTopics(mirror, topic);
        awaitConverged(mirror, topic);
        topicVerb(mirror, "pause", topic);
        awaitPartitionState(mirror, topic, "PAUSED");
        long mirroredEnd = destinationEnd(topic);

        // When the source's cleaner removes records of the batch the destination ends with (their keys written again)
        Kafka.produce(bed.source().bootstrapServers(), topic, 100, "lz4", "round");
        Compaction.awaitCleaned(bed.source(), topic, Compaction.cleanedAt(mirroredEnd - 1));
        topicVerb(mirror, "resume", topic);

        // Then LOG_TRUNCATION finds the destination still a prefix (what differs is only what the cleaner removed) and
        // mirroring goes on from where it stopped, instead of failing the partition as diverged
        awaitConverged(mirror, topic);
        assertThat(destinationEnd(topic))
                .isEqualTo(Kafka.offsetsOf(bed.source(), topic).get(new TopicPartition(topic, 0)));
        assertThat(describeTopic(mirror, topic).getString("partitions[0].error"))
                .isNull();
        assertThat(Compaction.latestByKey(Kafka.readAll(bed.destination().bootstrapServers(), topic)))
                .isEqualTo(Compaction.latestByKey(Kafka.readAll(bed.source().bootstrapServers(), topic)));
    }

    private static long destinationEnd(String topic) throws Exception {
        return Kafka.offsetsOf(bed.destination(), topic).get(new TopicPartition(topic, 0));
    }

    @Test
    void cleanedTransactionalChangelogShouldKeepOffsetsAndTheCommittedView() throws Exception {
        // what a Kafka Streams changelog under exactly-once looks like: compacted, written in transactions, some
        // aborted
        String mirror = uniqueName("changelog");
        String topic = uniqueName("changelog");
        createMirrorAndSourceTopic(mirror, topic, 1, Compaction.CLEAN_AT_ONCE);
        // every round is one batch (flush() sends it; the linger never ends it early), so that round 3's batch is
        // the one the cleaner holes where round 5 overwrites keys 0..19. With a short linger a busy machine can split
        // a round at any record, and a split between key-19 and key-20 leaves no batch with holes.
        try (KafkaProducer<byte[], byte[]> producer = Kafka.producer(
                bed.source().bootstrapServers(),
                Map.of("transactional.id", uniqueName("changelog-producer"), "linger.ms", 60_000))) {
            producer.initTransactions();
            for (int round = 0; round < 6; round++) {
                producer.beginTransaction();
                for (int i = 0; i < (round == 5 ? 20 : 50); i++) {
                    producer.send(new ProducerRecord<>(
                            topic, 0, ("key-" + i).getBytes(), ("round-" + round + "-" + i).getBytes()));
                }
                producer.flush();
                if (round % 3 == 1) {
                    producer.abortTransaction();
                } else {
                    producer.commitTransaction();
                }
            }
        }
        Compaction.awaitCleaned(
                bed.source(),
                topic,
                batches -> batches.stream().anyMatch(b -> b.transactional() && Compaction.hasHoles(b))
                        && hasGaps(batches));
        stopCleaning(topic);
        List<Kafka.Batch> sourceBatches = Kafka.batches(bed.source(), topic, 0, 0);
        assertThat(sourceBatches)
                .as("cleaned transactional batches with holes: " + sourceBatches)
                .anyMatch(b -> b.transactional() && Compaction.hasHoles(b));
        assertThat(hasGaps(sourceBatches))
                .as("transactions and markers cleaned away: " + sourceBatches)
                .isTrue();

        // When
        startTopics(mirror, topic);
        awaitConverged(mirror, topic);

        // Then both views keep every source record at its offset, and the latest committed value per key is the
        // source's
        assertMirroredWithFillers(topic, "read_uncommitted");
        assertMirroredWithFillers(topic, "read_committed");
        assertThat(Kafka.readAll(bed.destination().bootstrapServers(), topic, "read_committed"))
                .noneMatch(r -> r.value() != null
                        && (r.value().startsWith("round-1-") || r.value().startsWith("round-4-")));
    }

    private static boolean hasGaps(List<Kafka.Batch> batches) {
        for (int i = 1; i < batches.size(); i++) {
            if (batches.get(i).baseOffset() > batches.get(i - 1).lastOffset() + 1) {
                return true;
            }
        }
        return !batches.isEmpty() && batches.get(0).baseOffset() > 0;
    }

    /**
     * The source stops cleaning, and the destination (created with the source's configs) does not clean at all,
     * so that what is compared is what the mirror wrote, fillers included.
     */
    private static void stopCleaning(String topic) throws Exception {
        try (Admin admin = bed.sourceAdmin()) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            admin.incrementalAlterConfigs(Map.of(
                            resource,
                            List.of(
                                    new AlterConfigOp(
                                            new ConfigEntry("segment.ms", "604800000"), AlterConfigOp.OpType.SET),
                                    new AlterConfigOp(
                                            new ConfigEntry("min.cleanable.dirty.ratio", "0.99"),
                                            AlterConfigOp.OpType.SET),
                                    new AlterConfigOp(
                                            new ConfigEntry("delete.retention.ms", "86400000"),
                                            AlterConfigOp.OpType.SET))))
                    .all()
                    .get();
        }
    }

    /** Every source record at its offset on the destination; every other destination offset a filler tombstone. */
    private static void assertMirroredWithFillers(String topic, String isolation) {
        List<Kafka.Rec> source = Kafka.readAll(bed.source().bootstrapServers(), topic, isolation);
        List<Kafka.Rec> destination = Kafka.readAll(bed.destination().bootstrapServers(), topic, isolation);
        Map<Long, Kafka.Rec> destinationByOffset = new HashMap<>();
        destination.forEach(r -> destinationByOffset.put(r.offset(), r));
        for (Kafka.Rec record : source) {
            assertThat(destinationByOffset.get(record.offset()))
                    .as("source record at " + record.offset())
                    .isEqualTo(record);
        }
        // the other destination records are fillers, or records the source's cleaner removed after they were mirrored
        Map<String, Long> lastOffsetOfKey = new HashMap<>();
        source.forEach(r -> lastOffsetOfKey.merge(r.key(), r.offset(), Math::max));
        List<Kafka.Rec> others =
                destination.stream().filter(r -> !source.contains(r)).toList();
        assertThat(others).as("fillers at the holes").isNotEmpty().allSatisfy(r -> {
            if (Compaction.FILLER_KEY.equals(r.key())) {
                assertThat(r.value()).isNull();
                assertThat(r.headers()).containsExactly(FillerBatches.HEADER + "=");
            } else {
                assertThat(lastOffsetOfKey.getOrDefault(r.key(), -1L))
                        .as("superseded on the source: " + r)
                        .isGreaterThan(r.offset());
            }
        });
        assertThat(Compaction.latestByKey(destination)).isEqualTo(Compaction.latestByKey(source));
    }
}
