package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.clustermirror.embedded.KafkaBrokerProcess;
import io.clustermirror.testbed.ServiceProcess;
import io.clustermirror.testbed.TestBed;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * ACL sync and read-only mirror topics on clusters with an authorizer: two SASL_PLAINTEXT clusters with the
 * StandardAuthorizer, the service as super user "admin", and an ordinary user "alice".
 */
class AclSyncIT extends ServiceIT {

    private static KafkaBrokerProcess source;
    private static KafkaBrokerProcess destination;
    private static ServiceProcess service;
    /** Where the service's file config provider may read the source's credentials from. */
    private static Path secrets;

    @BeforeAll
    static void startSecuredClusters() {
        source = bed.securedCluster("secured-source");
        destination = bed.securedCluster("secured-destination");
        CompletableFuture.allOf(
                        CompletableFuture.runAsync(() -> source.start(Duration.ofSeconds(120))),
                        CompletableFuture.runAsync(() -> destination.start(Duration.ofSeconds(120))))
                .join();
        try {
            secrets = Files.createTempDirectory("cluster-mirror-secrets");
            Files.writeString(secrets.resolve("source.properties"), "jaas=" + TestBed.ADMIN_JAAS + "\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        service = bed.newService(
                        "secured-service",
                        destination,
                        Map.of(
                                "mirror.metadata.refresh.interval.ms",
                                "1000",
                                "mirror.state.topic.num.partitions",
                                "1",
                                "mirror.source.config.providers",
                                "file",
                                "mirror.source.config.provider.file.allowed.paths",
                                secrets.toString()))
                .start();
        target = service;
    }

    @AfterAll
    static void stopThem() {
        target = null;
        service.stop();
        source.stop();
        destination.stop();
    }

    @Test
    void aclsShouldBeCopiedAndDeletedWhileOthersAreLeftAlone() throws Exception {
        String topic = uniqueName("acl");
        String mirror = uniqueName("acl");
        AclBinding readAlice = topicAcl(topic, "User:alice", AclOperation.READ, AclPermissionType.ALLOW);
        AclBinding localDescribe = topicAcl(topic, "User:alice", AclOperation.DESCRIBE, AclPermissionType.ALLOW);
        try (Admin admin = admin(source)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            admin.createAcls(List.of(readAlice)).all().get();
        }
        try (Admin admin = admin(destination)) {
            admin.createAcls(List.of(localDescribe)).all().get();
        }
        Map<String, String> config = new HashMap<>(TestBed.sasl(source, TestBed.ADMIN_JAAS));
        config.put("mirror.acl.include", "TOPIC;" + topic.replace("-", "\\-") + ";*;*;*");
        api().body(createBody(mirror, config)).post("/v1/mirrors").then().statusCode(201);
        startTopics(mirror, topic);

        // Then the source's ACL appears on the destination
        await().atMost(Duration.ofSeconds(30)).until(() -> destinationAcls().contains(readAlice));

        // When it is deleted on the source, the mirror deletes its copy, and only that
        try (Admin admin = admin(source)) {
            admin.deleteAcls(List.of(readAlice.toFilter())).all().get();
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> !destinationAcls().contains(readAlice));
        assertThat(destinationAcls()).contains(localDescribe);
    }

    @Test
    void mirroredTopicShouldBeReadOnlyUntilStopped() throws Exception {
        String topic = uniqueName("readonly");
        String mirror = uniqueName("readonly");
        try (Admin admin = admin(source)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }
        // While mirrored, alice's write is refused even though she may write to the topic
        mirrorRefusingAlice(mirror, topic, TestBed.sasl(source, TestBed.ADMIN_JAAS));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> String.valueOf(api().get("/v1/mirrors/" + mirror)
                                .then()
                                .extract()
                                .jsonPath()
                                .getString("metadataSync.acls"))
                        .contains("read-only enforced"));

        // After stop, she can
        topicVerb(mirror, "stop", topic);
        awaitAllPartitions(mirror, topic, "STOPPED");
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(produceAsAlice(topic)).isEqualTo(0L));
    }

    /**
     * An unplanned failover: the source is gone when the topic is stopped. The stop cannot read the source's configs to
     * restore, and says so; the topic is writable all the same (its guard was deleted after those reads once, so a
     * source that did not answer left it read-only).
     */
    @Test
    void aStopWithTheSourceGoneShouldLeaveTheTopicWritable() throws Exception {
        KafkaBrokerProcess gone = bed.newCluster("failover-source");
        gone.start(Duration.ofSeconds(120));
        String topic = uniqueName("failover");
        String mirror = uniqueName("failover");
        try {
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", gone.bootstrapServers()))) {
                Kafka.createTopic(admin, topic, 1, Map.of());
            }
            Kafka.produce(gone.bootstrapServers(), topic, 5, "none", "before");
            mirrorRefusingAlice(mirror, topic, Map.of("bootstrap.servers", gone.bootstrapServers()));

            // When the source goes away and the topic is stopped
            gone.stop();
            topicVerb(mirror, "stop", topic);
            Map<?, ?> stopped = await("STOPPED")
                    .atMost(Duration.ofSeconds(120))
                    .pollInterval(Duration.ofSeconds(1))
                    .until(
                            () -> describeTopic(mirror, topic)
                                    .getList("partitions", Map.class)
                                    .get(0),
                            p -> "STOPPED".equals(p.get("state")));

            // Then the configs the source holds could not be read back, and alice writes after the mirrored records
            assertThat(String.valueOf(stopped.get("error")))
                    .startsWith("mirror-owned configs of the destination topic could not be restored");
            assertThat(produceAsAlice(topic)).isEqualTo(5L);
            assertThat(destinationAcls())
                    .noneMatch(acl -> acl.pattern().name().equals(topic)
                            && acl.entry().permissionType() == AclPermissionType.DENY);
        } finally {
            api().delete("/v1/mirrors/" + mirror);
            gone.close();
        }
    }

    @Test
    void anExistingDestinationTopicShouldGetNoGuardAndNoConfigsUnlessAdopted() throws Exception {
        String topic = uniqueName("foreign");
        String mirror = uniqueName("foreign");
        try (Admin admin = admin(source)) {
            Kafka.createTopic(admin, topic, 1, Map.of());
        }
        try (Admin admin = admin(destination)) {
            Kafka.createTopic(admin, topic, 1, Map.of()); // someone else's topic of the same name
        }
        api().body(createBody(mirror, TestBed.sasl(source, TestBed.ADMIN_JAAS)))
                .post("/v1/mirrors")
                .then()
                .statusCode(201);

        // When it is started without adopting: refused for that topic, and the topic gets no guard ACL
        api().body(Map.of("topics", List.of(topic)))
                .post("/v1/mirrors/" + mirror + "/topics:start")
                .then()
                .statusCode(200)
                .body("topics[0].errorCode", org.hamcrest.Matchers.equalTo("TOPIC_ALREADY_EXISTS"));
        assertThat(destinationAcls()).noneMatch(acl -> acl.pattern().name().equals(topic));

        // When it is adopted, it is guarded like any mirrored topic
        api().body(Map.of("topics", List.of(topic), "adoptExisting", true))
                .post("/v1/mirrors/" + mirror + "/topics:start")
                .then()
                .statusCode(200)
                .body("topics[0].result", org.hamcrest.Matchers.equalTo("STARTED"));
        assertThat(destinationAcls())
                .anyMatch(acl -> acl.pattern().name().equals(topic)
                        && acl.entry().operation() == AclOperation.WRITE
                        && acl.entry().permissionType() == AclPermissionType.DENY);
        awaitConverged(mirror, topic);
    }

    /**
     * A DENY WRITE for User:* already on a topic the mirror adopts is the same ACL as another mirror's promote fence
     * (a switch back adopts the old primary's fenced topics, PlannedSwitchoverIT), so it becomes the mirror's guard
     * and goes at the stop (a stop is a failover: the topic becomes writable), as decisions §52 says; an operator's own
     * rule of that shape goes with it, one of another shape stays.
     */
    @Test
    void aDenyWriteForEveryoneOnAnAdoptedTopicShouldBecomeTheGuardAndGoAtTheStop() throws Exception {
        String topic = uniqueName("guarded");
        String mirror = uniqueName("guarded");
        AclBinding found = topicAcl(topic, "User:*", AclOperation.WRITE, AclPermissionType.DENY);
        AclBinding denyBob = topicAcl(topic, "User:bob", AclOperation.WRITE, AclPermissionType.DENY);
        try (Admin admin = admin(source)) {
            Kafka.createTopic(admin, topic, 1, Map.of());
        }
        try (Admin admin = admin(destination)) {
            Kafka.createTopic(admin, topic, 1, Map.of());
            admin.createAcls(List.of(found, denyBob)).all().get();
        }
        api().body(createBody(mirror, TestBed.sasl(source, TestBed.ADMIN_JAAS)))
                .post("/v1/mirrors")
                .then()
                .statusCode(201);
        startTopicsAdopting(mirror, topic);
        awaitConverged(mirror, topic);

        topicVerb(mirror, "stop", topic);
        awaitAllPartitions(mirror, topic, "STOPPED");

        assertThat(destinationAcls()).doesNotContain(found).contains(denyBob);
    }

    @Test
    void aSourceSecretFromAConfigProviderShouldReachTheSourceAndNeverBeStored() throws Exception {
        String topic = uniqueName("provided");
        String mirror = uniqueName("provided");
        try (Admin admin = admin(source)) {
            Kafka.createTopic(admin, topic, 1, Map.of());
        }
        Kafka.produce(
                source.bootstrapServers(),
                topic,
                300,
                "lz4",
                "p",
                new HashMap<>(TestBed.sasl(source, TestBed.ADMIN_JAAS)));

        // When the mirror's credentials are a reference to a file the service may read
        String reference = "${file:" + secrets.resolve("source.properties") + ":jaas}";
        api().body(createBody(mirror, TestBed.sasl(source, reference)))
                .post("/v1/mirrors")
                .then()
                .statusCode(201);
        startTopics(mirror, topic);

        // Then the service reaches the source with them (create, metadata and the data plane)
        awaitConverged(mirror, topic);
        try (Admin admin = admin(destination)) {
            assertThat(Kafka.total(Kafka.offsets(admin, topic, OffsetSpec.latest())))
                    .isEqualTo(300);
        }
        // and the state topic holds the reference, never the password
        List<String> state = stateRecords();
        assertThat(state).anySatisfy(r -> assertThat(r).contains(mirror).contains("${file:"));
        assertThat(state).noneSatisfy(r -> assertThat(r).contains(mirror).contains("admin-secret"));

        // A file outside the provider's allowed.paths is not read, though it holds the same key
        Path elsewhere = Files.createTempDirectory("not-allowed").resolve("source.properties");
        Files.writeString(elsewhere, "jaas=" + TestBed.ADMIN_JAAS + "\n");
        api().body(createBody(uniqueName("provided"), TestBed.sasl(source, "${file:" + elsewhere + ":jaas}")))
                .post("/v1/mirrors")
                .then()
                .statusCode(400)
                .body("errorCode", org.hamcrest.Matchers.equalTo("INVALID_CONFIG"));

        // A reference to a provider the service does not enable is refused, naming the key
        api().body(createBody(uniqueName("provided"), TestBed.sasl(source, "${env:SOURCE_JAAS}")))
                .post("/v1/mirrors")
                .then()
                .statusCode(400)
                .body("errorCode", org.hamcrest.Matchers.equalTo("INVALID_CONFIG"))
                .body("field", org.hamcrest.Matchers.equalTo("config.sasl.jaas.config"));
    }

    @Test
    void aSourceSecretThatNoLongerResolvesAfterARestartShouldFailThePartitionUntilItIsBack() throws Exception {
        String topic = uniqueName("unresolved");
        String mirror = uniqueName("unresolved");
        Path file = secrets.resolve(mirror + ".properties");
        Files.writeString(file, "jaas=" + TestBed.ADMIN_JAAS + "\n");
        Map<String, Object> asAdmin = new HashMap<>(TestBed.sasl(source, TestBed.ADMIN_JAAS));
        try (Admin admin = admin(source)) {
            Kafka.createTopic(admin, topic, 1, Map.of());
        }
        Kafka.produce(source.bootstrapServers(), topic, 100, "lz4", "u1", asAdmin);
        api().body(createBody(mirror, TestBed.sasl(source, "${file:" + file + ":jaas}")))
                .post("/v1/mirrors")
                .then()
                .statusCode(201);
        startTopics(mirror, topic);
        awaitConverged(mirror, topic);

        // When the service restarts and the secret's file is gone
        service.stop();
        Path away = secrets.resolve(mirror + ".moved");
        Files.move(file, away);
        service.start();

        // Then the partition is FAILED saying why, instead of waiting silently
        Map<?, ?> failed = awaitPartitionState(mirror, topic, "FAILED");
        assertThat((String) failed.get("error"))
                .contains("clients could not be built")
                .contains("'sasl.jaas.config' could not be resolved");

        // and once the file is back, the automatic retry mirrors on
        Files.move(away, file);
        Kafka.produce(source.bootstrapServers(), topic, 100, "lz4", "u2", asAdmin);
        awaitConverged(mirror, topic);
        try (Admin admin = admin(destination)) {
            assertThat(Kafka.total(Kafka.offsets(admin, topic, OffsetSpec.latest())))
                    .isEqualTo(200);
        }

        // When the file is gone at another restart and the topic is stopped
        service.stop();
        Files.move(file, away);
        service.start();
        awaitPartitionState(mirror, topic, "FAILED");
        topicVerb(mirror, "stop", topic);

        // Then the stop waits, saying why (it restores the topic's configs from the source's and aborts what is open)
        awaitPartitionState(mirror, topic, "STOPPING");
        await().atMost(Duration.ofSeconds(20))
                .untilAsserted(() -> assertThat(describeTopic(mirror, topic).getString("partitions[0].waiting"))
                        .contains("stopping waits for the mirror's clients")
                        .contains("could not be resolved"));
        // but the topic is writable meanwhile: without clients, nothing of the mirror writes to it (an unplanned
        // failover whose source name no longer resolves must not wait for it)
        grantAliceWrites(topic);
        await().atMost(Duration.ofSeconds(20))
                .untilAsserted(() -> assertThat(produceAsAlice(topic)).isEqualTo(200L));

        // and completes once the file is back, saying the loss report counts alice's record
        Files.move(away, file);
        Map<?, ?> stopped = awaitPartitionState(mirror, topic, "STOPPED");
        assertThat(String.valueOf(stopped.get("error")))
                .startsWith("the topic was writable from ")
                .contains("while the stop waited for the mirror's clients");
        assertThat(stopped.get("waiting")).isNull();
    }

    /** Every record of the service's state topic on the secured destination, as text. */
    private static List<String> stateRecords() {
        Map<String, Object> props = new HashMap<>(TestBed.sasl(destination, TestBed.ADMIN_JAAS));
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        try (var consumer = new KafkaConsumer<String, String>(props)) {
            List<String> records = new ArrayList<>();
            Kafka.readToEnd(
                    consumer,
                    Kafka.partitions(consumer, STATE_TOPIC),
                    Duration.ofSeconds(30),
                    r -> records.add(r.key() + " " + r.value()));
            return records;
        }
    }

    /** Alice may write to the destination topic (and see it), as far as ACLs that allow go. */
    /**
     * Creates the mirror, starts the topic and waits until it is mirrored, then grants alice writes on the destination
     * topic and shows that the topic's guard refuses her all the same.
     */
    private static void mirrorRefusingAlice(String mirror, String topic, Map<String, String> sourceConfig)
            throws Exception {
        api().body(createBody(mirror, sourceConfig)).post("/v1/mirrors").then().statusCode(201);
        startTopics(mirror, topic);
        awaitConverged(mirror, topic);
        grantAliceWrites(topic);
        assertThatThrownBy(() -> produceAsAlice(topic))
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(TopicAuthorizationException.class);
    }

    private static void grantAliceWrites(String topic) throws Exception {
        try (Admin admin = admin(destination)) {
            admin.createAcls(List.of(
                            topicAcl(topic, "User:alice", AclOperation.WRITE, AclPermissionType.ALLOW),
                            topicAcl(topic, "User:alice", AclOperation.DESCRIBE, AclPermissionType.ALLOW)))
                    .all()
                    .get();
        }
    }

    private static long produceAsAlice(String topic) throws Exception {
        Map<String, Object> props = new HashMap<>(TestBed.sasl(destination, TestBed.ALICE_JAAS));
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000);
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 10_000);
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            return producer.send(new ProducerRecord<>(topic, 0, "k".getBytes(), "alice".getBytes()))
                    .get()
                    .offset();
        }
    }

    private static AclBinding topicAcl(
            String topic, String principal, AclOperation operation, AclPermissionType permission) {
        return new AclBinding(
                new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL),
                new AccessControlEntry(principal, "*", operation, permission));
    }

    private static Set<AclBinding> destinationAcls() throws Exception {
        try (Admin admin = admin(destination)) {
            return admin.describeAcls(AclBindingFilter.ANY).values().get().stream()
                    .collect(Collectors.toSet());
        }
    }

    private static Admin admin(KafkaBrokerProcess broker) {
        return Admin.create(new HashMap<>(TestBed.sasl(broker, TestBed.ADMIN_JAAS)));
    }
}
