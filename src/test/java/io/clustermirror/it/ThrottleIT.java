package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.clustermirror.testbed.ServiceProcess;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.UnaryOperator;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 18, {@code mirror.replication.throttled.rate}: the instance's replication budget, set and changed at runtime
 * over {@code /v1/config} (mirror-admin only, audited, kept in {@code __mirror_state} across a restart), honoured within
 * ±10% as the destination broker measures it (its log sizes), and lifted again. On a service of its own (Basic
 * authentication, its own state topic), so that no other test runs under its throttle.
 */
class ThrottleIT extends ServiceIT {

    private static final String RATE = "mirror.replication.throttled.rate";
    private static final String UNLIMITED = Long.toString(Long.MAX_VALUE);
    private static final int MiB = 1 << 20;
    /** Enough that neither measured window can run dry: 2 MiB/s for ~33 s, 4 MiB/s for ~13 s, and a rest to catch up. */
    private static final int BACKLOG_MiB = 160;

    private static ServiceProcess service;
    private static AccessMatrix http;

    @BeforeAll
    static void startAServiceOfItsOwn() {
        Map<String, String> props = new HashMap<>();
        props.put("mirror.http.auth.disabled", "false");
        props.put("mirror.state.topic.name", "__mirror_state_throttle");
        props.put("mirror.state.topic.num.partitions", "1");
        props.put("quarkus.security.users.embedded.plain-text", "true");
        for (String user : List.of("viewer", "operator", "admin")) {
            props.put("quarkus.security.users.embedded.users." + user, user + "-password");
            props.put("quarkus.security.users.embedded.roles." + user, "mirror-" + user);
        }
        service = bed.newService("throttle", props).start();
        http = new AccessMatrix(HttpClient.newHttpClient(), service.baseUri());
    }

    @AfterAll
    static void stopIt() {
        service.stop();
    }

    @Test
    void onlyAnAdminShouldChangeItAndBadInputShouldBeRefusedNamingTheKey() {
        JsonNode before = call("admin", "GET", "/v1/config", null).json();

        // unknown keys and values the rate does not take: 400 problem+json naming the key, nothing changed
        for (String bad : List.of("-1", "0", "two-megabytes", "1.5", "9223372036854775808")) {
            AccessMatrix.Answer answer = call("admin", "PUT", "/v1/config/" + RATE, "{\"value\":\"" + bad + "\"}");
            AccessMatrix.assertProblem(answer, 400, "INVALID_CONFIG", "rate " + bad);
            assertThat(answer.json().path("field").asText()).isEqualTo(RATE);
            assertThat(answer.json().path("detail").asText()).contains(RATE, "'" + bad + "'");
        }
        for (String method : List.of("PUT", "DELETE")) {
            AccessMatrix.Answer unknown =
                    call("admin", method, "/v1/config/mirror.replication.throttled.rat", "{\"value\":\"1\"}");
            AccessMatrix.assertProblem(unknown, 400, "INVALID_CONFIG", method + " of an unknown key");
            assertThat(unknown.json().path("field").asText()).isEqualTo("mirror.replication.throttled.rat");
            assertThat(unknown.json().path("detail").asText()).contains("Unknown service config", RATE);
        }
        AccessMatrix.assertProblem(
                call("admin", "PUT", "/v1/config/" + RATE, "{}"), 400, "INVALID_REQUEST", "no value");
        AccessMatrix.assertProblem(
                call("admin", "PUT", "/v1/config/" + RATE, "{\"value\":2097152}"),
                400,
                "INVALID_REQUEST",
                "a number where a string belongs");

        // callers other than a mirror-admin: 403 on the service-wide resources (whatever they may do to mirrors), no
        // credentials 401
        for (String user : List.of("viewer", "operator")) {
            for (String[] request : List.of(
                    new String[] {"GET", "/v1/instances", null},
                    new String[] {"GET", "/v1/config", null},
                    new String[] {"PUT", "/v1/config/" + RATE, "{\"value\":\"1\"}"},
                    new String[] {"DELETE", "/v1/config/" + RATE, null})) {
                AccessMatrix.assertProblem(
                        call(user, request[0], request[1], request[2]),
                        403,
                        "CLUSTER_MIRROR_AUTHORIZATION_FAILED",
                        user + " " + request[0] + " " + request[1]);
            }
        }
        AccessMatrix.assertProblem(
                http.call("PUT", "/v1/config/" + RATE, "{\"value\":\"1\"}", r -> r),
                401,
                "AUTHENTICATION_FAILED",
                "no credentials");

        assertThat(call("admin", "GET", "/v1/config", null).json()).isEqualTo(before);
        assertThat(service.log())
                .contains("principal=operator operation=ALTER mirror=- topics=- outcome=denied status=403 "
                        + "client=127.0.0.1 request=\"PUT /v1/config/" + RATE + "\"")
                .contains("principal=admin operation=ALTER mirror=- topics=- outcome=failed status=400 "
                        + "client=127.0.0.1 request=\"PUT /v1/config/" + RATE + "\"");
    }

    @Test
    void theRateShouldHoldWithinTenPercentChangeAtRuntimeSurviveARestartAndLift() throws Exception {
        // Given a backlog the throttled windows cannot finish, and no throttle yet
        String topic = uniqueName("throttled");
        String mirror = uniqueName("throttle");
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, topic, 4, Map.of());
        }
        produceBacklog(topic);
        JsonNode initial = entry();
        assertThat(initial.path("value").asText()).isEqualTo(UNLIMITED);
        assertThat(initial.path("source").asText()).isEqualTo("DEFAULT");

        // When an admin sets 2 MiB/s: kept in __mirror_state, so the instance applies it again after a restart
        AccessMatrix.Answer set = call("admin", "PUT", "/v1/config/" + RATE, "{\"value\":\"" + 2 * MiB + "\"}");
        assertThat(set.status()).as(set.body()).isEqualTo(200);
        assertThat(set.json().path("value").asText()).isEqualTo(Integer.toString(2 * MiB));
        assertThat(set.json().path("source").asText()).isEqualTo("DYNAMIC");
        assertThat(set.json().path("synonyms").findValuesAsText("source")).containsExactly("DYNAMIC", "DEFAULT");
        assertThat(service.log())
                .contains("principal=admin operation=ALTER mirror=- topics=- outcome=succeeded status=200 "
                        + "client=127.0.0.1 request=\"PUT /v1/config/" + RATE + "\"");
        service.stop();
        service.start();
        assertThat(entry().path("source").asText()).isEqualTo("DYNAMIC");
        assertThat(metrics()).contains("cluster_mirror_replication_throttled_rate " + (double) (2 * MiB));
        // and 30 idle mirrors next to it, whose Fetches wait on the source for data that does not come
        startIdleMirrors(30);
        http.createMirror(mirror, bed.source().bootstrapServers(), Map.of(), as("admin"));
        AccessMatrix.Answer started =
                call("admin", "POST", "/v1/mirrors/" + mirror + "/topics:start", "{\"topics\":[\"" + topic + "\"]}");
        assertThat(started.status()).as(started.body()).isEqualTo(200);

        try (Admin source = bed.sourceAdmin();
                Admin destination = bed.destinationAdmin()) {
            long total = logBytes(source, topic).bytes();
            assertThat(total).isGreaterThan(BACKLOG_MiB * (long) MiB);
            await("first bytes on the destination")
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> logBytes(destination, topic).bytes() > 0);

            // Then over 30 s the destination grows by 2 MiB/s, ±10%
            assertRate(destination, topic, total, 2.0 * MiB, Duration.ofSeconds(30));

            // When changed at runtime to 4 MiB/s, then the new rate over 10 s
            AccessMatrix.Answer doubled = call("admin", "PUT", "/v1/config/" + RATE, "{\"value\":\"" + 4 * MiB + "\"}");
            assertThat(doubled.status()).as(doubled.body()).isEqualTo(200);
            assertRate(destination, topic, total, 4.0 * MiB, Duration.ofSeconds(10));
            assertThat(metrics()).contains("cluster_mirror_replication_throttled_rate " + (double) (4 * MiB));
            assertThat(throttleTimeSeconds())
                    .as("fetches waited for the budget")
                    .isGreaterThan(10);

            // When deleted: back to the default, unlimited (in force on this instance once the answer comes), and the
            // rest is copied far faster than the last limit
            AccessMatrix.Answer deleted = call("admin", "DELETE", "/v1/config/" + RATE, null);
            Sample lifted = logBytes(destination, topic);
            assertThat(deleted.status()).as(deleted.body()).isEqualTo(200);
            assertThat(deleted.json().path("source").asText()).isEqualTo("DEFAULT");
            assertThat(deleted.json().path("value").asText()).isEqualTo(UNLIMITED);
            long rest = total - lifted.bytes();
            assertThat(rest).as("left to copy unthrottled").isGreaterThan(20L * MiB);
            await("caught up after the throttle was lifted")
                    .atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> logBytes(destination, topic).bytes() >= total);
            double seconds = (System.nanoTime() - lifted.atNanos()) / 1e9;
            System.out.printf("ThrottleIT: %d bytes caught up in %.1f s once unlimited%n", rest, seconds);
            // a copy still held to 4 MiB/s gives at most 4.4 (the ±10% above); the unthrottled one is bound by the
            // CPU, on two cores shared with another test JVM (decisions §54): 8-13 MB/s there, with this service's C1
            assertThat(rest / seconds).as("bytes/s once unlimited").isGreaterThan(1.5 * 4.0 * MiB);
        }
        assertThat(entry().path("source").asText()).isEqualTo("DEFAULT");
        assertThat(metrics()).contains("cluster_mirror_replication_throttled_rate " + (double) Long.MAX_VALUE);
    }

    /**
     * Mirrors of one partition each, copied and caught up (10 records), so that each mirror's Fetch is a long poll: the
     * source broker holds it until its wait ends. A long poll that held the budget through that wait took it from the
     * mirror with a backlog: with 30 of them it copied at 9% of the rate (3 were not enough to show it; ProgressIT, on
     * the shared service among the other tests' mirrors, once measured 8%).
     */
    private static void startIdleMirrors(int count) throws Exception {
        Map<String, String> topics = new HashMap<>(); // mirror -> its topic
        for (int i = 0; i < count; i++) {
            topics.put(uniqueName("idle"), uniqueName("idle"));
        }
        // the topics in one CreateTopics and their records through one producer (an Admin, a producer and a wait for
        // leaders per topic took most of the ~8 s these mirrors cost)
        try (Admin admin = bed.sourceAdmin()) {
            admin.createTopics(topics.values().stream()
                            .map(topic -> new NewTopic(topic, 1, (short) 1))
                            .toList())
                    .all()
                    .get();
            for (String topic : topics.values()) {
                Kafka.awaitLeaders(admin, topic);
            }
        }
        List<Future<RecordMetadata>> sends = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = Kafka.producer(
                bed.source().bootstrapServers(), Map.of(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4"))) {
            for (String topic : topics.values()) {
                for (int i = 0; i < 10; i++) {
                    sends.add(producer.send(new ProducerRecord<>(topic, ("idle-" + i).getBytes())));
                }
            }
            producer.flush();
            for (Future<RecordMetadata> send : sends) {
                send.get();
            }
        }
        for (Map.Entry<String, String> idle : topics.entrySet()) {
            http.createMirror(idle.getKey(), bed.source().bootstrapServers(), Map.of(), as("admin"));
            AccessMatrix.Answer started = call(
                    "admin",
                    "POST",
                    "/v1/mirrors/" + idle.getKey() + "/topics:start",
                    "{\"topics\":[\"" + idle.getValue() + "\"]}");
            assertThat(started.status()).as(started.body()).isEqualTo(200);
        }
        await("idle mirrors caught up")
                .atMost(Duration.ofSeconds(60))
                .untilAsserted(() -> topics.forEach((m, t) -> {
                    AccessMatrix.Answer described = call("admin", "GET", "/v1/mirrors/" + m + "/topics/" + t, null);
                    JsonNode partition = described.json().path("partitions").path(0);
                    assertThat(partition.path("state").asText())
                            .as(described.body())
                            .isEqualTo("MIRRORING");
                    assertThat(partition.path("lag").asLong(-1))
                            .as(described.body())
                            .isZero();
                }));
    }

    /** One measurement of a topic's log bytes on a broker (all partitions), at the middle of the call. */
    private record Sample(long atNanos, long bytes) {}

    /**
     * The destination's growth over {@code window}, starting 2 s after the change (the Fetch in flight and what it
     * brought land first), measured from the broker's own log sizes against this JVM's clock: the rate is
     * {@code expected} ±10%, and the backlog was not exhausted meanwhile.
     */
    private static void assertRate(Admin destination, String topic, long total, double expected, Duration window) {
        Sample applied = logBytes(destination, topic);
        Sample[] first = new Sample[1];
        Sample[] last = new Sample[1];
        await("a window of " + window)
                .atMost(window.plusSeconds(30))
                .pollInterval(Duration.ofMillis(250))
                .until(() -> {
                    Sample now = logBytes(destination, topic);
                    if (first[0] == null) {
                        if (now.atNanos() - applied.atNanos() >= 2_000_000_000L) {
                            first[0] = now;
                        }
                        return false;
                    }
                    last[0] = now;
                    return now.atNanos() - first[0].atNanos() >= window.toNanos();
                });
        double seconds = (last[0].atNanos() - first[0].atNanos()) / 1e9;
        double rate = (last[0].bytes() - first[0].bytes()) / seconds;
        assertThat(last[0].bytes()).as("the backlog lasted the whole window").isLessThan(total);
        System.out.printf(
                "ThrottleIT: %.0f bytes/s over %.1f s at a rate of %.0f bytes/s (%+.2f%%)%n",
                rate, seconds, expected, 100 * (rate - expected) / expected);
        assertThat(rate)
                .as("bytes/s over %.1f s (%d -> %d bytes)", seconds, first[0].bytes(), last[0].bytes())
                .isCloseTo(expected, within(expected * 0.10));
    }

    private static Sample logBytes(Admin admin, String topic) {
        try {
            long before = System.nanoTime();
            List<Integer> brokers =
                    admin.describeCluster().nodes().get().stream().map(Node::id).toList();
            long bytes = 0;
            for (Map<String, LogDirDescription> dirs :
                    admin.describeLogDirs(brokers).allDescriptions().get().values()) {
                for (LogDirDescription dir : dirs.values()) {
                    for (var replica : dir.replicaInfos().entrySet()) {
                        if (replica.getKey().topic().equals(topic)) {
                            bytes += replica.getValue().size();
                        }
                    }
                }
            }
            return new Sample((before + System.nanoTime()) / 2, bytes);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    /** {@value #BACKLOG_MiB} MiB of incompressible 1 KiB records over the 4 partitions, in 16 KiB batches. */
    private static void produceBacklog(String topic) throws Exception {
        Kafka.produceIncompressible(bed.source().bootstrapServers(), topic, 4, BACKLOG_MiB, 18);
    }

    private static JsonNode entry() {
        AccessMatrix.Answer list = call("admin", "GET", "/v1/config", null);
        assertThat(list.status()).as(list.body()).isEqualTo(200);
        for (JsonNode config : list.json().path("configs")) {
            if (config.path("name").asText().equals(RATE)) {
                return config;
            }
        }
        throw new AssertionError(RATE + " is not listed: " + list.body());
    }

    private static String metrics() {
        return http.call("GET", "/q/metrics", null, r -> r).body();
    }

    private static double throttleTimeSeconds() {
        return metrics()
                .lines()
                .filter(line -> line.startsWith("cluster_mirror_replication_throttle_time_seconds_total "))
                .mapToDouble(line -> Double.parseDouble(line.substring(line.indexOf(' ') + 1)))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no throttle time metric"));
    }

    private static AccessMatrix.Answer call(String user, String method, String path, String body) {
        return http.call(method, path, body, as(user));
    }

    private static UnaryOperator<HttpRequest.Builder> as(String user) {
        String token =
                Base64.getEncoder().encodeToString((user + ":" + user + "-password").getBytes(StandardCharsets.UTF_8));
        return r -> r.header("Authorization", "Basic " + token);
    }
}
