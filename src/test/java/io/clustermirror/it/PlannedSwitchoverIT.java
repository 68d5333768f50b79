package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import io.clustermirror.embedded.KafkaBrokerProcess;
import io.clustermirror.testbed.ServiceProcess;
import io.clustermirror.testbed.TestBed;
import io.restassured.path.json.JsonPath;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code topics:promote}, the planned switchover, between two SASL clusters with the StandardAuthorizer: A (the source,
 * fenced by the promote) and B (the destination, where the service runs as super user "admin"). Producers and
 * consumers run as the ordinary user "alice": super users bypass ACLs, fences included.
 */
class PlannedSwitchoverIT extends ServiceIT {

    private static final String PREFIX = "sw-";
    private static KafkaBrokerProcess a;
    private static KafkaBrokerProcess b;
    private static ServiceProcess service;

    @BeforeAll
    static void startClusters() throws Exception {
        a = bed.securedCluster("switchover-a");
        b = bed.securedCluster("switchover-b");
        CompletableFuture.allOf(
                        CompletableFuture.runAsync(() -> a.start(Duration.ofSeconds(120))),
                        CompletableFuture.runAsync(() -> b.start(Duration.ofSeconds(120))))
                .join();
        for (KafkaBrokerProcess cluster : List.of(a, b)) {
            try (Admin admin = admin(cluster)) {
                admin.createAcls(List.of(
                                allow(ResourceType.TOPIC, AclOperation.ALL),
                                allow(ResourceType.GROUP, AclOperation.ALL),
                                allow(ResourceType.TRANSACTIONAL_ID, AclOperation.ALL)))
                        .all()
                        .get();
            }
        }
        service = bed.newService("switchover-service", b, Map.of("mirror.metadata.refresh.interval.ms", "1000"))
                .start();
        target = service;
    }

    @AfterAll
    static void stopThem() {
        target = null;
        service.stop();
        a.stop();
        b.stop();
    }

    @Test
    void aPromoteUnderLoadShouldLoseNothingFenceTheSourceAndLetTheGroupContinueOnTheDestination() throws Exception {
        // Given a mirrored topic on A that alice keeps writing to, and a group that has committed part of it
        String topic = uniqueName(PREFIX + "load");
        String mirror = uniqueName("load");
        String group = uniqueName(PREFIX + "group");
        mirrorOf(mirror, topic, 2);
        List<RecordMetadata> acked = Collections.synchronizedList(new ArrayList<>());
        Map<String, String> values = new ConcurrentHashMap<>();
        AtomicBoolean refused = new AtomicBoolean();
        // alice gives up after 3 minutes: a fence that never refuses her fails the test below, it does not hang it
        Instant loadDeadline = Instant.now().plus(Duration.ofMinutes(3));
        CompletableFuture<Void> load =
                CompletableFuture.runAsync(() -> produceUntilRefused(topic, acked, values, refused, loadDeadline));
        await().atMost(Duration.ofSeconds(30)).until(() -> acked.size() > 2_000);
        Map<TopicPartition, Long> committed = consumeAndCommit(a, group, topic, 500);

        // When the topic is promoted while alice writes
        JsonPath promoted = api().body(Map.of("topics", List.of(topic)))
                .post("/v1/mirrors/" + mirror + "/topics:promote")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();

        // Then the answer proves, per partition, that both logs end at the same offset
        List<Map<String, Object>> proof = promoted.getList("topics[0].partitions");
        assertThat(proof)
                .hasSize(2)
                .allSatisfy(p -> assertThat(p.get("destinationEndOffset")).isEqualTo(p.get("sourceEndOffset")));
        assertThat(promoted.getString("topics[0].sourceFence"))
                .contains("DENY WRITE for User:* on source topic " + topic);
        // and the source refuses alice's writes from then on: her producer was stopped by the fence (a send
        // outstanding when the fence went up gets its answer within the producer's delivery timeout, 20 s)
        assertThat(load)
                .as("alice's producer, to be refused by the fence within 30 s of the promote's answer")
                .succeedsWithin(Duration.ofSeconds(30));
        assertThat(refused).isTrue();
        assertThatWriteIsRefused(a, topic);
        // and every record A acknowledged is on B at its offset
        Map<String, String> onB = readAll(b, topic);
        synchronized (acked) {
            assertThat(acked)
                    .isNotEmpty()
                    .allSatisfy(m -> assertThat(onB.get(m.partition() + "@" + m.offset()))
                            .as("record acknowledged at %s-%d@%d", topic, m.partition(), m.offset())
                            .isEqualTo(values.get(m.partition() + "@" + m.offset())));
        }
        Map<TopicPartition, Long> endsA = ends(a, topic);
        assertThat(ends(b, topic)).isEqualTo(endsA);
        proof.forEach(p -> assertThat(((Number) p.get("sourceEndOffset")).longValue())
                .isEqualTo(endsA.get(new TopicPartition(topic, (Integer) p.get("partition")))));
        // and the group resumes on B exactly where it committed on A: no gap, no duplicate
        assertThat(committedOffsets(b, group, topic)).isEqualTo(committed);
        Map<TopicPartition, Long> first = firstOffsetsRead(b, group, topic, 2);
        assertThat(first).isEqualTo(committed);
        // and the topic is STOPPED and writable on B, with the proof and the fence in describe
        JsonPath described = describeTopic(mirror, topic);
        assertThat(described.getList("partitions.state")).containsOnly("STOPPED");
        assertThat(described.getString("promotion.phase")).isEqualTo("PROMOTED");
        assertThat(described.getList("promotion.partitions")).hasSize(2);
        try (KafkaProducer<String, String> producer = producer(b)) {
            producer.send(new ProducerRecord<>(topic, "after", "promote")).get();
        }
    }

    @Test
    void aPromoteThatCannotDrainShouldRollBackLeavingTheSourceWritableAndTheTopicMirroring() throws Exception {
        // Given a mirrored topic with a transaction left open on the source
        String topic = uniqueName(PREFIX + "open");
        String mirror = uniqueName("open");
        mirrorOf(mirror, topic, 1);
        try (KafkaProducer<String, String> open = transactional(a, uniqueName(PREFIX + "tx"))) {
            open.beginTransaction();
            open.send(new ProducerRecord<>(topic, "k", "never committed")).get();

            // When a promote waits 3 s for it
            JsonPath refused = api().body(Map.of("topics", List.of(topic), "timeoutMs", 3000))
                    .post("/v1/mirrors/" + mirror + "/topics:promote")
                    .then()
                    .statusCode(409)
                    .contentType("application/problem+json")
                    .extract()
                    .jsonPath();

            // Then it is refused with the lag per partition, naming the open transaction
            assertThat(refused.getString("errorCode")).isEqualTo("REQUEST_TIMED_OUT");
            assertThat(refused.getString("detail")).contains("rolled back");
            assertThat(refused.getLong("lag[0].openTransactionStartOffset")).isGreaterThanOrEqualTo(0);
            assertThat(api().get("/q/metrics").then().extract().asString())
                    .contains("cluster_mirror_promotes_total{mirror=\"" + mirror + "\",outcome=\"rolled_back\"} 1.0");
            // and rolled back: the source takes writes again, the topic mirrors on, no promotion is left
            awaitWritable(a, topic);
            assertThat(fences(a, topic)).isEmpty();
            JsonPath described = describeTopic(mirror, topic);
            assertThat(described.getList("partitions.state")).containsOnly("MIRRORING");
            assertThat(described.getString("promotion")).isNull();
            open.abortTransaction();
        }
    }

    @Test
    void aServiceKilledDuringAPromoteShouldRollItBackWhenItComesBack() throws Exception {
        // Given a promote waiting for a source transaction, with the fence up
        String topic = uniqueName(PREFIX + "kill");
        String mirror = uniqueName("kill");
        mirrorOf(mirror, topic, 1);
        try (KafkaProducer<String, String> open = transactional(a, uniqueName(PREFIX + "tx"))) {
            open.beginTransaction();
            open.send(new ProducerRecord<>(topic, "k", "open")).get();
            CompletableFuture.runAsync(() -> api().body(Map.of("topics", List.of(topic), "timeoutMs", 600_000))
                    .post("/v1/mirrors/" + mirror + "/topics:promote"));
            await().atMost(Duration.ofSeconds(30)).until(() -> !fences(a, topic).isEmpty());
            assertThat(describeTopic(mirror, topic).getString("promotion.phase"))
                    .isEqualTo("PROMOTING");

            // When the service is killed (SIGKILL) and started again
            service.kill();
            service.start();

            // Then the promote is rolled back: no fence, the topic MIRRORING, no promotion left
            await().atMost(Duration.ofSeconds(60)).until(() -> fences(a, topic).isEmpty());
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> describeTopic(mirror, topic).getString("promotion") == null);
            awaitWritable(a, topic);
            awaitConverged(mirror, topic);
            open.abortTransaction();
        }
        // and the topic can be promoted once the transaction is done
        api().body(Map.of("topics", List.of(topic)))
                .post("/v1/mirrors/" + mirror + "/topics:promote")
                .then()
                .statusCode(200);
    }

    @Test
    void aSwitchBackShouldCopyNothingTwiceAndMoveTheFencesWithThePrimary() throws Exception {
        // Given a planned switchover from A to B, after which alice wrote 50 records to B
        String topic = uniqueName(PREFIX + "back");
        String aToB = uniqueName("a-to-b");
        String bToA = uniqueName("b-to-a");
        mirrorOf(aToB, topic, 1);
        api().body(Map.of("topics", List.of(topic)))
                .post("/v1/mirrors/" + aToB + "/topics:promote")
                .then()
                .statusCode(200);
        produce(b, topic, 50, "on-b");

        try (ServiceProcess serviceA = bed.newService(
                        "switchover-service-a", a, Map.of("mirror.metadata.refresh.interval.ms", "1000"))
                .start()) {
            // When A's service mirrors B back into A (A's topic predates it: adopted) and A catches up
            onA(serviceA)
                    .body(createBody(bToA, TestBed.sasl(b, TestBed.ADMIN_JAAS)))
                    .post("/v1/mirrors")
                    .then()
                    .statusCode(201);
            onA(serviceA)
                    .body(Map.of("topics", List.of(topic), "adoptExisting", true))
                    .post("/v1/mirrors/" + bToA + "/topics:start")
                    .then()
                    .statusCode(200);
            await().atMost(Duration.ofSeconds(60)).until(() -> ends(a, topic).equals(ends(b, topic)));
            assertThat(metric(serviceA, "cluster_mirror_records_total{mirror=\"" + bToA + "\"}"))
                    .as("only what B took since the switchover travels")
                    .isEqualTo(50);

            // and the primary moves back: b-to-a is promoted (B fenced, A writable)
            onA(serviceA)
                    .body(Map.of("topics", List.of(topic)))
                    .post("/v1/mirrors/" + bToA + "/topics:promote")
                    .then()
                    .statusCode(200);
            awaitWritable(a, topic);
            assertThatWriteIsRefused(b, topic);
            produce(a, topic, 10, "on-a-again");

            // and B's service starts the topic of a-to-b again
            double before = metric(service, "cluster_mirror_records_total{mirror=\"" + aToB + "\"}");
            long behind = total(ends(a, topic)) - total(ends(b, topic)); // the 10, and awaitWritable's probe
            assertThat(behind).isEqualTo(11);
            startTopics(aToB, topic);

            // Then B continues from its end (a prefix of A): only A's 10 new records travel, no re-copy
            awaitConverged(aToB, topic);
            assertThat(metric(service, "cluster_mirror_records_total{mirror=\"" + aToB + "\"}") - before)
                    .isEqualTo(behind);
            assertThat(readAll(b, topic)).isEqualTo(readAll(a, topic)).hasSize(161);
            // and B is read-only again, A takes writes, and the fence a-to-b's promote left on A is gone with its
            // record
            assertThatWriteIsRefused(b, topic);
            awaitWritable(a, topic);
            assertThat(fences(a, topic)).isEmpty();
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> describeTopic(aToB, topic).getString("promotion") == null);
            onA(serviceA)
                    .get("/v1/mirrors/" + bToA + "/topics/" + topic)
                    .then()
                    .statusCode(200)
                    .body("promotion.phase", equalTo("PROMOTED"));
        }
    }

    @Test
    void aSourceWithoutAuthorizerShouldBeRefusedUnlessTheOperatorVouchesForIt() throws Exception {
        // Given a mirror of the test bed's plain source (no authorizer)
        String topic = uniqueName(PREFIX + "plain");
        String mirror = uniqueName("plain");
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, topic, 1, Map.of());
        }
        Kafka.produce(bed.source().bootstrapServers(), topic, 100, "none", "plain");
        createMirror(mirror);
        startTopics(mirror, topic);
        awaitConverged(mirror, topic);

        // When it is promoted with the fence, it is refused and nothing changes
        api().body(Map.of("topics", List.of(topic)))
                .post("/v1/mirrors/" + mirror + "/topics:promote")
                .then()
                .statusCode(409)
                .body("errorCode", equalTo("SECURITY_DISABLED"))
                .body("field", equalTo("fenceSource"));
        assertThat(describeTopic(mirror, topic).getList("partitions.state")).containsOnly("MIRRORING");
        assertThat(describeTopic(mirror, topic).getString("promotion")).isNull();

        // When the operator vouches that producers have stopped, it is promoted without a fence
        JsonPath promoted = api().body(Map.of("topics", List.of(topic), "fenceSource", false))
                .post("/v1/mirrors/" + mirror + "/topics:promote")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();
        assertThat(promoted.getLong("topics[0].partitions[0].sourceEndOffset")).isEqualTo(100);
        assertThat(promoted.getString("topics[0].sourceFence")).isNull();
        assertThat(describeTopic(mirror, topic).getList("partitions.state")).containsOnly("STOPPED");
    }

    @Test
    void aPromoteWhoseSourceCredentialsMayNotManageAclsShouldBeRefusedAndChangeNothing() throws Exception {
        // Given a topic of alice's on A, mirrored with alice's own credentials: she may do anything to her topics, but
        // not manage ACLs (no ALTER on the cluster), so the mirror cannot put up the source fence
        String topic = uniqueName(PREFIX + "alice");
        String mirror = uniqueName("alice");
        mirrorOf(mirror, topic, 1, TestBed.ALICE_JAAS);

        // When it is promoted with the fence, the source refuses the fence and the promote is refused, naming the way
        // out
        api().body(Map.of("topics", List.of(topic)))
                .post("/v1/mirrors/" + mirror + "/topics:promote")
                .then()
                .statusCode(409)
                .contentType("application/problem+json")
                .body("errorCode", equalTo("CLUSTER_AUTHORIZATION_FAILED"))
                .body("field", equalTo("fenceSource"))
                .body("detail", containsString("need ALTER on the source cluster"));

        // Then nothing changed: the topic mirrors on, no fence is on the source, and what alice writes there is copied
        assertThat(describeTopic(mirror, topic).getList("partitions.state")).containsOnly("MIRRORING");
        assertThat(describeTopic(mirror, topic).getString("promotion")).isNull();
        assertThat(fences(a, topic)).isEmpty();
        produce(a, topic, 10, "after");
        await().atMost(Duration.ofSeconds(30))
                .until(() -> describeTopic(mirror, topic).getLong("partitions[0].destinationOffset") == 110);
        assertThat(describeTopic(mirror, topic).getList("partitions.state")).containsOnly("MIRRORING");
    }

    // ================================================================ helpers

    private static io.restassured.specification.RequestSpecification onA(ServiceProcess serviceA) {
        return io.restassured.RestAssured.given()
                .baseUri(serviceA.baseUri().toString())
                .contentType(io.restassured.http.ContentType.JSON);
    }

    /** A counter's value in the service's Prometheus output (0 when absent). */
    private static double metric(ServiceProcess process, String series) {
        String text = io.restassured.RestAssured.given()
                .baseUri(process.baseUri().toString())
                .get("/q/metrics")
                .then()
                .extract()
                .asString();
        return text.lines()
                .filter(l -> l.startsWith(series + " "))
                .mapToDouble(
                        l -> Double.parseDouble(l.substring(series.length() + 1).trim()))
                .findFirst()
                .orElse(0);
    }

    private static void produce(KafkaBrokerProcess cluster, String topic, int count, String tag) throws Exception {
        try (KafkaProducer<String, String> producer = producer(cluster)) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, "k" + i, tag + "-" + i))
                        .get();
            }
        }
    }

    private static AclBinding allow(ResourceType type, AclOperation operation) {
        return new AclBinding(
                new ResourcePattern(type, PREFIX, PatternType.PREFIXED),
                new AccessControlEntry("User:alice", "*", operation, AclPermissionType.ALLOW));
    }

    /** A mirror of A (as admin) with a topic of alice's, started and converged. */
    private static void mirrorOf(String mirror, String topic, int partitions) throws Exception {
        mirrorOf(mirror, topic, partitions, TestBed.ADMIN_JAAS);
    }

    /** A mirror of A with the given source credentials and a topic of alice's with 100 records, started and converged. */
    private static void mirrorOf(String mirror, String topic, int partitions, String jaas) throws Exception {
        try (Admin admin = admin(a)) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1)))
                    .all()
                    .get();
        }
        try (KafkaProducer<String, String> producer = producer(a)) {
            for (int i = 0; i < 100; i++) {
                producer.send(new ProducerRecord<>(topic, "k" + i, "before-" + i));
            }
            producer.flush();
        }
        api().body(createBody(mirror, TestBed.sasl(a, jaas)))
                .post("/v1/mirrors")
                .then()
                .statusCode(201);
        startTopics(mirror, topic);
        awaitConverged(mirror, topic);
    }

    /** Writes as alice until the source refuses her a write; fails when that has not happened by {@code deadline}. */
    private static void produceUntilRefused(
            String topic,
            List<RecordMetadata> acked,
            Map<String, String> values,
            AtomicBoolean refused,
            Instant deadline) {
        try (KafkaProducer<String, String> producer = producer(a)) {
            for (long i = 0; ; i++) {
                if (Instant.now().isAfter(deadline)) {
                    throw new AssertionError("the source took all of alice's " + i + " writes to " + topic + " until "
                            + deadline + ": no TopicAuthorizationException, the fence did not hold");
                }
                String value = "load-" + i;
                try {
                    RecordMetadata m = producer.send(new ProducerRecord<>(topic, "k" + i, value))
                            .get();
                    values.put(m.partition() + "@" + m.offset(), value);
                    acked.add(m);
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof TopicAuthorizationException) {
                        refused.set(true);
                        return;
                    }
                    throw new IllegalStateException(e);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The group reads at least {@code records} records of the topic and commits: its committed offsets. */
    private static Map<TopicPartition, Long> consumeAndCommit(
            KafkaBrokerProcess cluster, String group, String topic, int records) {
        try (KafkaConsumer<String, String> consumer = consumer(cluster, group)) {
            consumer.subscribe(List.of(topic));
            AtomicInteger read = new AtomicInteger();
            Kafka.pollUntil(
                    consumer,
                    group + " reads " + records + " records of " + topic,
                    Duration.ofSeconds(30),
                    r -> read.incrementAndGet(),
                    read::get,
                    n -> n >= records);
            consumer.commitSync();
            Map<TopicPartition, Long> committed = new HashMap<>();
            consumer.committed(consumer.assignment()).forEach((tp, om) -> committed.put(tp, om.offset()));
            return committed;
        }
    }

    private static Map<TopicPartition, Long> committedOffsets(KafkaBrokerProcess cluster, String group, String topic)
            throws Exception {
        try (Admin admin = admin(cluster)) {
            Map<TopicPartition, Long> committed = new HashMap<>();
            Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata()
                    .get();
            offsets.forEach((tp, om) -> {
                if (tp.topic().equals(topic) && om != null) {
                    committed.put(tp, om.offset());
                }
            });
            return committed;
        }
    }

    /** The offset of the first record the group reads on each of the topic's {@code partitions} partitions. */
    private static Map<TopicPartition, Long> firstOffsetsRead(
            KafkaBrokerProcess cluster, String group, String topic, int partitions) {
        Map<TopicPartition, Long> first = new HashMap<>();
        try (KafkaConsumer<String, String> consumer = consumer(cluster, group)) {
            consumer.subscribe(List.of(topic));
            Kafka.pollUntil(
                    consumer,
                    group + " reads a record from each of the " + partitions + " partitions of " + topic,
                    Duration.ofSeconds(30),
                    r -> first.putIfAbsent(new TopicPartition(r.topic(), r.partition()), r.offset()),
                    () -> Map.copyOf(first),
                    read -> read.size() == partitions);
        }
        return first;
    }

    /** Every record of the topic as "partition@offset" to value. */
    private static Map<String, String> readAll(KafkaBrokerProcess cluster, String topic) {
        Map<String, String> all = new HashMap<>();
        Map<String, Object> props = new HashMap<>(TestBed.sasl(cluster, TestBed.ADMIN_JAAS));
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        try (KafkaConsumer<String, String> consumer =
                new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
            Kafka.readToEnd(
                    consumer,
                    Kafka.partitions(consumer, topic),
                    Duration.ofSeconds(60),
                    r -> all.put(r.partition() + "@" + r.offset(), r.value()));
        }
        return all;
    }

    private static long total(Map<TopicPartition, Long> ends) {
        return ends.values().stream().mapToLong(Long::longValue).sum();
    }

    private static Map<TopicPartition, Long> ends(KafkaBrokerProcess cluster, String topic) throws Exception {
        try (Admin admin = admin(cluster)) {
            return Kafka.offsets(admin, topic, OffsetSpec.latest());
        }
    }

    private static void assertThatWriteIsRefused(KafkaBrokerProcess cluster, String topic) {
        try (KafkaProducer<String, String> producer = producer(cluster)) {
            org.assertj.core.api.Assertions.assertThatThrownBy(
                            () -> producer.send(new ProducerRecord<>(topic, "k", "refused"))
                                    .get())
                    .hasCauseInstanceOf(TopicAuthorizationException.class);
        }
    }

    private static void awaitWritable(KafkaBrokerProcess cluster, String topic) {
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> {
                    try (KafkaProducer<String, String> producer = producer(cluster)) {
                        producer.send(new ProducerRecord<>(topic, "k", "writable"))
                                .get();
                        return true;
                    } catch (ExecutionException e) {
                        return false;
                    }
                });
    }

    /** The DENY WRITE fences for User:* on the topic. */
    private static List<AclBinding> fences(KafkaBrokerProcess cluster, String topic) throws Exception {
        try (Admin admin = admin(cluster)) {
            return admin.describeAcls(AclBindingFilter.ANY).values().get().stream()
                    .filter(binding -> binding.pattern().name().equals(topic)
                            && binding.entry().permissionType() == AclPermissionType.DENY
                            && binding.entry().operation() == AclOperation.WRITE
                            && binding.entry().principal().equals("User:*"))
                    .toList();
        }
    }

    private static KafkaProducer<String, String> producer(KafkaBrokerProcess cluster) {
        Map<String, Object> props = new HashMap<>(TestBed.sasl(cluster, TestBed.ALICE_JAAS));
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000);
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 20_000);
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    private static KafkaProducer<String, String> transactional(KafkaBrokerProcess cluster, String transactionalId) {
        Map<String, Object> props = new HashMap<>(TestBed.sasl(cluster, TestBed.ALICE_JAAS));
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        props.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 600_000);
        KafkaProducer<String, String> producer =
                new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
        producer.initTransactions();
        return producer;
    }

    private static KafkaConsumer<String, String> consumer(KafkaBrokerProcess cluster, String group) {
        Map<String, Object> props = new HashMap<>(TestBed.sasl(cluster, TestBed.ALICE_JAAS));
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 100);
        return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
    }

    private static Admin admin(KafkaBrokerProcess cluster) {
        Map<String, Object> props = new HashMap<>(TestBed.sasl(cluster, TestBed.ADMIN_JAAS));
        return Admin.create(props);
    }
}
