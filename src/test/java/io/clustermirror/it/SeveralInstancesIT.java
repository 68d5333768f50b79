package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.clustermirror.testbed.ServiceProcess;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Three service processes share one destination and state topic (a state topic of their own, with the default 50
 * partitions, so the test bed's shared service is not in their group): the state group spreads the mirrors, any
 * instance answers any request, a service setting set through any instance is in force on every one, and a crashed or
 * stopped instance's mirrors go on on the others.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SeveralInstancesIT extends ServiceIT {

    private static final int STATE_PARTITIONS = 50;
    private static final String THROTTLE = "mirror.replication.throttled.rate";
    private static final List<ServiceProcess> instances = new ArrayList<>();

    private static String stateTopic;

    @BeforeAll
    static void startThreeInstances() {
        stateTopic = "__mirror_state_group_" + UUID.randomUUID().toString().substring(0, 8);
        for (String name : List.of("group-a", "group-b", "group-c")) {
            instances.add(bed.newService(
                    name + "-" + stateTopic,
                    Map.of(
                            "mirror.state.topic.name",
                            stateTopic,
                            "mirror.state.topic.num.partitions",
                            String.valueOf(STATE_PARTITIONS))));
        }
        instances.forEach(ServiceProcess::launch);
        instances.forEach(i -> i.awaitReady(Duration.ofSeconds(90)));
        awaitMembers(3);
    }

    @AfterAll
    static void stopInstances() {
        instances.forEach(ServiceProcess::stop);
    }

    @Test
    @Order(0)
    void aServiceSettingSetThroughAnyInstanceShouldBeInForceOnEveryInstanceAndResetOnEvery() {
        // Given three instances, one of which owns the state partition of the service settings
        String rate = "1073741824"; // 1 GiB/s: in force, yet it slows none of the tests after this one

        // When the replication throttle is set through the last instance (a write goes to the settings' owner)
        answeredOk(
                "set through the last instance",
                () -> call(instances.get(2))
                        .body(Map.of("value", rate))
                        .put("/v1/config/" + THROTTLE)
                        .statusCode());

        // Then every instance has it in force within seconds (the others follow the settings' state partition)
        for (ServiceProcess instance : instances) {
            await("the rate in force on instance " + instances.indexOf(instance))
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> throttleOn(instance), v -> v.equals(rate + " DYNAMIC"));
        }

        // and when it is reset through the first, every instance is back at its configured value
        answeredOk(
                "reset through the first instance",
                () -> call(instances.get(0)).delete("/v1/config/" + THROTTLE).statusCode());
        for (ServiceProcess instance : instances) {
            await("the configured rate on instance " + instances.indexOf(instance))
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> throttleOn(instance), v -> !v.endsWith(" DYNAMIC"));
        }
    }

    /** Sends the request until it is answered 200, allowing 503 while the group moves the partition it writes. */
    private static void answeredOk(String what, Callable<Integer> request) {
        await(what)
                .atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> {
                    int status = request.call();
                    assertThat(status).isIn(200, 503);
                    return status == 200;
                });
    }

    /** The replication throttle as the instance describes it: its value and where it comes from. */
    private static String throttleOn(ServiceProcess instance) {
        JsonPath config = call(instance)
                .get("/v1/config")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();
        String entry = "configs.find { it.name == '" + THROTTLE + "' }";
        return config.getString(entry + ".value") + " " + config.getString(entry + ".source");
    }

    @Test
    @Order(1)
    void thirtyMirrorsShouldSpreadTenPlusOrMinusTwoAlsoAfterAnInstanceLeavesAndComesBack() {
        // Given: thirty mirrors, all created through the first instance (each applied by its owner)
        List<String> names = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            String name = uniqueName("spread");
            names.add(name);
            createVia(instances.get(0), name);
        }

        // Then every instance runs 10 ± 2 of them, and any instance lists them all
        awaitSpread(instances, 30);
        for (ServiceProcess instance : instances) {
            assertThat(listVia(instance)).containsAll(names);
        }

        // When one instance stops, the two others run them all; and when it is back, the spread is even again
        ServiceProcess third = instances.get(2);
        third.stop();
        awaitSpread(instances.subList(0, 2), 30);
        third.start();
        awaitMembers(3);
        awaitSpread(instances, 30);
        names.forEach(name -> call(instances.get(1)).delete("/v1/mirrors/" + name));
    }

    @Test
    @Order(2)
    void aRequestToAnInstanceThatDoesNotOwnTheMirrorShouldBeAnsweredByTheOwner() {
        // Given a mirror owned by the second instance
        ServiceProcess owner = instances.get(1);
        String ownerId = idOf(owner);
        String name = nameOwnedBy(owner);
        createVia(instances.get(0), name);

        // When the first and the third instance are asked to change and describe it
        call(instances.get(0))
                .body(Map.of("set", Map.of("mirror.truncation.policy", "recreate")))
                .patch("/v1/mirrors/" + name + "/config")
                .then()
                .statusCode(200)
                .body("config.'mirror.truncation.policy'", org.hamcrest.Matchers.equalTo("recreate"));

        // Then the owner applied it and every instance answers with the owner's view
        for (ServiceProcess instance : instances) {
            call(instance)
                    .get("/v1/mirrors/" + name)
                    .then()
                    .statusCode(200)
                    .body("runningOn", org.hamcrest.Matchers.equalTo(ownerId))
                    .body("config.'mirror.truncation.policy'", org.hamcrest.Matchers.equalTo("recreate"));
        }
        // and an error of the owner's stays what it is: an unknown mirror owned elsewhere is a 404, not a 500
        String unknown = nameOwnedBy(owner);
        call(instances.get(2))
                .get("/v1/mirrors/" + unknown)
                .then()
                .statusCode(404)
                .contentType("application/problem+json")
                .body("errorCode", org.hamcrest.Matchers.equalTo("UNKNOWN_CLUSTER_MIRROR"));
        assertThat(owner.log()).contains("forwardedBy=");
    }

    @Test
    @Order(3)
    void writesAndListsDuringARebalanceShouldBeAnsweredOr503WithRetryAfterNeverA500() throws Exception {
        // Given mirrors on every instance
        List<String> names = new ArrayList<>();
        for (int i = 0; i < 9; i++) {
            String name = uniqueName("rebalance");
            names.add(name);
            createVia(instances.get(0), name);
        }
        ServiceProcess leaving = instances.get(2);

        // When one instance stops while the others are asked to change every mirror, and to list them all, again and
        // again
        Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
        Map<Integer, AtomicInteger> listStatuses = new ConcurrentHashMap<>();
        List<String> bad = Collections.synchronizedList(new ArrayList<>());
        ScheduledExecutorService writers = Executors.newScheduledThreadPool(2);
        try {
            ScheduledFuture<?> writing = writers.scheduleWithFixedDelay(
                    () -> {
                        for (String name : names) {
                            Response response = call(instances.get(names.indexOf(name) % 2))
                                    .body(Map.of("set", Map.of("mirror.truncation.policy", "recreate")))
                                    .patch("/v1/mirrors/" + name + "/config");
                            answeredOr503(response, statuses, bad);
                        }
                        for (ServiceProcess instance : instances.subList(0, 2)) {
                            Response listed = call(instance).get("/v1/mirrors");
                            if (answeredOr503(listed, listStatuses, bad)
                                    && !listed.jsonPath()
                                            .getList("mirrors.name")
                                            .containsAll(names)) {
                                bad.add("a list without every mirror: " + listed.asString());
                            }
                        }
                    },
                    0,
                    50,
                    TimeUnit.MILLISECONDS);
            leaving.stop();
            awaitMembers(2, instances.subList(0, 2));
            leaving.start();
            awaitMembers(3);
            int answered =
                    statuses.values().stream().mapToInt(AtomicInteger::get).sum();
            await("writes go on for two rounds after the rebalance settled")
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> statuses.values().stream()
                                    .mapToInt(AtomicInteger::get)
                                    .sum()
                            >= answered + 2 * names.size());
            writing.cancel(false);
        } finally {
            writers.shutdown();
            writers.awaitTermination(30, TimeUnit.SECONDS);
        }

        // Then every answer was the change applied or the whole list, or a 503 to retry
        assertThat(bad).isEmpty();
        assertThat(statuses).containsKey(200);
        assertThat(listStatuses).containsKey(200);
        System.out.printf("answers during the rebalance: changes %s, lists %s%n", statuses, listStatuses);
        names.forEach(name -> call(instances.get(0)).delete("/v1/mirrors/" + name));
    }

    /** Counts the answer's status; true for a 200, false (and what is wrong in {@code bad}) otherwise. */
    private static boolean answeredOr503(Response response, Map<Integer, AtomicInteger> statuses, List<String> bad) {
        statuses.computeIfAbsent(response.statusCode(), s -> new AtomicInteger())
                .incrementAndGet();
        if (response.statusCode() == 503
                && (response.header("Retry-After") == null
                        || !"COORDINATOR_NOT_AVAILABLE"
                                .equals(response.jsonPath().getString("errorCode")))) {
            bad.add("503 without Retry-After or errorCode: " + response.asString());
        } else if (response.statusCode() != 200 && response.statusCode() != 503) {
            bad.add(response.statusCode() + ": " + response.asString());
        }
        return response.statusCode() == 200;
    }

    @Test
    @Order(4)
    void killNineOfTheOwnerUnderALiveProducerShouldLoseAndDuplicateNothing() throws Exception {
        // Given a topic mirrored by a mirror of the third instance, fed by a live idempotent producer
        ServiceProcess owner = instances.get(2);
        try (LiveTopic live = new LiveTopic(nameOwnedBy(owner), "takeover", 4)) {
            // When the owner is killed
            String ownerId = idOf(owner);
            owner.kill();
            long killed = System.nanoTime();

            // Then another instance runs the mirror, MIRRORING again
            awaitRunningElsewhere(live.mirror, ownerId);
            awaitMirroringVia(instances.get(0), live.mirror, live.topic, live.partitions, Duration.ofSeconds(60));
            String runningOn = call(instances.get(0))
                    .get("/v1/mirrors/" + live.mirror)
                    .then()
                    .statusCode(200)
                    .extract()
                    .path("runningOn");
            System.out.printf(
                    "kill -9 to MIRRORING on %s: %d ms%n",
                    runningOn, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed));
            assertThat(runningOn).isNotEqualTo(ownerId);
            live.stop();

            // and the destination holds the source's records, each once, at its offset
            live.assertCopiedRecordForRecord();
        }
        owner.start();
        awaitMembers(3);
    }

    @Test
    @Order(5)
    void aGracefulShutdownShouldHandItsMirrorsOverWithinSeconds() throws Exception {
        // Given a mirrored topic of the second instance
        ServiceProcess owner = instances.get(1);
        String mirror = nameOwnedBy(owner);
        String topic = uniqueName("handover");
        createMirrorAndTopic(mirror, topic, 2);
        Kafka.produce(bed.source().bootstrapServers(), topic, 500, "lz4", "before");
        call(instances.get(0))
                .body(Map.of("topics", List.of(topic)))
                .post("/v1/mirrors/" + mirror + "/topics:start")
                .then()
                .statusCode(200);
        awaitMirroringVia(instances.get(0), mirror, topic, 2, Duration.ofSeconds(60));
        String ownerId = idOf(owner);

        // When it stops gracefully (it leaves the group: no session timeout to wait for)
        owner.stop();

        // Then another instance runs the mirror and copies what comes next
        awaitRunningElsewhere(mirror, ownerId);
        awaitMirroringVia(instances.get(0), mirror, topic, 2, Duration.ofSeconds(15));
        Kafka.produce(bed.source().bootstrapServers(), topic, 500, "lz4", "after");
        target = instances.get(0);
        try {
            awaitConverged(mirror, topic);
        } finally {
            target = null;
        }
        assertThat(Kafka.readAll(bed.destination().bootstrapServers(), topic))
                .containsExactlyElementsOf(Kafka.readAll(bed.source().bootstrapServers(), topic));
        assertThat(owner.log()).contains("Gave up").contains("Left the state group");
        owner.start();
        awaitMembers(3);
    }

    @Test
    @Order(6)
    void anOwnerThatCannotBeReachedShouldBeAnswered503WithRetryAfterNaming() {
        // Given a fourth instance whose advertised URL nothing answers (firewalled, or a wrong address)
        String unreachable = "http://127.0.0.1:" + io.clustermirror.testbed.Ports.free();
        try (ServiceProcess fourth = bed.newService(
                "group-d-" + stateTopic,
                Map.of(
                        "mirror.state.topic.name",
                        stateTopic,
                        "mirror.state.topic.num.partitions",
                        String.valueOf(STATE_PARTITIONS),
                        "mirror.instance.advertised.url",
                        unreachable))) {
            fourth.start();
            List<ServiceProcess> all = new ArrayList<>(instances);
            all.add(fourth);
            awaitMembers(4, all);
            String name = nameOwnedBy(fourth);

            // When another instance is asked to create and describe one of its mirrors
            for (Response response : List.of(
                    call(instances.get(0))
                            .body(createBody(name, sourceConfig()))
                            .post("/v1/mirrors"),
                    call(instances.get(1)).get("/v1/mirrors/" + name))) {
                // Then the answer is 503 to retry, naming the owner and where it was looked for, never a 500
                assertThat(response.statusCode()).as(response.asString()).isEqualTo(503);
                assertThat(response.header("Retry-After")).isNotNull();
                assertThat(response.contentType()).startsWith("application/problem+json");
                assertThat(response.jsonPath().getString("errorCode")).isEqualTo("COORDINATOR_NOT_AVAILABLE");
                assertThat(response.jsonPath().getString("detail")).contains(unreachable);
            }
        }
        awaitMembers(3);
    }

    // ---------------------------------------------------------------- helpers

    private static RequestSpecification call(ServiceProcess instance) {
        return RestAssured.given().baseUri(instance.baseUri().toString()).contentType(ContentType.JSON);
    }

    /** Creates the mirror through the instance, retrying while the group is moving its partition (503). */
    private static void createVia(ServiceProcess instance, String name) {
        await("create " + name)
                .atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> {
                    int status = call(instance)
                            .body(createBody(name, sourceConfig()))
                            .post("/v1/mirrors")
                            .statusCode();
                    assertThat(status).isIn(201, 503);
                    return status == 201;
                });
    }

    /** The mirror, created through the first instance, and a source topic for it. */
    private static void createMirrorAndTopic(String mirror, String topic, int partitions) throws Exception {
        createVia(instances.get(0), mirror);
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, topic, partitions, Map.of());
        }
    }

    /** The list through the instance: the whole list, or 503 while a state partition moves (then asked again). */
    private static List<String> listVia(ServiceProcess instance) {
        return await("the list through " + instance.baseUri())
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(500))
                .until(
                        () -> {
                            Response response = call(instance).get("/v1/mirrors");
                            assertThat(response.statusCode()).isIn(200, 503);
                            if (response.statusCode() == 503) {
                                assertThat(response.header("Retry-After")).isNotNull();
                                return null;
                            }
                            return response.jsonPath().getList("mirrors.name", String.class);
                        },
                        Objects::nonNull);
    }

    private static JsonPath instancesOf(ServiceProcess instance) {
        return call(instance)
                .get("/v1/instances")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();
    }

    @Test
    @Order(7)
    void aZombiePausedPastTheSessionTimeoutShouldAppendNothingAfterTheTakeoverAndGiveItsMirrorsUp() throws Exception {
        // Given a topic mirrored by a mirror of the third instance, fed by a live idempotent producer
        ServiceProcess owner = instances.get(2);
        Map<Integer, Kafka.Stamp> zombieLast = new HashMap<>();
        try (LiveTopic live = new LiveTopic(nameOwnedBy(owner), "zombie", 4)) {
            String ownerId = idOf(owner);
            int logBefore = owner.log().length();

            // When its JVM is stopped (SIGSTOP) while it appends, past the session timeout, and the others take over
            owner.pause();
            // (what it had written to its sockets lands meanwhile: the destination's ends stop moving)
            AtomicReference<Map<Integer, Kafka.Stamp>> previous = new AtomicReference<>(Map.of());
            await("the destination's ends stop moving")
                    .pollInterval(Duration.ofMillis(500))
                    .atMost(Duration.ofSeconds(8))
                    .until(() -> {
                        Map<Integer, Kafka.Stamp> last = lastStamps(live);
                        return last.equals(previous.getAndSet(last));
                    });
            zombieLast.putAll(previous.get());
            // (the group is asked, not the mirror: a request forwarded to the stopped owner would wait for it)
            awaitMembers(2, instances.subList(0, 2));
            awaitRunningElsewhere(live.mirror, ownerId);
            awaitMirroringVia(instances.get(0), live.mirror, live.topic, live.partitions, Duration.ofSeconds(60));
            await("the new owner appends to every partition")
                    .atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> assertThat(lastStamps(live))
                            .allSatisfy((p, stamp) -> assertThat(stamp).isNotEqualTo(zombieLast.get(p))));
            // and then it runs again (SIGCONT), with whatever it had fetched and not yet appended
            owner.resume();

            // Then it gives the mirror up (it learns from the group that it lost its partitions)
            await("the zombie gives its mirrors up")
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> owner.log().substring(logBefore).contains("Gave up"));
            assertThat(owner.log().substring(logBefore)).contains(live.mirror);
            // and its log says that it appended nothing without its lease (the lapse, or its end)
            await("the zombie's log names its lapsed append lease")
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> owner.log().substring(logBefore).contains("the append lease"));
            awaitMembers(3);
            live.stop();

            // and the destination holds the source's records, each once, at its offset
            live.assertCopiedRecordForRecord();
            // and every batch after the takeover was written by the new owner: the partition's producer id under a
            // newer epoch, none under the zombie's
            for (int p = 0; p < live.partitions; p++) {
                Kafka.Stamp last = zombieLast.get(p);
                List<Kafka.Stamp> after = Kafka.stamps(bed.destination(), live.topic, p).stream()
                        .filter(stamp -> stamp.baseOffset() > last.lastOffset())
                        .toList();
                assertThat(after).as("partition %d after the takeover", p).isNotEmpty();
                assertThat(after)
                        .as(
                                "partition %d after the takeover at %d (the zombie's producer id %d, epoch %d)",
                                p, last.lastOffset() + 1, last.producerId(), last.producerEpoch())
                        .allSatisfy(stamp -> {
                            assertThat(stamp.producerId()).isEqualTo(last.producerId());
                            assertThat(stamp.producerEpoch()).isGreaterThan(last.producerEpoch());
                        });
            }
        }
    }

    @Test
    @Order(8)
    void aTopicThatAMirrorOfAnotherInstanceMirrorsShouldBeRefusedToAnotherMirrorAlsoWithAdoptExisting()
            throws Exception {
        // Given a topic mirrored by a mirror of the first instance
        String first = nameOwnedBy(instances.get(0));
        String topic = uniqueName("one-writer");
        createMirrorAndTopic(first, topic, 2);
        call(instances.get(0))
                .body(Map.of("topics", List.of(topic)))
                .post("/v1/mirrors/" + first + "/topics:start")
                .then()
                .statusCode(200)
                .body("topics[0].result", org.hamcrest.Matchers.equalTo("STARTED"));
        awaitMirroringVia(instances.get(0), first, topic, 2, Duration.ofSeconds(60));

        // When a mirror of the second instance is asked to start it, without and with adoptExisting (through the third)
        String second = nameOwnedBy(instances.get(1));
        createVia(instances.get(2), second);
        for (boolean adopt : List.of(false, true)) {
            call(instances.get(2))
                    .body(Map.of("topics", List.of(topic), "adoptExisting", adopt))
                    .post("/v1/mirrors/" + second + "/topics:start")
                    .then()
                    .statusCode(200)
                    // Then it is refused as the topic of another mirror, named, whichever instance runs that one
                    .body("topics[0].errorCode", org.hamcrest.Matchers.equalTo("TOPIC_ALREADY_IN_CLUSTER_MIRROR"))
                    .body(
                            "topics[0].error",
                            org.hamcrest.Matchers.equalTo("topic is already mirrored by mirror '" + first + "'"));
        }
        // and the second mirror holds none of it, while the first still mirrors it
        call(instances.get(2))
                .get("/v1/mirrors/" + second + "/topics/" + topic)
                .then()
                .statusCode(404)
                .body("errorCode", org.hamcrest.Matchers.equalTo("TOPIC_NOT_IN_CLUSTER_MIRROR"));
        awaitMirroringVia(instances.get(1), first, topic, 2, Duration.ofSeconds(5));
        call(instances.get(0)).delete("/v1/mirrors/" + second);
        call(instances.get(0)).delete("/v1/mirrors/" + first);
    }

    /** The last batch of each partition of the live topic on the destination. */
    private static Map<Integer, Kafka.Stamp> lastStamps(LiveTopic live) throws IOException {
        Map<Integer, Kafka.Stamp> last = new HashMap<>();
        for (int p = 0; p < live.partitions; p++) {
            List<Kafka.Stamp> stamps = Kafka.stamps(bed.destination(), live.topic, p);
            assertThat(stamps).as("partition %d was mirrored", p).isNotEmpty();
            last.put(p, stamps.get(stamps.size() - 1));
        }
        return last;
    }

    /**
     * A fresh topic of {@code mirror} (created through the first instance) fed by a live idempotent producer, 10
     * records every 20 ms, and MIRRORING.
     */
    private static final class LiveTopic implements AutoCloseable {
        final String mirror;
        final String topic;
        final int partitions;
        private final List<Future<RecordMetadata>> sends = new ArrayList<>();
        private final ScheduledExecutorService producing = Executors.newSingleThreadScheduledExecutor();
        private final KafkaProducer<byte[], byte[]> producer;
        private final ScheduledFuture<?> ticks;

        LiveTopic(String mirror, String prefix, int partitions) throws Exception {
            this.mirror = mirror;
            this.topic = uniqueName(prefix);
            this.partitions = partitions;
            createMirrorAndTopic(mirror, topic, partitions);
            producer = Kafka.producer(bed.source().bootstrapServers(), Map.of());
            AtomicInteger produced = new AtomicInteger();
            ticks = producing.scheduleAtFixedRate(
                    () -> produce(producer, topic, produced, sends), 0, 20, TimeUnit.MILLISECONDS);
            call(instances.get(0))
                    .body(Map.of("topics", List.of(topic)))
                    .post("/v1/mirrors/" + mirror + "/topics:start")
                    .then()
                    .statusCode(200);
            awaitMirroringVia(instances.get(0), mirror, topic, partitions, Duration.ofSeconds(60));
        }

        /** Stops producing, and waits until every record sent is acknowledged. */
        void stop() throws Exception {
            ticks.cancel(false);
            producer.flush();
            synchronized (sends) {
                for (Future<RecordMetadata> send : sends) {
                    send.get();
                }
            }
        }

        /** Once caught up, the destination holds the source's records, each once, at its offset. */
        void assertCopiedRecordForRecord() throws Exception {
            target = instances.get(0);
            try {
                awaitConverged(mirror, topic);
                assertThat(describeTopic(mirror, topic).getList("partitions.error", String.class))
                        .containsOnlyNulls();
            } finally {
                target = null;
            }
            assertThat(Kafka.readAll(bed.destination().bootstrapServers(), topic))
                    .containsExactlyElementsOf(Kafka.readAll(bed.source().bootstrapServers(), topic));
        }

        @Override
        public void close() {
            producing.shutdownNow();
            producer.close();
        }
    }

    private static String idOf(ServiceProcess instance) {
        return instancesOf(instance).getString("answeredBy");
    }

    private static void awaitMembers(int count) {
        awaitMembers(count, instances);
    }

    /** Until each of these instances lists {@code count} members that own every state partition between them. */
    private static void awaitMembers(int count, List<ServiceProcess> among) {
        await(count + " members")
                .atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(500))
                .untilAsserted(() -> {
                    for (ServiceProcess instance : among) {
                        JsonPath members = instancesOf(instance);
                        assertThat(members.getList("instances")).hasSize(count);
                        assertThat(members.getList("instances.statePartitions.flatten()"))
                                .hasSize(STATE_PARTITIONS);
                    }
                });
    }

    /** Until each instance runs 10 ± 2 of {@code total} mirrors (each counted by the instance itself). */
    private static void awaitSpread(List<ServiceProcess> among, int total) {
        int each = total / among.size();
        await("the mirrors spread over " + among.size() + " instances")
                .atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofSeconds(1))
                .untilAsserted(() -> {
                    Map<String, Integer> counts = new HashMap<>();
                    for (ServiceProcess instance : among) {
                        JsonPath members = instancesOf(instance);
                        String self = members.getString("answeredBy");
                        counts.put(self, members.getInt("instances.find { it.id == '" + self + "' }.mirrors"));
                    }
                    assertThat(counts.values().stream()
                                    .mapToInt(Integer::intValue)
                                    .sum())
                            .as("%s", counts)
                            .isGreaterThanOrEqualTo(total);
                    assertThat(counts.values())
                            .as("%s", counts)
                            .allSatisfy(c -> assertThat(c).isBetween(each - 2, each + 2));
                });
    }

    /** A fresh mirror name whose state partition the instance owns now. */
    private static String nameOwnedBy(ServiceProcess instance) {
        return nameOwnedBy(instancesOf(instance), STATE_PARTITIONS, "owned");
    }

    private static void awaitMirroringVia(
            ServiceProcess instance, String mirror, String topic, int partitions, Duration within) {
        await(topic + " MIRRORING")
                .atMost(within)
                .pollInterval(Duration.ofMillis(250))
                .untilAsserted(() -> {
                    Response response = call(instance).get("/v1/mirrors/" + mirror + "/topics/" + topic);
                    assertThat(response.statusCode()).isEqualTo(200);
                    assertThat(response.jsonPath().getList("partitions.state", String.class))
                            .hasSize(partitions)
                            .containsOnly("MIRRORING");
                });
    }

    private static void awaitRunningElsewhere(String mirror, String formerOwner) {
        await(mirror + " running on another instance")
                .atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(250))
                .untilAsserted(() -> {
                    Response response = call(instances.get(0)).get("/v1/mirrors/" + mirror);
                    assertThat(response.statusCode()).isEqualTo(200);
                    assertThat(response.jsonPath().getString("runningOn")).isNotEqualTo(formerOwner);
                });
    }

    /** 10 records with keys and headers over the partitions (one tick of the live producer). */
    private static void produce(
            KafkaProducer<byte[], byte[]> producer,
            String topic,
            AtomicInteger produced,
            List<Future<RecordMetadata>> sends) {
        for (int n = 0; n < 10; n++) {
            int i = produced.getAndIncrement();
            ProducerRecord<byte[], byte[]> record =
                    new ProducerRecord<>(topic, ("key-" + (i % 100)).getBytes(), ("value-" + i).getBytes());
            record.headers().add("i", Integer.toString(i).getBytes());
            synchronized (sends) {
                sends.add(producer.send(record));
            }
        }
    }
}
