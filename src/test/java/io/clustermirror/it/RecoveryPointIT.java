package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.clustermirror.embedded.KafkaBrokerProcess;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/**
 * Issue 21 items 2 and 3: the RPO in time (describe's {@code rpoMs}, the metrics), right while PAUSED under a live
 * producer and 0 when idle, an upper bound while the source cannot be read, and the loss report of a stop during a
 * source outage.
 */
class RecoveryPointIT extends ServiceIT {

    /** How far describe's RPO may be from the true age of the oldest record not mirrored (the bound). */
    private static final long TOLERANCE_MS = 2_000;

    @Test
    void theRpoShouldBeZeroWhenCaughtUpAndTheAgeOfTheOldestRecordNotMirroredWhilePaused() throws Exception {
        // Given a caught-up mirror of records an hour old: idle, nothing to lose, whatever the records' age
        String mirror = uniqueName("rpo");
        String topic = uniqueName("rpo");
        createMirrorAndSourceTopic(mirror, topic, 1, Map.of());
        long anHourAgo = System.currentTimeMillis() - 3_600_000;
        try (KafkaProducer<byte[], byte[]> producer =
                Kafka.producer(bed.source().bootstrapServers(), Map.of())) {
            for (int i = 0; i < 20; i++) {
                producer.send(new ProducerRecord<>(topic, 0, anHourAgo + i, null, ("old-" + i).getBytes()))
                        .get();
            }
        }
        startTopics(mirror, topic);
        awaitConverged(mirror, topic);
        Map<?, ?> idle = partition(mirror, topic);
        assertThat(idle.get("rpoMs")).as(idle.toString()).isEqualTo(0);
        assertThat(idle.get("rpoBound")).as(idle.toString()).isEqualTo(false);

        // When it is paused and a producer goes on writing, a record every 100 ms
        topicVerb(mirror, "pause", topic);
        awaitAllPartitions(mirror, topic, "PAUSED");
        AtomicLong firstNotMirrored = new AtomicLong(-1);
        ScheduledExecutorService producing = Executors.newSingleThreadScheduledExecutor();
        KafkaProducer<byte[], byte[]> producer = Kafka.producer(bed.source().bootstrapServers(), Map.of());
        producing.scheduleAtFixedRate(
                () -> produceLive(producer, topic, firstNotMirrored), 0, 100, TimeUnit.MILLISECONDS);
        try {
            await("the first record after the pause")
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> firstNotMirrored.get() > 0);

            // Then describe's RPO is the age of the first record written after the pause, growing with it
            for (int look = 0; look < 3; look++) {
                long age = (look + 1) * 2_500L;
                await("the first record after the pause " + age + " ms old")
                        .atMost(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofMillis(50))
                        .until(() -> System.currentTimeMillis() - firstNotMirrored.get() >= age);
                long before = System.currentTimeMillis();
                Map<?, ?> paused = partition(mirror, topic);
                long after = System.currentTimeMillis();
                System.out.printf(
                        "RecoveryPointIT: paused, look %d: %s; true age %d..%d ms%n",
                        look, paused, before - firstNotMirrored.get(), after - firstNotMirrored.get());
                assertThat(paused.get("state")).isEqualTo("PAUSED");
                assertThat(((Number) paused.get("rpoMs")).longValue())
                        .as("rpoMs while paused: %s", paused)
                        .isBetween(
                                before - firstNotMirrored.get() - TOLERANCE_MS,
                                after - firstNotMirrored.get() + TOLERANCE_MS);
                assertThat(paused.get("rpoBound")).isEqualTo(false);
            }

            // and the metrics say the same, per partition and for the mirror
            await("the RPO in /q/metrics")
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(500))
                    .untilAsserted(() -> {
                        String metrics = api().get("/q/metrics")
                                .then()
                                .statusCode(200)
                                .extract()
                                .asString();
                        double age = (System.currentTimeMillis() - firstNotMirrored.get()) / 1000.0;
                        assertThat(metric(
                                        metrics,
                                        "cluster_mirror_partition_rpo_seconds",
                                        "mirror=\"" + mirror + "\",partition=\"0\",topic=\"" + topic + "\""))
                                .isBetween(age - 10, age + 2); // sampled every 5 s, published every few more
                        assertThat(metric(metrics, "cluster_mirror_rpo_max_seconds", "mirror=\"" + mirror + "\""))
                                .isBetween(age - 10, age + 2);
                    });
        } finally {
            producing.shutdown();
            assertThat(producing.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
            producer.close();
        }

        // And once resumed and caught up, it is 0 again
        topicVerb(mirror, "resume", topic);
        awaitConverged(mirror, topic);
        await("RPO 0 once caught up")
                .atMost(Duration.ofSeconds(10))
                .untilAsserted(
                        () -> assertThat(partition(mirror, topic).get("rpoMs")).isEqualTo(0));
    }

    @Test
    void aStopDuringASourceOutageShouldReportWhatMayBeLostAndTheRpoAsABound() throws Exception {
        KafkaBrokerProcess source = bed.newCluster("rpo-outage-source");
        source.start(Duration.ofSeconds(120));
        String mirror = uniqueName("loss");
        String topic = uniqueName("loss");
        try {
            // Given a mirror of a source that is 15 records ahead of its paused topic
            api().body(createBody(mirror, Map.of("bootstrap.servers", source.bootstrapServers())))
                    .post("/v1/mirrors")
                    .then()
                    .statusCode(201);
            try (Admin admin =
                    Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, source.bootstrapServers()))) {
                Kafka.createTopic(admin, topic, 1, Map.of());
            }
            Kafka.produce(source.bootstrapServers(), topic, 20, "none", "before");
            startTopics(mirror, topic);
            awaitConverged(mirror, topic);
            topicVerb(mirror, "pause", topic);
            awaitAllPartitions(mirror, topic, "PAUSED");
            long firstNotMirrored = System.currentTimeMillis();
            try (KafkaProducer<byte[], byte[]> producer = Kafka.producer(source.bootstrapServers(), Map.of())) {
                for (int i = 0; i < 15; i++) {
                    producer.send(new ProducerRecord<>(topic, 0, firstNotMirrored, null, ("after-" + i).getBytes()))
                            .get();
                }
            }
            await("the 15 records seen on the source")
                    .atMost(Duration.ofSeconds(20))
                    .untilAsserted(() ->
                            assertThat(partition(mirror, topic).get("lag")).isEqualTo(15));

            // When the source goes down
            source.stop();
            long down = System.currentTimeMillis();

            // Then the RPO is an upper bound: at least the age of the first record not mirrored
            Map<?, ?> outage = await("the RPO as a bound")
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> partition(mirror, topic), p -> Boolean.TRUE.equals(p.get("rpoBound")));
            long age = System.currentTimeMillis() - firstNotMirrored;
            System.out.printf(
                    "RecoveryPointIT: source down: %s; age of the oldest record not mirrored %d ms%n", outage, age);
            assertThat(((Number) outage.get("rpoMs")).longValue()).isBetween(age - 60_000, age + TOLERANCE_MS);
            assertThat(((Number) outage.get("rpoMs")).longValue()).isGreaterThanOrEqualTo(down - firstNotMirrored);

            // When the topic is stopped during the outage (an unplanned failover)
            long stopAsked = System.currentTimeMillis();
            topicVerb(mirror, "stop", topic);
            Map<?, ?> stopped = await("STOPPED")
                    .atMost(Duration.ofSeconds(120))
                    .pollInterval(Duration.ofSeconds(1))
                    .until(() -> partition(mirror, topic), p -> "STOPPED".equals(p.get("state")));

            // Then describe says what may be lost: 15 records past the destination's 20, as last seen before the outage
            System.out.printf("RecoveryPointIT: stopped during the outage: %s%n", stopped);
            assertThat(stopped.get("rpoMs")).as("no RPO once STOPPED").isNull();
            Map<?, ?> loss = (Map<?, ?>) stopped.get("lossAtStop");
            assertThat(loss).as(stopped.toString()).isNotNull();
            assertThat(loss.get("sourceReachable")).isEqualTo(false);
            assertThat(loss.get("lastSourceEnd")).isEqualTo(35);
            assertThat(loss.get("destinationEnd")).isEqualTo(20);
            assertThat(loss.get("records")).isEqualTo(15);
            assertThat(Instant.parse((String) loss.get("lastSourceEndSeenAt")).toEpochMilli())
                    .isBetween(firstNotMirrored, down + 1_000);
            assertThat(loss.get("rpoBound")).isEqualTo(true);
            assertThat(((Number) loss.get("rpoMs")).longValue())
                    .isGreaterThanOrEqualTo(stopAsked - firstNotMirrored - TOLERANCE_MS);
        } finally {
            api().delete("/v1/mirrors/" + mirror);
            source.close();
        }
    }

    /** Produces one record, timestamped when sent (every 100 ms on a schedule); notes the first one's timestamp. */
    private static void produceLive(KafkaProducer<byte[], byte[]> producer, String topic, AtomicLong first) {
        long now = System.currentTimeMillis();
        try {
            producer.send(new ProducerRecord<>(topic, 0, now, null, "live".getBytes()))
                    .get();
        } catch (Exception e) {
            throw new IllegalStateException(e); // ends the schedule: no record is counted that did not land
        }
        first.compareAndSet(-1, now);
    }

    private static Map<?, ?> partition(String mirror, String topic) {
        List<Map<String, Object>> partitions = describeTopic(mirror, topic).getList("partitions");
        return partitions.get(0);
    }

    /** The value of the metric with exactly these labels in a Prometheus scrape; fails when absent. */
    private static double metric(String scrape, String name, String labels) {
        Matcher m = Pattern.compile("^" + Pattern.quote(name + "{" + labels + "}") + " (\\S+)$", Pattern.MULTILINE)
                .matcher(scrape);
        assertThat(m.find()).as(name + "{" + labels + "} in /q/metrics").isTrue();
        return Double.parseDouble(m.group(1));
    }
}
