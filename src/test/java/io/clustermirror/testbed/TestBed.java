package io.clustermirror.testbed;

import io.clustermirror.embedded.KafkaBrokerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The shared integration-test world, started once per test JVM (the build runs a few side by side, each with its
 * own world and its own slice of ports): two single-node KRaft clusters,
 * "source" and "destination", each a child JVM from the Maven Central Kafka jars, and the packaged
 * service running as its own process against the destination. Tests use their own topics, groups and
 * mirror names. Obtain it with {@link #get()}; it stops when the test JVM exits.
 */
public final class TestBed {

    private static TestBed instance;

    private final Path workDir;
    private final Path appDir;
    private final KafkaBrokerProcess source;
    private final KafkaBrokerProcess destination;
    private final ServiceProcess service;
    private final String classpath;

    private TestBed() {
        workDir = freshDirectory(
                Path.of(required("testbed.work.dir")),
                "run-" + ProcessHandle.current().pid());
        appDir = Path.of(required("testbed.app.dir"));
        classpath = KafkaBrokerProcess.classpathFrom(Path.of(required("testbed.broker.classpath.file")));
        source = new KafkaBrokerProcess(
                "source", workDir.resolve("source"), Ports.free(), Ports.free(), classpath, Map.of());
        destination = new KafkaBrokerProcess(
                "destination", workDir.resolve("destination"), Ports.free(), Ports.free(), classpath, Map.of());
        try {
            CompletableFuture.allOf(
                            CompletableFuture.runAsync(() -> source.start(Duration.ofSeconds(120))),
                            CompletableFuture.runAsync(() -> destination.start(Duration.ofSeconds(120))))
                    .join();
            // FAILED partitions wait for recover here, so that tests see the first error deterministically
            service = newService("service", Map.of("mirror.failed.retry.max.attempts", "0"))
                    .start();
        } catch (RuntimeException e) {
            // nothing left running: the next test class tries again from scratch, in a directory of its own
            destination.close();
            source.close();
            throw e;
        }
    }

    /** {@code base/name}, or {@code base/name-2}, -3... when an earlier attempt of this JVM left it behind. */
    private static Path freshDirectory(Path base, String name) {
        Path dir = base.resolve(name);
        for (int attempt = 2; Files.exists(dir); attempt++) {
            dir = base.resolve(name + "-" + attempt);
        }
        return dir;
    }

    public static synchronized TestBed get() {
        if (instance == null) {
            instance = new TestBed();
            Runtime.getRuntime().addShutdownHook(new Thread(instance::close, "testbed-shutdown"));
        }
        return instance;
    }

    public KafkaBrokerProcess source() {
        return source;
    }

    public KafkaBrokerProcess destination() {
        return destination;
    }

    /** The shared service process; tests that restart it must leave it running and ready. */
    public ServiceProcess service() {
        return service;
    }

    /** A further service process against the destination (not started), e.g. with another state topic. */
    public ServiceProcess newService(String name, Map<String, String> overrides) {
        return newPlainService(name, destination, overrides);
    }

    /** A service process against another (plaintext) destination. */
    public ServiceProcess newPlainService(String name, KafkaBrokerProcess destination, Map<String, String> overrides) {
        return newPlainService(name, destination.bootstrapServers(), overrides);
    }

    /** A service process against the (plaintext) destination at {@code destinationBootstrap}, e.g. a replicated one. */
    public ServiceProcess newPlainService(String name, String destinationBootstrap, Map<String, String> overrides) {
        return new ServiceProcess(name, appDir, workDir, destinationBootstrap, overrides);
    }

    /**
     * A KRaft cluster of {@code size} nodes (not started) behind one {@link CuttingProxy} per node: replication factor
     * {@code size}, {@code size - 1} in sync, client traffic through the proxies only.
     */
    public ReplicatedCluster newReplicatedCluster(String name, int size) {
        return new ReplicatedCluster(name, workDir.resolve(name), size, classpath);
    }

    /** SASL/PLAIN user "admin" (a super user) and an ordinary user "alice", on brokers with StandardAuthorizer. */
    public static final String ADMIN_JAAS =
            "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"admin\" password=\"admin-secret\";";

    public static final String ALICE_JAAS =
            "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"alice\" password=\"alice-secret\";";

    /** A single-node cluster with a SASL_PLAINTEXT listener and the StandardAuthorizer (not started). */
    public KafkaBrokerProcess securedCluster(String name) {
        int port = Ports.free();
        int controllerPort = Ports.free();
        Map<String, String> secured = Map.of(
                "listeners", "SASL_PLAINTEXT://localhost:" + port + ",CONTROLLER://localhost:" + controllerPort,
                "advertised.listeners", "SASL_PLAINTEXT://localhost:" + port,
                "listener.security.protocol.map", "SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
                "inter.broker.listener.name", "SASL_PLAINTEXT",
                "sasl.enabled.mechanisms", "PLAIN",
                "sasl.mechanism.inter.broker.protocol", "PLAIN",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config",
                        "org.apache.kafka.common.security.plain.PlainLoginModule required "
                                + "username=\"admin\" password=\"admin-secret\" user_admin=\"admin-secret\" user_alice=\"alice-secret\";",
                "authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                "super.users", "User:admin;User:ANONYMOUS");
        return new KafkaBrokerProcess(name, workDir.resolve(name), port, controllerPort, classpath, secured);
    }

    /** Another single-node cluster like the source (not started), for a test that stops it or edits its logs. */
    public KafkaBrokerProcess newCluster(String name) {
        return new KafkaBrokerProcess(name, workDir.resolve(name), Ports.free(), Ports.free(), classpath, Map.of());
    }

    /** Another single-node cluster (not started) that tells clients to reach it at {@code advertisedPort} (a proxy's). */
    public KafkaBrokerProcess newCluster(String name, int advertisedPort) {
        return new KafkaBrokerProcess(
                name,
                workDir.resolve(name),
                Ports.free(),
                Ports.free(),
                classpath,
                Map.of("advertised.listeners", "PLAINTEXT://localhost:" + advertisedPort));
    }

    /**
     * A single-node cluster on Kafka 4.2.0 instead of the test bed's 4.1.2 (not started): for what a 4.1.2 broker
     * cannot do (it does not apply AlterShareGroupOffsets). Its classpath is resolved by the build.
     */
    public KafkaBrokerProcess kafka42Cluster(String name) {
        String classpath42 = KafkaBrokerProcess.classpathFrom(Path.of(required("testbed.broker42.classpath.file")));
        return new KafkaBrokerProcess(name, workDir.resolve(name), Ports.free(), Ports.free(), classpath42, Map.of());
    }

    /** Client settings for a secured cluster as the given user. */
    public static Map<String, String> sasl(KafkaBrokerProcess broker, String jaas) {
        return Map.of(
                "bootstrap.servers",
                broker.bootstrapServers(),
                "security.protocol",
                "SASL_PLAINTEXT",
                "sasl.mechanism",
                "PLAIN",
                "sasl.jaas.config",
                jaas);
    }

    /** A service process against a secured destination, as its super user. */
    public ServiceProcess newService(String name, KafkaBrokerProcess destination, Map<String, String> overrides) {
        Map<String, String> props = new HashMap<>(overrides);
        props.put("kafka.security.protocol", "SASL_PLAINTEXT");
        props.put("kafka.sasl.mechanism", "PLAIN");
        props.put("kafka.sasl.jaas.config", ADMIN_JAAS);
        return new ServiceProcess(name, appDir, workDir, destination.bootstrapServers(), props);
    }

    /**
     * Waits until an idempotent producer can write to the (re)started broker. Right after a restart the broker
     * accepts connections well before it hands out producer ids again; a test producing then would stall for
     * minutes and lose its records to the delivery timeout.
     */
    public void awaitProducible(KafkaBrokerProcess broker) {
        String probe = "__testbed_probe";
        org.awaitility.Awaitility.await("broker " + broker.name() + " takes idempotent writes")
                .atMost(Duration.ofMinutes(3))
                .pollInterval(Duration.ofSeconds(1))
                .ignoreExceptions()
                .until(() -> {
                    try (Admin admin = admin(broker)) {
                        if (!admin.listTopics().names().get().contains(probe)) {
                            admin.createTopics(List.of(new NewTopic(probe, 1, (short) 1)))
                                    .all()
                                    .get();
                        }
                    }
                    try (var producer = new KafkaProducer<byte[], byte[]>(
                            Map.of(
                                    "bootstrap.servers",
                                    broker.bootstrapServers(),
                                    "enable.idempotence",
                                    true,
                                    "acks",
                                    "all",
                                    "max.block.ms",
                                    5000,
                                    "delivery.timeout.ms",
                                    5000,
                                    "request.timeout.ms",
                                    4000),
                            new ByteArraySerializer(),
                            new ByteArraySerializer())) {
                        producer.send(new ProducerRecord<>(probe, new byte[0])).get();
                        return true;
                    }
                });
    }

    /** Another cluster (new cluster id, empty) on the ports of {@code original}, which must be stopped first. */
    public KafkaBrokerProcess impostor(KafkaBrokerProcess original) {
        return new KafkaBrokerProcess(
                "impostor-" + original.name(),
                workDir.resolve("impostor-" + System.nanoTime()),
                original.port(),
                original.controllerPort(),
                classpath,
                Map.of());
    }

    public Admin sourceAdmin() {
        return admin(source);
    }

    public Admin destinationAdmin() {
        return admin(destination);
    }

    private static Admin admin(KafkaBrokerProcess broker) {
        return Admin.create(Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrapServers(),
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
                30000));
    }

    private void close() {
        for (AutoCloseable closeable : List.<AutoCloseable>of(service, source, destination)) {
            try {
                closeable.close();
            } catch (Exception e) {
                System.err.println("Test bed shutdown: " + e);
            }
        }
    }

    private static String required(String property) {
        String value = System.getProperty(property);
        if (value == null) {
            throw new IllegalStateException(
                    "System property " + property + " is not set: run the integration tests with ./mvnw verify");
        }
        return value;
    }
}
