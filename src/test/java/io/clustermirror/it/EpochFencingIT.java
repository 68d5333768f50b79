package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.embedded.KafkaBrokerProcess;
import io.clustermirror.testbed.ServiceProcess;
import io.clustermirror.testbed.UncleanElection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * EPOCH_FENCING: a source whose log no longer holds what was mirrored from it (an unclean leader election) is
 * detected by the source leader itself, from the epoch the mirror sends with every fetch, and the destination is
 * checked against the source's new history. The source is a cluster of this class's own (its log is edited while
 * it is down, see {@link UncleanElection}); the service runs with no automatic retries, so FAILED stays as it is.
 */
class EpochFencingIT extends ServiceIT {

    private static KafkaBrokerProcess source;
    private static ServiceProcess service;

    @BeforeAll
    static void startOwnSourceAndService() {
        source = bed.newCluster("fenced-source");
        source.start(Duration.ofSeconds(120));
        service = bed.newService(
                        "fencing",
                        Map.of(
                                "mirror.state.topic.name",
                                uniqueName("__mirror_state_fencing"),
                                "mirror.failed.retry.max.attempts",
                                "0"))
                .start();
        target = service;
    }

    @AfterAll
    static void stopThem() {
        target = null;
        service.stop();
        source.stop();
    }

    @AfterEach
    void sourceRunning() {
        source.start(Duration.ofSeconds(120));
    }

    @Test
    void aSourceThatLostMirroredRecordsShouldBeFencedAndFailInsteadOfMirroringItsNewHistory() throws Exception {
        String mirror = uniqueName("unclean");
        String topic = uniqueName("unclean");
        mirrorOwnSource(mirror, topic);
        List<Kafka.Rec> mirrored = Kafka.readAll(bed.destination().bootstrapServers(), topic);

        // When the source's leader is replaced by one that lacked the tail and wrote a longer history of its own there,
        // with a batch starting where the mirror fetches next (so that, unfenced, it would copy on from there)
        source.stop();
        long cut = UncleanElection.replaceTail(source.logDir().resolve(topic + "-0"), 50, records("new-history", 200));
        assertThat(cut).isEqualTo(50);
        source.start(Duration.ofSeconds(120));

        // Then the partition is fenced and FAILS, naming the epochs and offsets, and nothing of the new history is
        // copied
        Map<?, ?> failed = awaitPartitionState(mirror, topic, "FAILED");
        assertThat((String) failed.get("error"))
                .startsWith("epoch fencing (the source no longer holds what was fetched from it: "
                        + "the mirror fetched up to offset 200 with source leader epoch 0, but on the source leader epoch 0 ends at offset "
                        + cut)
                .contains("unclean leader election on the source?")
                .endsWith("the destination holds offsets [" + cut + ", 200) that the source no longer has");
        assertThat(Kafka.readAll(bed.destination().bootstrapServers(), topic))
                .isEqualTo(mirrored)
                .hasSize(200);
        assertThat(api().get("/q/metrics").then().extract().asString())
                .contains("cluster_mirror_partition_epoch_fencings_total{mirror=\"" + mirror + "\"} 1.0");
    }

    @Test
    void aNewLeaderThatHasEveryMirroredRecordShouldNotBeFencedAndItsHistoryMirroredOn() throws Exception {
        String mirror = uniqueName("kept");
        String topic = uniqueName("kept");
        mirrorOwnSource(mirror, topic);
        topicVerb(mirror, "pause", topic);
        awaitPartitionState(mirror, topic, "PAUSED");
        Kafka.produce(source.bootstrapServers(), topic, 50, "none", "never-mirrored");

        // When a new leader that lacked only records never mirrored (from 200 on) takes over and writes its own there
        source.stop();
        assertThat(UncleanElection.replaceTail(source.logDir().resolve(topic + "-0"), 200, records("new-leader", 80)))
                .isEqualTo(200);
        source.start(Duration.ofSeconds(120));
        topicVerb(mirror, "resume", topic);

        // Then nothing is fenced (the epoch last mirrored ends exactly where the mirror goes on) and the new history
        // follows
        awaitConverged(mirror, topic);
        assertThat(Kafka.readAll(bed.destination().bootstrapServers(), topic))
                .isEqualTo(Kafka.readAll(source.bootstrapServers(), topic))
                .hasSize(280);
        assertThat(describeTopic(mirror, topic).getInt("partitions[0].lastMirrorEpoch"))
                .isEqualTo(1);
        assertThat(api().get("/q/metrics").then().extract().asString())
                .doesNotContain("cluster_mirror_partition_epoch_fencings_total{mirror=\"" + mirror + "\"}");
    }

    /** A mirror of this class's source, and a one-partition topic there with 200 records in several batches, mirrored. */
    private static void mirrorOwnSource(String mirror, String topic) throws Exception {
        api().body(createBody(mirror, Map.of("bootstrap.servers", source.bootstrapServers())))
                .post("/v1/mirrors")
                .then()
                .statusCode(201);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", source.bootstrapServers()))) {
            Kafka.createTopic(admin, topic, 1, Map.of());
        }
        for (int round = 0; round < 4; round++) {
            Kafka.produce(source.bootstrapServers(), topic, 50, "none", "r" + round);
        }
        startTopics(mirror, topic);
        awaitConverged(mirror, topic);
    }

    private static List<SimpleRecord> records(String tag, int count) {
        return IntStream.range(0, count)
                .mapToObj(i -> new SimpleRecord(
                        System.currentTimeMillis(), (tag + "-key-" + i).getBytes(), (tag + "-" + i).getBytes()))
                .toList();
    }
}
