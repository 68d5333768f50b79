package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import io.clustermirror.testbed.CompatibilityResults;
import io.clustermirror.testbed.CompatibilityResults.Outcome;
import io.clustermirror.testbed.CompatibilityResults.Result;
import io.clustermirror.testbed.CompatibilityResults.Role;
import io.clustermirror.testbed.ReleaseBroker;
import io.clustermirror.testbed.ServiceProcess;
import io.restassured.path.json.JsonPath;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Which Apache Kafka releases the mirror works with, shown per release and case: each source release runs as its own
 * single-node cluster ({@link ReleaseBroker}: ZooKeeper-mode before 3.3, KRaft from 3.3) and is mirrored to the test
 * bed's destination by a service of this class; each destination release gets a service of its own and mirrors the
 * test bed's source. The cases: a plain, an idempotent, a transactional (with an aborted transaction) and a cleaned
 * compacted topic mirrored identically (every record at its source offset), a consumer group's offsets synced, and a
 * promote (on a source: fenced with its release's ACL authorizer). Every case's outcome goes to {@code
 * compat.results.file}, from which {@code CompatibilityReport} renders the README's table.
 *
 * <p>A {@code compat.destinations} entry {@code X/Y} runs release X as the destination of a release-Y source instead of
 * the test bed's. {@code ./mvnw verify} runs a sample ({@code compat.sources}: the oldest and the newest release); the profile
 * {@code compat-matrix} runs every release line (README "Compatibility").
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES) // one release's cases: a ZooKeeper and a broker to start, six cases
class CompatibilityMatrixIT extends ServiceIT {

    private static final Duration START = Duration.ofSeconds(120);
    private static CompatibilityResults results;
    private static ServiceProcess service;
    private static Path runDir;

    /** One release under test and the service that mirrors between it and the test bed. */
    private record Run(
            Role role,
            String version,
            String source,
            String destination,
            ServiceProcess service,
            ReleaseBroker fenced,
            List<String> failures) {}

    @BeforeAll
    static void startService() throws Exception {
        results = new CompatibilityResults(Path.of(property("compat.results.file")));
        results.reset("run on " + LocalDate.now(ZoneOffset.UTC) + " with Java "
                + Runtime.version() + " (" + System.getProperty("java.vendor") + "), " + System.getProperty("os.name")
                + ", "
                + Runtime.getRuntime().availableProcessors() + " cores");
        runDir = Path.of(
                property("testbed.work.dir"),
                "compat-" + ProcessHandle.current().pid());
        Files.createDirectories(runDir);
        // a 1 s sync cycle: group offsets arrive within seconds
        service = bed.newService(
                        "service-compat",
                        Map.of(
                                "mirror.metadata.refresh.interval.ms",
                                "1000",
                                "mirror.state.topic.name",
                                uniqueName("__mirror_state_compat")))
                .start();
        // a test run that is killed still stops it (the test bed stops only its own processes)
        ServiceProcess started = service;
        Runtime.getRuntime().addShutdownHook(new Thread(started::stop, "compat-service-shutdown"));
    }

    @AfterAll
    static void stopService() {
        target = null;
        if (service != null) {
            service.stop();
        }
    }

    static Stream<String> sources() {
        return releases("compat.sources");
    }

    static Stream<String> destinations() {
        return releases("compat.destinations");
    }

    @ParameterizedTest(name = "source Kafka {0}", allowZeroInvocations = true)
    @MethodSource("sources")
    void sourceRelease(String version) throws Exception {
        ReleaseBroker source = startOrSkip(Role.SOURCE, version, version, true);
        if (source == null) {
            return;
        }
        try (source) {
            target = service;
            Run run = new Run(
                    Role.SOURCE,
                    version,
                    source.bootstrapServers(),
                    bed.destination().bootstrapServers(),
                    service,
                    source,
                    new ArrayList<>());
            runCases(run);
            assertThat(run.failures()).as("Kafka " + version + " as a source").isEmpty();
        } finally {
            target = null;
        }
    }

    @ParameterizedTest(name = "destination Kafka {0}", allowZeroInvocations = true)
    @MethodSource("destinations")
    void destinationRelease(String entry) throws Exception {
        // "4.4.0": the test bed's 4.1.2 source mirrored to a 4.4.0 destination; "3.0.2/3.0.2": from a 3.0.2 source
        String version = entry.split("/")[0];
        String sourceVersion = entry.contains("/") ? entry.split("/")[1] : null;
        String label = sourceVersion == null ? version : version + " (source " + sourceVersion + ")";
        ReleaseBroker destination = startOrSkip(Role.DESTINATION, version, label, false);
        if (destination == null) {
            return;
        }
        ReleaseBroker source = null;
        if (sourceVersion != null) {
            source = startOrSkip(Role.DESTINATION, sourceVersion, label, true);
            if (source == null) {
                destination.close();
                return;
            }
        }
        ServiceProcess own = bed.newPlainService(
                "service-compat-" + version,
                destination.bootstrapServers(),
                Map.of("mirror.metadata.refresh.interval.ms", "1000", "mirror.state.topic.num.partitions", "1"));
        try (destination;
                ReleaseBroker sourceToClose = source;
                own) {
            try {
                own.start();
            } catch (RuntimeException | AssertionError e) {
                for (String testCase : CASES) {
                    results.record(new Result(
                            Role.DESTINATION,
                            label,
                            testCase,
                            Outcome.FAILED,
                            "the service did not start against it: " + firstLine(e)));
                }
                throw e;
            }
            target = own;
            Run run = new Run(
                    Role.DESTINATION,
                    label,
                    sourceToClose == null ? bed.source().bootstrapServers() : sourceToClose.bootstrapServers(),
                    destination.bootstrapServers(),
                    own,
                    sourceToClose,
                    new ArrayList<>());
            runCases(run);
            assertThat(run.failures())
                    .as("Kafka " + label + " as a destination")
                    .isEmpty();
        } finally {
            target = null;
        }
    }

    private static final List<String> CASES =
            List.of("plain", "idempotent", "transactional", "compacted", "group offsets", "promote");

    private void runCases(Run run) throws Exception {
        String mirror =
                uniqueName("compat-" + run.version().replaceAll("[^0-9]+", "-").replaceAll("-$", ""));
        String plain = uniqueName("plain");
        String idempotent = uniqueName("idempotent");
        String transactional = uniqueName("transactional");
        String compacted = uniqueName("compacted");
        String promoted = uniqueName("promoted");
        api().body(createBody(mirror, Map.of("bootstrap.servers", run.source())))
                .post("/v1/mirrors")
                .then()
                .statusCode(201);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", run.source()))) {
            Kafka.createTopic(admin, plain, 2, Map.of());
            Kafka.createTopic(admin, idempotent, 2, Map.of());
            Kafka.createTopic(admin, transactional, 2, Map.of());
            Kafka.createTopic(admin, compacted, 1, Compaction.CLEAN_AT_ONCE);
            Kafka.createTopic(admin, promoted, 1, Map.of());
        }
        // the data before the mirror starts (a backlog), then more while it runs
        Kafka.produce(run.source(), plain, 300, "gzip", "plain", Map.of("enable.idempotence", false, "acks", "1"));
        Kafka.produce(run.source(), idempotent, 300, "lz4", "idem");
        transactions(run.source(), transactional, 0);
        Kafka.produce(run.source(), compacted, 200, "none", "compact");
        Kafka.produce(run.source(), compacted, 200, "none", "compact");
        awaitCleaned(run.source(), compacted);
        Kafka.produce(run.source(), promoted, 100, "snappy", "promote");
        Map<String, String> startErrors = start(mirror, plain, idempotent, transactional, compacted, promoted);
        try {
            check(run, "plain", () -> {
                assertStarted(startErrors, plain);
                Kafka.produce(run.source(), plain, 50, "gzip", "plain2", Map.of("enable.idempotence", false));
                awaitConverged(mirror, plain);
                assertIdentical(run, plain, "read_uncommitted");
            });
            check(run, "idempotent", () -> {
                assertStarted(startErrors, idempotent);
                Kafka.produce(run.source(), idempotent, 50, "lz4", "idem2");
                awaitConverged(mirror, idempotent);
                assertIdentical(run, idempotent, "read_uncommitted");
            });
            check(run, "transactional", () -> {
                assertStarted(startErrors, transactional);
                transactions(run.source(), transactional, 1);
                awaitConverged(mirror, transactional);
                assertIdentical(run, transactional, "read_uncommitted");
                assertIdentical(run, transactional, "read_committed");
            });
            check(run, "compacted", () -> {
                assertStarted(startErrors, compacted);
                awaitConverged(mirror, compacted);
                assertCompactedIdentical(run, compacted);
            });
            check(run, "group offsets", () -> assertGroupSynced(run, plain));
            check(run, "promote", () -> {
                assertStarted(startErrors, promoted);
                assertPromoted(run, mirror, promoted);
            });
        } finally {
            stopAndDelete(mirror, plain, idempotent, transactional, compacted);
        }
    }

    /** Starts the topics; what the start refused, as topic and error (a case of such a topic fails with it). */
    private static Map<String, String> start(String mirror, String... topics) {
        List<Map<String, Object>> answers = api().body(Map.of("topics", List.of(topics)))
                .post("/v1/mirrors/" + mirror + "/topics:start")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath()
                .getList("topics");
        Map<String, String> errors = new HashMap<>();
        for (Map<String, Object> answer : answers) {
            if (answer.get("errorCode") != null) {
                errors.put((String) answer.get("topic"), answer.get("errorCode") + ": " + answer.get("error"));
            }
        }
        return errors;
    }

    private static void assertStarted(Map<String, String> startErrors, String topic) {
        if (startErrors.containsKey(topic)) {
            throw new AssertionError("the start was refused: " + startErrors.get(topic));
        }
    }

    /** Runs one case and records its outcome; a failure is kept for the release's verdict. */
    private static void check(Run run, String testCase, ThrowingRunnable body) {
        try {
            body.run();
            results.record(new Result(run.role(), run.version(), testCase, Outcome.PASSED, ""));
        } catch (Exception | AssertionError e) {
            String reason = firstLine(e);
            run.failures().add(testCase + ": " + reason);
            results.record(new Result(run.role(), run.version(), testCase, Outcome.FAILED, reason));
            System.err.println("Kafka " + run.version() + " " + run.role() + " " + testCase + " failed:");
            e.printStackTrace();
        }
    }

    @FunctionalInterface
    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    /** The records, their offsets, keys, values, headers and timestamps, and the log ends are the same on both sides. */
    private static void assertIdentical(Run run, String topic, String isolation) throws Exception {
        List<Kafka.Rec> source = Kafka.readAll(run.source(), topic, isolation);
        List<Kafka.Rec> destination = Kafka.readAll(run.destination(), topic, isolation);
        assertThat(source).isNotEmpty();
        assertThat(destination).as(isolation + " records of " + topic).isEqualTo(source);
        assertThat(ends(run.destination(), topic)).as("log ends").isEqualTo(ends(run.source(), topic));
    }

    /**
     * Where both sides hold a record at an offset it is the same record; a filler of the mirror (a compaction hole it
     * filled) never faces a source record; the latest value of every key and the log ends are the same. A record the
     * destination's own cleaner removed is no difference (the rule of LOG_TRUNCATION's BatchAgreement).
     */
    private static void assertCompactedIdentical(Run run, String topic) throws Exception {
        List<Kafka.Rec> source = Kafka.readAll(run.source(), topic);
        List<Kafka.Rec> destination = Kafka.readAll(run.destination(), topic);
        Map<Long, Kafka.Rec> sourceByOffset = new HashMap<>();
        source.forEach(r -> sourceByOffset.put(r.offset(), r));
        int compared = 0;
        for (Kafka.Rec r : destination) {
            Kafka.Rec s = sourceByOffset.get(r.offset());
            if (Compaction.FILLER_KEY.equals(r.key())) {
                assertThat(s)
                        .as("a filler at offset " + r.offset() + " faces a source record")
                        .isNull();
            } else if (s != null) {
                assertThat(r).as("the record at offset " + r.offset()).isEqualTo(s);
                compared++;
            }
        }
        assertThat(compared).as("records compared by offset").isPositive();
        assertThat(Compaction.latestByKey(destination)).isEqualTo(Compaction.latestByKey(source));
        assertThat(ends(run.destination(), topic)).as("log ends").isEqualTo(ends(run.source(), topic));
    }

    /** A group's commit on the source arrives on the destination. */
    private static void assertGroupSynced(Run run, String topic) throws Exception {
        String group = uniqueName("compat-app");
        TopicPartition p0 = new TopicPartition(topic, 0);
        TopicPartition p1 = new TopicPartition(topic, 1);
        Map<TopicPartition, OffsetAndMetadata> commit =
                Map.of(p0, new OffsetAndMetadata(100), p1, new OffsetAndMetadata(42));
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", run.source()))) {
            admin.alterConsumerGroupOffsets(group, commit).all().get(30, TimeUnit.SECONDS);
        }
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", run.destination()))) {
            await("group " + group + " synced")
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(500))
                    .ignoreExceptions()
                    .untilAsserted(() -> assertThat(admin.listConsumerGroupOffsets(group)
                                    .partitionsToOffsetAndMetadata()
                                    .get(10, TimeUnit.SECONDS))
                            .isEqualTo(commit));
        }
    }

    /**
     * A planned switchover: on a source the topic is fenced (an ordinary user who wrote before can no longer write),
     * drained and stopped, with source and destination ends equal in its proof. The test bed's source has no
     * authorizer, so a destination run promotes without the fence.
     */
    private static void assertPromoted(Run run, String mirror, String topic) throws Exception {
        awaitConverged(mirror, topic);
        ReleaseBroker fenced = run.fenced();
        if (fenced != null) {
            write(fenced.alice(), topic, "before the fence"); // alice may write: the fence is what stops her
        }
        Map<String, Object> body = new HashMap<>(Map.of("topics", List.of(topic), "timeoutMs", 60000));
        if (fenced == null) {
            body.put("fenceSource", false);
        }
        JsonPath promoted = api().body(body)
                .post("/v1/mirrors/" + mirror + "/topics:promote")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();
        assertThat(promoted.getString("topics[0].topic")).isEqualTo(topic);
        List<Map<String, Object>> partitions = promoted.getList("topics[0].partitions");
        assertThat(partitions)
                .isNotEmpty()
                .allSatisfy(p -> assertThat(p.get("destinationEndOffset")).isEqualTo(p.get("sourceEndOffset")));
        awaitAllPartitions(mirror, topic, "STOPPED");
        assertThat(ends(run.destination(), topic)).isEqualTo(ends(run.source(), topic));
        if (fenced != null) {
            assertThat(promoted.getString("topics[0].sourceFence")).isNotBlank();
            try {
                write(fenced.alice(), topic, "after the fence");
                fail("the source took alice's write after the promote: the fence did not hold");
            } catch (ExecutionException e) {
                assertThat(e.getCause()).isInstanceOf(TopicAuthorizationException.class);
            }
        }
        // the destination topic is an ordinary writable topic now
        write(Map.of("bootstrap.servers", run.destination()), topic, "on the new primary");
    }

    private static void write(Map<String, Object> client, String topic, String value) throws Exception {
        Map<String, Object> config = new HashMap<>(client);
        config.put("enable.idempotence", false);
        config.put("acks", "all");
        config.put("max.block.ms", 15000);
        config.put("delivery.timeout.ms", 15000);
        config.put("request.timeout.ms", 10000);
        config.put("retries", 0);
        try (KafkaProducer<byte[], byte[]> producer =
                Kafka.producer((String) client.get("bootstrap.servers"), config)) {
            producer.send(new ProducerRecord<>(topic, "k".getBytes(), value.getBytes()))
                    .get(30, TimeUnit.SECONDS);
        }
    }

    /** Three transactions over both partitions: committed, aborted, committed. */
    private static void transactions(String bootstrap, String topic, int round) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer =
                Kafka.producer(bootstrap, Map.of("transactional.id", uniqueName("compat-txn")))) {
            producer.initTransactions();
            for (int t = 0; t < 3; t++) {
                producer.beginTransaction();
                for (int i = 0; i < 40; i++) {
                    producer.send(new ProducerRecord<>(
                            topic, i % 2, ("r" + round + "-t" + t + "-k" + i).getBytes(), ("value-" + i).getBytes()));
                }
                if (t == 1) {
                    producer.abortTransaction();
                } else {
                    producer.commitTransaction();
                }
            }
        }
    }

    /** Rolls segments until the source's cleaner has removed records (the log has holes). */
    private static void awaitCleaned(String bootstrap, String topic) {
        await(topic + " cleaned")
                .atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> {
                    Kafka.produce(bootstrap, topic, 1, "none", "roll");
                    List<Kafka.Rec> records = Kafka.readAll(bootstrap, topic);
                    long end = records.get(records.size() - 1).offset() + 1;
                    return records.size() < end - records.get(0).offset();
                });
    }

    private static Map<TopicPartition, Long> ends(String bootstrap, String topic) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            return Kafka.offsets(admin, topic, OffsetSpec.latest());
        }
    }

    /** Leaves nothing behind that the service would keep asking a stopped broker about. */
    private static void stopAndDelete(String mirror, String... topics) {
        try {
            api().body(Map.of("topics", List.of(topics))).post("/v1/mirrors/" + mirror + "/topics:stop");
            await("mirror " + mirror + " deleted")
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(500))
                    .until(() -> api().delete("/v1/mirrors/" + mirror).statusCode() == 204);
        } catch (RuntimeException | AssertionError e) {
            System.err.println("Cleaning up mirror " + mirror + ": " + e);
        }
    }

    /**
     * The release, started; or null when it cannot run here (its classpath was not resolved, or it does not start on
     * this JDK): every case is then recorded as untested with the reason. With {@code compat.require.start} (the sample
     * of {@code ./mvnw verify}) a release that does not start fails the test instead.
     */
    private static ReleaseBroker startOrSkip(Role role, String version, String label, boolean secured) {
        Path classpath = Path.of(property("compat.classpath.dir"), "kafka-" + version + ".classpath");
        String reason;
        if (!Files.exists(classpath)) {
            reason = "not resolved from Maven Central (" + classpath.getFileName() + " missing)";
        } else {
            ReleaseBroker broker = new ReleaseBroker(version, runDir, classpath, secured);
            try {
                broker.start(START);
                awaitWritable(broker.bootstrapServers());
                return broker;
            } catch (RuntimeException | AssertionError e) {
                broker.close();
                reason = "does not start on Java " + Runtime.version().feature() + ": " + firstLine(e);
            }
        }
        for (String testCase : CASES) {
            results.record(new Result(role, label, testCase, Outcome.UNTESTED, reason));
        }
        if (Boolean.parseBoolean(System.getProperty("compat.require.start", "true"))) {
            fail("Kafka " + version + " " + reason);
        }
        return null;
    }

    /** Waits until the new cluster takes an idempotent write (its controller and coordinators are up). */
    private static void awaitWritable(String bootstrap) {
        String probe = "__compat_probe";
        await("Kafka at " + bootstrap + " takes writes")
                .atMost(START)
                .pollInterval(Duration.ofSeconds(1))
                .ignoreExceptions()
                .until(() -> {
                    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
                        if (!admin.listTopics().names().get().contains(probe)) {
                            Kafka.createTopic(admin, probe, 1, Map.of());
                        }
                    }
                    Kafka.produce(
                            bootstrap,
                            probe,
                            1,
                            "none",
                            "probe",
                            Map.of("max.block.ms", 5000, "delivery.timeout.ms", 5000, "request.timeout.ms", 4000));
                    return true;
                });
    }

    private static Stream<String> releases(String property) {
        return Arrays.stream(System.getProperty(property, "").split(","))
                .map(String::strip)
                .filter(v -> !v.isEmpty());
    }

    private static String firstLine(Throwable e) {
        String message = String.valueOf(e.getMessage());
        int newline = message.indexOf('\n');
        String first = newline < 0 ? message : message.substring(0, newline);
        return e.getClass().getSimpleName() + ": " + (first.length() > 300 ? first.substring(0, 300) + "..." : first);
    }

    private static String property(String name) {
        String value = System.getProperty(name);
        if (value == null) {
            throw new IllegalStateException("System property " + name + " is not set: run with ./mvnw verify");
        }
        return value;
    }
}
