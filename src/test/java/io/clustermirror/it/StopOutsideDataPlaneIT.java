package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Stopping a topic whose partitions are not in the data plane (FAILED here) reads back and aborts what is left open on
 * each on the fetcher pool's connections: no thread and no client per partition (it used to start one of each).
 */
class StopOutsideDataPlaneIT extends ServiceIT {

    private static final int PARTITIONS = 60;

    @Test
    void stoppingAManyPartitionFailedTopicShouldStartNoThreadPerPartition() throws Exception {
        // Given a topic of 60 partitions, each FAILED: the destination holds another record at offset 0 than the source
        String mirror = uniqueName("stopfailed");
        String topic = uniqueName("stopfailed");
        createMirror(mirror);
        try (Admin source = bed.sourceAdmin();
                Admin destination = bed.destinationAdmin()) {
            Kafka.createTopic(source, topic, PARTITIONS, Map.of());
            Kafka.createTopic(destination, topic, PARTITIONS, Map.of());
        }
        writeOneRecordPerPartition(bed.source().bootstrapServers(), topic, "source");
        writeOneRecordPerPartition(bed.destination().bootstrapServers(), topic, "elsewhere");
        startTopicsAdopting(mirror, topic);
        Awaitility.await(topic + " all FAILED")
                .atMost(Duration.ofSeconds(90))
                .until(() -> describeTopic(mirror, topic).getList("partitions.state").stream()
                        .allMatch("FAILED"::equals));
        double startedBefore = threadsStarted();

        // When it is stopped
        topicVerb(mirror, "stop", topic);
        awaitAllPartitions(mirror, topic, "STOPPED");

        // Then next to no thread was started (one per partition before: 60)
        double started = threadsStarted() - startedBefore;
        assertThat(started)
                .as("threads started by the stop of %d partitions", PARTITIONS)
                .isLessThan(10);
    }

    private static void writeOneRecordPerPartition(String bootstrap, String topic, String value) {
        try (KafkaProducer<byte[], byte[]> producer = Kafka.producer(bootstrap, Map.of())) {
            for (int partition = 0; partition < PARTITIONS; partition++) {
                producer.send(new ProducerRecord<>(topic, partition, null, value.getBytes()));
            }
            producer.flush();
        }
    }

    private static double threadsStarted() {
        List<String> lines = api().get("/q/metrics")
                .then()
                .statusCode(200)
                .extract()
                .asString()
                .lines()
                .filter(line -> line.startsWith("jvm_threads_started_threads_total "))
                .toList();
        assertThat(lines).hasSize(1);
        return Double.parseDouble(lines.get(0).substring(lines.get(0).indexOf(' ') + 1));
    }
}
