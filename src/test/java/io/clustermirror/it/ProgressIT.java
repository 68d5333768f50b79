package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.restassured.path.json.JsonPath;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * Issue 20 item 4, progress you can read: describe's rates and ETA on a backlog the instance copies under a throttle,
 * the ETA at 0 once caught up, and LOG_TRUNCATION's structured step.
 */
class ProgressIT extends ServiceIT {

    private static final String THROTTLE = "/v1/config/mirror.replication.throttled.rate";
    private static final int MiB = 1 << 20;
    private static final int RATE = 2 * MiB;
    /** About 24 s of copying at {@link #RATE}: long enough for the 30 s window to measure the catch-up. */
    private static final int BACKLOG_MiB = 48;

    @Test
    void aThrottledBacklogShouldShowItsRatesAndAPlausibleEtaThenZeroOnceCaughtUp() throws Exception {
        // Given a backlog of 48 MiB of incompressible 1 KiB records over 2 partitions, copied at 2 MiB/s
        String mirror = uniqueName("progress");
        String topic = uniqueName("progress");
        createMirrorAndSourceTopic(mirror, topic, 2, Map.of());
        produceBacklog(topic);
        api().body(Map.of("value", Integer.toString(RATE))).put(THROTTLE).then().statusCode(200);
        try {
            // When it is mirrored
            startTopics(mirror, topic);
            awaitAllPartitions(mirror, topic, "MIRRORING");
            long mirroringSince = System.nanoTime();

            // Then once the window has measured some seconds of it, each partition shows its rates and a finite ETA
            AtomicReference<Map<String, Object>> measured = new AtomicReference<>();
            await("rates and ETA of every partition")
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(500))
                    .untilAsserted(() -> measured.set(measuredLagging(mirror, topic, mirroringSince)));
            Map<String, Object> summary = measured.get();
            int firstEta = eta(summary);
            double bytesPerRecord = number(summary, "bytesPerSecond") / number(summary, "recordsPerSecond");
            long lag = ((Number) summary.get("lag")).longValue();
            double expected = lag * bytesPerRecord / RATE;
            System.out.printf(
                    "ProgressIT: %s; mirror lag %d, %.0f bytes/s, ETA %d s (expected from the throttle %.1f s)%n",
                    summary, lag, number(summary, "bytesPerSecond"), firstEta, expected);
            assertThat(number(summary, "bytesPerSecond"))
                    .as("bytes/s of the mirror under a throttle of %d bytes/s", RATE)
                    .isBetween(0.5 * RATE, 1.5 * RATE);
            assertThat((double) firstEta)
                    .as("the mirror's ETA against lag x bytes per record / throttle (%.1f s)", expected)
                    .isBetween(0.5 * expected, 2.0 * expected);
            assertThat(summary.get("mirroringPartitions")).isEqualTo(2);
            assertThat((List<?>) summary.get("slowestPartitions")).hasSize(2);

            // and the ETA falls as the backlog shrinks
            await("a later, smaller ETA")
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(500))
                    .untilAsserted(() -> {
                        Map<String, Object> later = mirrorProgress(mirror);
                        assertThat(later.get("etaSeconds")).as(later.toString()).isNotNull();
                        assertThat(eta(later)).as(later.toString()).isLessThan(firstEta - 3);
                    });
        } finally {
            api().delete(THROTTLE).then().statusCode(200);
        }

        // When the throttle is lifted, it catches up: ETA 0 for every partition and for the mirror
        awaitConverged(mirror, topic);
        await("ETA 0 once caught up")
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(500))
                .untilAsserted(() -> {
                    List<Map<String, Object>> partitions = partitions(mirror, topic);
                    assertThat(partitions).allSatisfy(p -> {
                        assertThat(p.get("etaSeconds")).as(p.toString()).isEqualTo(0);
                        assertThat((String) p.get("progress")).as(p.toString()).endsWith("; caught up");
                    });
                    Map<String, Object> summary = mirrorProgress(mirror);
                    assertThat(summary.get("etaSeconds")).as(summary.toString()).isEqualTo(0);
                    assertThat(summary.get("lag")).as(summary.toString()).isEqualTo(0);
                    assertThat((List<?>) summary.get("slowestPartitions"))
                            .as(summary.toString())
                            .isEmpty();
                });
        // and LOG_TRUNCATION's step is kept: an empty destination at the source log start 0, nothing to fill
        assertThat(partitions(mirror, topic))
                .allSatisfy(p -> assertThat(truncation(p))
                        .containsEntry("step", "LOG_START_ALIGNMENT")
                        .containsEntry("complete", true)
                        .containsEntry("sourceLogStart", 0)
                        .containsEntry("offsetsTotal", 0));
    }

    @Test
    void logStartAlignmentShouldShowItsStepAndHowFar() throws Exception {
        // Given a source partition whose log starts at 600
        String mirror = uniqueName("aligned");
        String topic = uniqueName("aligned");
        createMirrorAndSourceTopic(mirror, topic, 1, Map.of());
        Kafka.produce(bed.source().bootstrapServers(), topic, 1_000, "lz4", "al");
        try (Admin admin = bed.sourceAdmin()) {
            admin.deleteRecords(Map.of(new TopicPartition(topic, 0), RecordsToDelete.beforeOffset(600)))
                    .all()
                    .get();
        }

        // When it is mirrored to an empty destination
        startTopics(mirror, topic);
        awaitConverged(mirror, topic);

        // Then describe shows the alignment that LOG_TRUNCATION did: all 600 offsets below the log start filled
        Map<String, Object> truncation = truncation(partitions(mirror, topic).get(0));
        assertThat(truncation)
                .containsEntry("step", "LOG_START_ALIGNMENT")
                .containsEntry("complete", true)
                .containsEntry("sourceLogStart", 600)
                .containsEntry("sourceLogEnd", 1_000)
                .containsEntry("destinationLogStart", 0)
                .containsEntry("destinationLogEnd", 0)
                .containsEntry("offsetsDone", 600)
                .containsEntry("offsetsTotal", 600);
    }

    /**
     * The mirror's progress once its partitions have been MIRRORING for 8 s and each shows its rates and an ETA while
     * behind; an assertion error naming what describe said before.
     */
    private static Map<String, Object> measuredLagging(String mirror, String topic, long mirroringSince) {
        List<Map<String, Object>> partitions = partitions(mirror, topic);
        Map<String, Object> summary = mirrorProgress(mirror);
        String seen = partitions + " " + summary;
        assertThat(System.nanoTime() - mirroringSince).as("MIRRORING for 8 s").isGreaterThan(8_000_000_000L);
        assertThat(partitions).as(seen).hasSize(2).allSatisfy(p -> {
            assertThat(p.get("bytesPerSecond")).as(seen).isInstanceOf(Number.class);
            assertThat(number(p, "bytesPerSecond")).as(seen).isPositive();
            assertThat(number(p, "recordsPerSecond")).as(seen).isPositive();
            assertThat(p.get("etaSeconds")).as(seen).isInstanceOf(Number.class);
            assertThat(eta(p)).as(seen).isPositive();
            assertThat(number(p, "lag")).as(seen).isPositive();
            assertThat((String) p.get("progress")).as(seen).contains("records behind, caught up in about");
        });
        assertThat(summary.get("etaSeconds")).as(seen).isInstanceOf(Number.class);
        return summary;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> truncation(Map<String, Object> partition) {
        return (Map<String, Object>) partition.get("truncation");
    }

    private static int eta(Map<String, Object> progress) {
        return ((Number) progress.get("etaSeconds")).intValue();
    }

    private static double number(Map<String, Object> map, String key) {
        return ((Number) map.get(key)).doubleValue();
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> partitions(String mirror, String topic) {
        JsonPath described = describeTopic(mirror, topic);
        return (List<Map<String, Object>>) (List<?>) described.getList("partitions", Map.class);
    }

    private static Map<String, Object> mirrorProgress(String mirror) {
        return api().get("/v1/mirrors/" + mirror)
                .then()
                .statusCode(200)
                .extract()
                .jsonPath()
                .getMap("progress");
    }

    /** {@value #BACKLOG_MiB} MiB of incompressible 1 KiB records over the 2 partitions, in 16 KiB batches. */
    private static void produceBacklog(String topic) throws Exception {
        Kafka.produceIncompressible(bed.source().bootstrapServers(), topic, 2, BACKLOG_MiB, 20);
    }
}
