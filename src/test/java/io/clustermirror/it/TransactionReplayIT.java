package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.AbortTransactionSpec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** Issue 5: source transactions replayed offset for offset, markers included. */
class TransactionReplayIT extends ServiceIT {

    @Test
    void interleavedTransactionsShouldLandAtIdenticalOffsetsWithIdenticalViews() throws Exception {
        String mirror = uniqueName("txn");
        String topic = uniqueName("txn");
        String group = uniqueName("txn-group");
        createMirrorAndSourceTopic(mirror, topic, 2, Map.of());
        List<KafkaProducer<byte[], byte[]>> producers = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> plain = Kafka.producer(bed.source().bootstrapServers(), Map.of())) {
            for (int i = 0; i < 3; i++) {
                KafkaProducer<byte[], byte[]> producer = Kafka.producer(
                        bed.source().bootstrapServers(), Map.of("transactional.id", uniqueName("txn-producer-" + i)));
                producer.initTransactions();
                producers.add(producer);
            }
            // half before the mirror starts (a backlog), half while it mirrors (live)
            for (int round = 0; round < 40; round++) {
                if (round == 20) {
                    startTopics(mirror, topic);
                }
                interleavedRound(round, topic, group, producers, plain);
            }
        } finally {
            producers.forEach(KafkaProducer::close);
        }

        awaitConverged(mirror, topic);

        assertIdenticalWithMarkers(topic);
        assertThat(Kafka.readAll(bed.destination().bootstrapServers(), topic, "read_committed"))
                .as("aborted data invisible, committed data identical")
                .isEqualTo(Kafka.readAll(bed.source().bootstrapServers(), topic, "read_committed"))
                .noneMatch(r -> r.value().contains("aborted"));
        assertThat(describeTopic(mirror, topic).getList("partitions.openTransactions"))
                .allMatch(Objects::isNull);
    }

    /**
     * Three transactions open at once on both partitions, plain writes between their batches, one of them
     * aborted every third round, one committing consumer offsets with sendOffsetsToTransaction.
     */
    private static void interleavedRound(
            int round,
            String topic,
            String group,
            List<KafkaProducer<byte[], byte[]>> producers,
            KafkaProducer<byte[], byte[]> plain)
            throws Exception {
        KafkaProducer<byte[], byte[]> a = producers.get(0);
        KafkaProducer<byte[], byte[]> b = producers.get(1);
        KafkaProducer<byte[], byte[]> c = producers.get(2);
        boolean abortA = round % 3 == 0;
        a.beginTransaction();
        b.beginTransaction();
        c.beginTransaction();
        send(a, topic, round, "a1" + (abortA ? "-aborted" : ""), 3);
        send(b, topic, round, "b1", 2);
        send(plain, topic, round, "plain1", 4);
        send(c, topic, round, "c1", 2);
        send(a, topic, round, "a2" + (abortA ? "-aborted" : ""), 2);
        b.commitTransaction();
        send(plain, topic, round, "plain2", 1);
        if (abortA) {
            a.abortTransaction();
        } else {
            a.commitTransaction();
        }
        send(c, topic, round, "c2", 1);
        c.sendOffsetsToTransaction(
                Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(round)), new ConsumerGroupMetadata(group));
        c.commitTransaction();
    }

    private static void send(
            KafkaProducer<byte[], byte[]> producer, String topic, int round, String tag, int perPartition)
            throws Exception {
        for (int partition = 0; partition < 2; partition++) {
            for (int i = 0; i < perPartition; i++) {
                producer.send(new ProducerRecord<>(
                        topic,
                        partition,
                        ("k" + round + "-" + i).getBytes(),
                        (tag + "-" + round + "-" + i).getBytes()));
            }
        }
        producer.flush();
    }

    @Test
    void stopDuringAnOpenTransactionShouldAbortItOnTheDestination() throws Exception {
        String mirror = uniqueName("txnstop");
        String topic = uniqueName("txnstop");
        createMirrorAndSourceTopic(mirror, topic, 2, Map.of());
        Kafka.produce(bed.source().bootstrapServers(), topic, 100, "lz4", "before");
        startTopics(mirror, topic);
        awaitConverged(mirror, topic);
        try (KafkaProducer<byte[], byte[]> producer = inTransaction("txnstop-producer")) {
            for (int i = 0; i < 10; i++) {
                producer.send(new ProducerRecord<>(topic, 0, "k".getBytes(), ("uncommitted-" + i).getBytes()));
            }
            producer.flush();
            long sourceProducerId;
            try (Admin admin = bed.sourceAdmin()) {
                sourceProducerId = admin
                        .describeProducers(List.of(new TopicPartition(topic, 0)))
                        .partitionResult(new TopicPartition(topic, 0))
                        .get()
                        .activeProducers()
                        .stream()
                        .filter(p -> p.currentTransactionStartOffset().isPresent())
                        .mapToLong(ProducerState::producerId)
                        .findFirst()
                        .orElseThrow();
            }
            // a hanging source transaction: partition 0 mirrors up to the source's end, describe names it; partition 1
            // goes on
            Kafka.produce(bed.source().bootstrapServers(), topic, 200, "none", "other");
            awaitConverged(mirror, topic);
            Map<?, ?> partition0 = describeTopic(mirror, topic)
                    .getList("partitions", Map.class)
                    .get(0);
            assertThat((List<?>) partition0.get("openTransactions"))
                    .singleElement()
                    .satisfies(t -> {
                        Map<?, ?> open = (Map<?, ?>) t;
                        assertThat(((Number) open.get("sourceProducerId")).longValue())
                                .isEqualTo(sourceProducerId);
                        assertThat(open.get("openSince")).isNotNull();
                        assertThat(open.get("destinationTransactionalId"))
                                .asString()
                                .startsWith("cluster-mirror/" + mirror + "/" + topic + "/0/");
                    });
            String metrics =
                    api().get("/q/metrics").then().statusCode(200).extract().asString();
            assertThat(metrics)
                    .contains("cluster_mirror_transactions_open{mirror=\"" + mirror + "\"} 1.0")
                    .contains("cluster_mirror_transactions_oldest_open_seconds{mirror=\"" + mirror + "\"}");
            long lsoBeforeStop = lso(topic);

            // When
            topicVerb(mirror, "stop", topic);
            awaitAllPartitions(mirror, topic, "STOPPED");

            // Then the destination aborted it: the LSO passes the transaction, and its records never read as committed
            await().atMost(Duration.ofSeconds(10)).until(() -> lso(topic) > lsoBeforeStop);
            assertThat(Kafka.readAll(bed.destination().bootstrapServers(), topic, "read_committed"))
                    .noneMatch(r -> r.value().startsWith("uncommitted"));
            producer.commitTransaction();
        }
        assertThat(Kafka.readAll(bed.destination().bootstrapServers(), topic, "read_committed"))
                .noneMatch(r -> r.value().startsWith("uncommitted"));
    }

    @Test
    void pauseDuringAnOpenTransactionShouldKeepItOpenAndResumeShouldContinueIt() throws Exception {
        String mirror = uniqueName("txnpause");
        String topic = uniqueName("txnpause");
        createMirrorAndSourceTopic(mirror, topic, 2, Map.of());
        startTopics(mirror, topic);
        try (KafkaProducer<byte[], byte[]> producer = inTransaction("txnpause-producer")) {
            send(producer, topic, 0, "before-pause", 4);
            awaitConverged(mirror, topic);

            // When paused with the transaction open, the source goes on and commits, then the topic resumes
            topicVerb(mirror, "pause", topic);
            awaitAllPartitions(mirror, topic, "PAUSED");
            send(producer, topic, 1, "while-paused", 3);
            producer.commitTransaction();
        }
        topicVerb(mirror, "resume", topic);

        // Then the destination transaction was continued, not re-initialised (which would have aborted it)
        awaitConverged(mirror, topic);
        assertIdenticalWithMarkers(topic);
        assertThat(Kafka.readAll(bed.destination().bootstrapServers(), topic, "read_committed"))
                .hasSize(14)
                .isEqualTo(Kafka.readAll(bed.source().bootstrapServers(), topic, "read_committed"));
    }

    @Test
    void stopOfAFailedPartitionShouldAbortTheTransactionItLeftOpen() throws Exception {
        String mirror = uniqueName("txnfailstop");
        String topic = uniqueName("txnfailstop");
        createMirrorAndSourceTopic(mirror, topic, 1, Map.of());
        startTopics(mirror, topic);
        try (KafkaProducer<byte[], byte[]> producer = inTransaction("txnfailstop-producer")) {
            producer.send(new ProducerRecord<>(topic, 0, "k".getBytes(), "uncommitted-0".getBytes()))
                    .get();
            awaitConverged(mirror, topic);
            // a foreign write into the destination partition, then the source moves on: FAILED, the transaction still
            // open there
            try (KafkaProducer<byte[], byte[]> foreign =
                    Kafka.producer(bed.destination().bootstrapServers(), Map.of())) {
                foreign.send(new ProducerRecord<>(topic, 0, "x".getBytes(), "foreign".getBytes()))
                        .get();
            }
            producer.send(new ProducerRecord<>(topic, 0, "k".getBytes(), "uncommitted-1".getBytes()))
                    .get();
            awaitPartitionState(mirror, topic, "FAILED");
            assertThat(lso(topic))
                    .as("the replayed transaction holds the destination's LSO")
                    .isZero();

            // When
            topicVerb(mirror, "stop", topic);
            awaitPartitionState(mirror, topic, "STOPPED");

            // Then
            await().atMost(Duration.ofSeconds(10)).until(() -> lso(topic) >= 2);
            assertThat(Kafka.readAll(bed.destination().bootstrapServers(), topic, "read_committed"))
                    .extracting(Kafka.Rec::value)
                    .containsExactly("foreign");
            producer.abortTransaction();
        }
    }

    @Test
    void aReplayedTransactionTheDestinationAbortsOnItsOwnShouldFailThePartitionNamingTheOffsets() throws Exception {
        String mirror = uniqueName("txncut");
        String topic = uniqueName("txncut");
        createMirrorAndSourceTopic(mirror, topic, 1, Map.of());
        startTopics(mirror, topic);
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaProducer<byte[], byte[]> producer = inTransaction("txncut-producer")) {
            for (int i = 0; i < 3; i++) {
                producer.send(new ProducerRecord<>(topic, 0, "k".getBytes(), ("cut-" + i).getBytes()));
            }
            producer.flush();
            awaitConverged(mirror, topic);

            // When the destination ends the replayed transaction by itself (as its transaction timeout would)
            try (Admin admin = bed.destinationAdmin()) {
                ProducerState replayed =
                        admin.describeProducers(List.of(tp)).partitionResult(tp).get().activeProducers().stream()
                                .filter(p -> p.currentTransactionStartOffset().isPresent())
                                .findFirst()
                                .orElseThrow();
                admin.abortTransaction(new AbortTransactionSpec(
                                tp,
                                replayed.producerId(),
                                (short) replayed.producerEpoch(),
                                replayed.coordinatorEpoch().orElse(0)))
                        .all()
                        .get();
            }
            producer.commitTransaction();
        }

        // Then the commit marker cannot land at the source's offset: FAILED, naming it, nothing shifted silently
        Map<?, ?> failed = awaitPartitionState(mirror, topic, "FAILED");
        assertThat((String) failed.get("error"))
                .contains("commit marker")
                .contains("belongs at offset 3")
                .contains("an abort marker is there");
    }

    @Test
    void killNineDuringATransactionalWorkloadShouldLoseAndDoubleNothing() throws Exception {
        String mirror = uniqueName("txncrash");
        String topic = uniqueName("txncrash");
        createMirrorAndSourceTopic(mirror, topic, 2, Map.of());
        AtomicBoolean producing = new AtomicBoolean(true);
        AtomicInteger transactions = new AtomicInteger();
        List<CompletableFuture<Void>> writers = new ArrayList<>();
        for (int w = 0; w < 2; w++) {
            String id = uniqueName("txncrash-producer-" + w);
            writers.add(CompletableFuture.runAsync(() -> {
                try (KafkaProducer<byte[], byte[]> producer =
                        Kafka.producer(bed.source().bootstrapServers(), Map.of("transactional.id", id))) {
                    producer.initTransactions();
                    for (int round = 0; producing.get(); round++) {
                        producer.beginTransaction();
                        send(producer, topic, round, id + (round % 5 == 0 ? "-aborted" : ""), 5);
                        if (round % 5 == 0) {
                            producer.abortTransaction();
                        } else {
                            producer.commitTransaction();
                        }
                        transactions.incrementAndGet();
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        startTopics(mirror, topic);
        await().atMost(Duration.ofSeconds(60))
                .until(() -> Kafka.total(Kafka.offsetsOf(bed.destination(), topic)) > 500);

        // When: the service dies in the middle of replaying transactions, and a new process takes over
        bed.service().kill();
        bed.service().start();
        await().atMost(Duration.ofSeconds(30)).until(() -> transactions.get() > 300);
        producing.set(false);
        CompletableFuture.allOf(writers.toArray(CompletableFuture[]::new)).join();

        // Then
        awaitConverged(mirror, topic);
        assertIdenticalWithMarkers(topic);
        assertThat(Kafka.readAll(bed.destination().bootstrapServers(), topic, "read_committed"))
                .isEqualTo(Kafka.readAll(bed.source().bootstrapServers(), topic, "read_committed"));
    }

    /** A transactional producer of the source with a transaction begun. */
    private static KafkaProducer<byte[], byte[]> inTransaction(String idPrefix) {
        KafkaProducer<byte[], byte[]> producer =
                Kafka.producer(bed.source().bootstrapServers(), Map.of("transactional.id", uniqueName(idPrefix)));
        producer.initTransactions();
        producer.beginTransaction();
        return producer;
    }

    /** Every record and every marker at the same offset on both sides, and the same read_uncommitted view. */
    static void assertIdenticalWithMarkers(String topic) throws Exception {
        assertThat(Kafka.readAll(bed.destination().bootstrapServers(), topic))
                .isEqualTo(Kafka.readAll(bed.source().bootstrapServers(), topic));
        int partitions;
        try (Admin admin = bed.sourceAdmin()) {
            partitions = admin.describeTopics(List.of(topic))
                    .allTopicNames()
                    .get()
                    .get(topic)
                    .partitions()
                    .size();
        }
        for (int p = 0; p < partitions; p++) {
            assertThat(layout(Kafka.batches(bed.destination(), topic, p, 0)))
                    .as("partition " + p + " batches and markers")
                    .isEqualTo(layout(Kafka.batches(bed.source(), topic, p, 0)));
        }
    }

    /** Offsets, record counts and kinds of the batches: what consumers and the LSO depend on. */
    private static List<String> layout(List<Kafka.Batch> batches) {
        return batches.stream()
                .map(b -> b.baseOffset() + ".." + b.lastOffset() + " x" + b.count() + (b.transactional() ? " txn" : "")
                        + (b.control() ? " marker" : ""))
                .toList();
    }

    private static long lso(String topic) throws Exception {
        try (Admin admin = bed.destinationAdmin()) {
            return admin.listOffsets(
                            Map.of(new TopicPartition(topic, 0), OffsetSpec.latest()),
                            new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                    .partitionResult(new TopicPartition(topic, 0))
                    .get()
                    .offset();
        }
    }
}
