package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.clustermirror.testbed.CuttingProxy;
import io.clustermirror.testbed.ReplicatedCluster;
import io.clustermirror.testbed.ServiceProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Lost answers under a live mirror (decisions §14): the destination is a 3-broker cluster (replication factor 3, two in
 * sync) with a proxy in front of each broker that cuts client connections at random moments, half of them at a Produce,
 * which the proxy hands to the broker up to half a second later (a request still queued on a busy broker: it lands
 * after the service has lost its answer and gone on), while an idempotent producer writes to the source. Afterwards the destination must equal the source record for record, at the same offsets,
 * with no partition ever FAILED: a batch whose answer was lost is sent again with the same producer id, epoch and
 * sequence, and the destination keeps it once.
 */
class LostAnswersIT extends ServiceIT {

    private static final int PARTITIONS = 6;
    private static final Duration CUTTING = Duration.ofSeconds(40);

    private static ReplicatedCluster destination;
    private static ServiceProcess service;

    @BeforeAll
    static void startAServiceOnAReplicatedDestinationBehindCuttingProxies() {
        destination = bed.newReplicatedCluster("cut-destination", 3).start(Duration.ofSeconds(180));
        // a FAILED partition stays FAILED (no automatic retry), so that none can hide behind a recovery
        service = bed.newPlainService(
                        "cut-service", destination.bootstrapServers(), Map.of("mirror.failed.retry.max.attempts", "0"))
                .start();
        target = service;
    }

    @AfterAll
    static void stopThem() {
        target = null;
        if (service != null) {
            service.stop();
        }
        if (destination != null) {
            destination.close();
        }
    }

    @Test
    void connectionsCutUnderALiveMirrorShouldLeaveNoDuplicateAndNoFailedPartition() throws Exception {
        // Given a mirrored topic fed by a live idempotent producer
        String mirror = uniqueName("cut");
        String topic = uniqueName("cut");
        createMirror(mirror);
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, topic, PARTITIONS, Map.of());
        }
        List<Future<RecordMetadata>> sends = new ArrayList<>();
        ScheduledExecutorService faults = Executors.newScheduledThreadPool(2);
        try (KafkaProducer<byte[], byte[]> producer = Kafka.producer(
                bed.source().bootstrapServers(), Map.of(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4"))) {
            // ~2,000 records/s: 20 every 10 ms
            AtomicInteger produced = new AtomicInteger();
            ScheduledFuture<?> producing = faults.scheduleAtFixedRate(
                    () -> produce(producer, topic, produced, sends), 0, 10, TimeUnit.MILLISECONDS);
            startTopics(mirror, topic);
            awaitAllPartitions(mirror, topic, "MIRRORING");

            // When client connections to the destination's brokers are cut every 0.3-1.5 s for a while
            Random random = new Random();
            Set<String> failures = ConcurrentHashMap.newKeySet();
            long until = System.nanoTime() + CUTTING.toNanos();
            AtomicBoolean cutting = new AtomicBoolean(true);
            faults.schedule(
                    new Runnable() {
                        @Override
                        public void run() {
                            if (System.nanoTime() >= until) {
                                cutting.set(false);
                                return;
                            }
                            try {
                                destination
                                        .proxies()
                                        .get(random.nextInt(
                                                destination.proxies().size()))
                                        .cut(random);
                                noteFailures(mirror, topic, failures);
                            } finally {
                                faults.schedule(this, 300 + random.nextInt(1200), TimeUnit.MILLISECONDS);
                            }
                        }
                    },
                    0,
                    TimeUnit.MILLISECONDS);
            await("the cutting window").atMost(CUTTING.plusSeconds(60)).untilFalse(cutting);
            destination.proxies().forEach(CuttingProxy::stopCutting);
            producing.cancel(false);
            producer.flush();
            synchronized (sends) {
                for (Future<RecordMetadata> send : sends) {
                    send.get(); // every record the test counts on is on the source
                }
            }
            assertFaultsLeftNoTrace(mirror, topic, failures, sends.size());
        } finally {
            faults.shutdownNow();
        }
    }

    private void assertFaultsLeftNoTrace(String mirror, String topic, Set<String> failures, int sent) throws Exception {

        // Then no partition left MIRRORING meanwhile, and the mirror catches up, without divergence
        int cuts = destination.proxies().stream().mapToInt(CuttingProxy::cuts).sum();
        int late = destination.proxies().stream()
                .mapToInt(CuttingProxy::lateProduces)
                .sum();
        assertThat(failures)
                .as("partitions seen leaving MIRRORING (%d cuts)", cuts)
                .isEmpty();
        awaitConverged(mirror, topic);
        noteFailures(mirror, topic, failures);
        assertThat(failures).isEmpty();
        var description = describeTopic(mirror, topic);
        assertThat(description.getList("partitions.retryAttempt", Integer.class))
                .containsOnly(0);
        assertThat(description.getList("partitions.error", String.class)).containsOnlyNulls();
        assertThat(description.getString("divergence")).isNull();
        // and the destination holds the source's records, each once, at its offset
        List<Kafka.Rec> sourceRecords = Kafka.readAll(bed.source().bootstrapServers(), topic);
        List<Kafka.Rec> destinationRecords = Kafka.readAll(destination.bootstrapServers(), topic);
        assertThat(sourceRecords).hasSize(sent);
        assertThat(destinationRecords).containsExactlyElementsOf(sourceRecords);
        // and the faults did happen: answers were lost, and batches sent again in place, never through a reset
        assertThat(cuts).isGreaterThanOrEqualTo(20);
        assertThat(late).as("held-back Produce requests the brokers handled").isPositive();
        assertThat(service.log())
                .contains("answer lost")
                .contains("re-sent, each acknowledged at its source offset")
                .doesNotContain("FAILED")
                .doesNotContain("pipeline reset");
    }

    /** 20 records with keys, headers and timestamps over the partitions (one tick of the live producer). */
    private static void produce(
            KafkaProducer<byte[], byte[]> producer,
            String topic,
            AtomicInteger produced,
            List<Future<RecordMetadata>> sends) {
        for (int n = 0; n < 20; n++) {
            int i = produced.getAndIncrement();
            ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(
                    topic,
                    null,
                    System.currentTimeMillis() - i % 1000,
                    ("key-" + (i % 500)).getBytes(),
                    ("value-" + i + "-" + "x".repeat(i % 200)).getBytes());
            record.headers().add("i", Integer.toString(i).getBytes());
            synchronized (sends) {
                sends.add(producer.send(record));
            }
        }
    }

    private static void noteFailures(String mirror, String topic, Set<String> failures) {
        var partitions = describeTopic(mirror, topic).getList("partitions", Map.class);
        for (Map<?, ?> partition : partitions) {
            if (!"MIRRORING".equals(partition.get("state"))) {
                failures.add(partition.get("partition") + " " + partition.get("state") + ": " + partition.get("error"));
            }
        }
    }
}
