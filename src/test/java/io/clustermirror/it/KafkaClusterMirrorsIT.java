package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.clustermirror.testbed.Ports;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kafka-cluster-mirrors CLI against the real service (the test bed's, open): every verb in this JVM through its
 * picocli entry point, and the built jar and {@code bin/kafka-cluster-mirrors} as child processes.
 */
class KafkaClusterMirrorsIT extends ServiceIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private String url;

    @BeforeEach
    void url() {
        url = bed.service().baseUri().toString();
    }

    /** The CLI in this JVM against the test bed's service. */
    private Cli.Run cli(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--url", url));
        return Cli.inProcess(all.toArray(String[]::new));
    }

    @Test
    void everyVerbShouldDriveTheRealService() throws Exception {
        String mirror = uniqueName("cli");
        String topic = uniqueName("cli");
        String promoted = uniqueName("cli-promote");
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, topic, 2, Map.of());
            Kafka.createTopic(admin, promoted, 1, Map.of());
        }
        Kafka.produce(bed.source().bootstrapServers(), topic, 100, "none", "cli");
        Kafka.produce(bed.source().bootstrapServers(), promoted, 10, "none", "cli");
        Path config = Files.writeString(
                dir.resolve("mirror.properties"),
                "bootstrap.servers=" + bed.source().bootstrapServers() + "\nmirror.groups.exclude=internal-.*\n");

        // --create, --list
        Cli.Run created = cli("--create", "--mirror", mirror, "--mirror-config", config.toString());
        assertThat(created.exit()).as(created.toString()).isZero();
        assertThat(created.out())
                .isEqualTo("Created cluster mirror " + mirror + " of source cluster " + sourceClusterId() + " ("
                        + bed.source().bootstrapServers() + ")\n");
        Cli.Run list = cli("--list");
        assertThat(list.exit()).as(list.toString()).isZero();
        assertThat(list.outLines().get(0)).matches("MIRROR +TOPICS +SOURCE-CLUSTER-ID +SOURCE-BOOTSTRAP-SERVER");
        assertThat(list.outLines())
                .anySatisfy(line -> assertThat(line)
                        .matches(Pattern.quote(mirror) + " +0 +" + Pattern.quote(sourceClusterId()) + " +"
                                + Pattern.quote(bed.source().bootstrapServers())));

        // --alter: set from a file, then remove
        Path alter = Files.writeString(dir.resolve("alter.properties"), "mirror.truncation.policy=recreate\n");
        Cli.Run altered = cli("--alter", "--mirror", mirror, "--mirror-config", alter.toString());
        assertThat(altered.out())
                .as(altered.toString())
                .isEqualTo("Altered cluster mirror " + mirror + ": set mirror.truncation.policy\n");
        assertThat(config(mirror)).containsEntry("mirror.truncation.policy", "recreate");
        Cli.Run removed =
                cli("--alter", "--mirror", mirror, "--delete-config", "mirror.truncation.policy,mirror.groups.exclude");
        assertThat(removed.exit()).as(removed.toString()).isZero();
        assertThat(config(mirror)).doesNotContainKeys("mirror.truncation.policy", "mirror.groups.exclude");

        // --start: one outcome per topic; a topic the source does not have is that topic's error, exit code 1
        Cli.Run started = cli("--start", "--mirror", mirror, "--topics", topic + "," + promoted);
        assertThat(started.exit()).as(started.toString()).isZero();
        assertThat(started.outLines())
                .containsExactlyInAnyOrder(topic + ": STARTED (2 partitions)", promoted + ": STARTED (1 partitions)");
        String missing = uniqueName("cli-missing");
        Cli.Run partly = cli("--start", "--mirror", mirror, "--topics", missing);
        assertThat(partly.exit()).as(partly.toString()).isEqualTo(1);
        assertThat(partly.err()).startsWith("Error: UNKNOWN_TOPIC_OR_PARTITION for topic " + missing + ": ");
        assertThat(partly.err().lines()).hasSize(1);

        // --describe, the table: the KIP's columns and ETA, until every partition is MIRRORING with the records copied
        Awaitility.await(topic + " mirrored, as --describe shows it")
                .atMost(Duration.ofSeconds(120))
                .pollInterval(Duration.ofMillis(500))
                .untilAsserted(() -> assertThat(describe(mirror, topic).outLines())
                        .containsExactly(
                                "MIRROR" + pad(mirror, "MIRROR") + "TOPIC" + pad(topic, "TOPIC")
                                        + "PARTITION  SOURCE-OFFSET  DESTINATION-OFFSET  LAG  STATE      ETA  RPO",
                                mirror + "  " + topic + "  0          " + row(records(topic, 0)),
                                mirror + "  " + topic + "  1          " + row(records(topic, 1))));

        // --describe --json: the API's describeMirrorTopic answers, as one array
        Cli.Run json = cli("--describe", "--mirror", mirror, "--json");
        assertThat(json.exit()).as(json.toString()).isZero();
        JsonNode described = JSON.readTree(json.out());
        assertThat(described.isArray()).isTrue();
        assertThat(described).hasSize(2);
        JsonNode first = described.get(0).path("topic").asText().equals(topic) ? described.get(0) : described.get(1);
        assertThat(first.path("mirror").asText()).isEqualTo(mirror);
        assertThat(first.path("partitions")).hasSize(2).allSatisfy(p -> {
            assertThat(p.path("state").asText()).isEqualTo("MIRRORING");
            assertThat(p.path("lag").asLong()).isZero();
        });
        assertThat(first.path("partitions").get(0).path("destinationOffset").asLong()
                        + first.path("partitions")
                                .get(1)
                                .path("destinationOffset")
                                .asLong())
                .isEqualTo(100);

        // --describe --failed: none failed, the header alone
        Cli.Run failed = cli("--describe", "--mirror", mirror, "--failed");
        assertThat(failed.outLines())
                .as(failed.toString())
                .singleElement()
                .satisfies(header -> assertThat(header).endsWith("STATE  ETA  RPO  ERROR"));

        // --delete while topics are mirrored: the service's 409, one line naming its errorCode
        Cli.Run notEmpty = cli("--delete", "--mirror", mirror);
        assertThat(notEmpty.exit()).isEqualTo(1);
        assertThat(notEmpty.err()).startsWith("Error: CLUSTER_MIRROR_NOT_EMPTY (409): ");
        assertThat(notEmpty.err().lines()).hasSize(1);
        assertThat(notEmpty.out()).isEmpty();

        // --pause, --resume
        Cli.Run paused = cli("--pause", "--mirror", mirror, "--topics", topic);
        assertThat(paused.exit()).as(paused.toString()).isZero();
        assertThat(paused.out()).startsWith(topic + ": PAUS");
        awaitStates(mirror, topic, "PAUSED");
        Cli.Run resumed = cli("--resume", "--mirror", mirror, "--topics", topic);
        assertThat(resumed.exit()).as(resumed.toString()).isZero();
        awaitStates(mirror, topic, "MIRRORING");

        // --promote: the test bed's source has no authorizer, so it cannot be fenced (the service's 409); without the
        // fence (its producer has stopped) the topic is promoted
        Awaitility.await(promoted + " mirrored")
                .atMost(Duration.ofSeconds(120))
                .pollInterval(Duration.ofMillis(500))
                .untilAsserted(() ->
                        assertThat(describe(mirror, promoted).outLines().get(1)).endsWith(row(10)));
        Cli.Run unfenced = cli("--promote", "--mirror", mirror, "--topics", promoted);
        assertThat(unfenced.exit()).as(unfenced.toString()).isEqualTo(1);
        assertThat(unfenced.err()).startsWith("Error: SECURITY_DISABLED (409): ");
        Cli.Run promote = cli(
                "--promote", "--mirror", mirror, "--topics", promoted, "--no-fence-source", "--timeout-ms", "30000");
        assertThat(promote.exit()).as(promote.toString()).isZero();
        assertThat(promote.out()).startsWith(promoted + ": PROMOTED (1 partitions, ");
        awaitStates(mirror, promoted, "STOPPED");

        // --stop, then --delete
        Cli.Run stopped = cli("--stop", "--mirror", mirror, "--topics", topic);
        assertThat(stopped.out()).as(stopped.toString()).isEqualTo(topic + ": STOPPING (2 partitions)\n");
        awaitStates(mirror, topic, "STOPPED");
        Cli.Run deleted = cli("--delete", "--mirror", mirror);
        assertThat(deleted.exit()).as(deleted.toString()).isZero();
        assertThat(deleted.out()).isEqualTo("Deleted cluster mirror " + mirror + "\n");
        assertThat(cli("--list").out()).doesNotContain(mirror);

        // --instances: the one instance, owning every state partition, marked as the one that answered
        Cli.Run instances = cli("--instances");
        assertThat(instances.exit()).as(instances.toString()).isZero();
        assertThat(instances.outLines().get(0)).matches("INSTANCE +URL +STATE-PARTITIONS +MIRRORS");
        assertThat(instances.outLines()).hasSize(2);
        assertThat(instances.outLines().get(1)).matches("\\S+ \\* +http://\\S+ +0-4 +\\d+");
    }

    @Test
    void theScriptShouldPrintAProblemAsOneLineNamingItsErrorCodeAndExit1() {
        String mirror = uniqueName("cli-missing");

        Cli.Run run = Cli.script("--describe", "--mirror", mirror, "--url", url);

        assertThat(run.exit()).as(run.toString()).isEqualTo(1);
        assertThat(run.err())
                .isEqualTo("Error: UNKNOWN_CLUSTER_MIRROR (404): Cluster mirror '" + mirror + "' does not exist\n");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void theJarShouldRunAsAChildProcessAndSayWhenTheServiceIsNotThere() throws Exception {
        String mirror = uniqueName("cli-jar");
        createMirror(mirror);

        Cli.Run list = Cli.jar("--list", "--json", "--url", url);

        assertThat(list.exit()).as(list.toString()).isZero();
        assertThat(JSON.readTree(list.out()).path("mirrors"))
                .anySatisfy(m -> assertThat(m.path("name").asText()).isEqualTo(mirror));
        int closed = Ports.free();
        Cli.Run refused = Cli.jar("--list", "--url", "http://localhost:" + closed);
        assertThat(refused.exit()).as(refused.toString()).isEqualTo(3);
        assertThat(refused.err())
                .isEqualTo("Error: cannot reach http://localhost:" + closed + ": connection refused\n");
        Cli.Run usage = Cli.jar("--stop", "--mirror", mirror, "--url", url);
        assertThat(usage.exit()).as(usage.toString()).isEqualTo(2);
        assertThat(usage.err()).isEqualTo("Error: --stop needs --topics (see --help)\n");
        api().delete("/v1/mirrors/" + mirror).then().statusCode(204);
    }

    private Cli.Run describe(String mirror, String topic) {
        Cli.Run run = cli("--describe", "--mirror", mirror, "--topics", topic);
        assertThat(run.exit()).as(run.toString()).isZero();
        return run;
    }

    /** The rest of a MIRRORING row of a partition holding {@code records} records, caught up. */
    private static String row(long records) {
        String offset = String.valueOf(records);
        return offset + " ".repeat(15 - offset.length()) + offset + " ".repeat(20 - offset.length())
                + "0    MIRRORING  0s   0s"; // caught up: the service's ETA and RPO are 0
    }

    /** Spaces after a header so that its column is as wide as {@code value} plus the two-space gap. */
    private static String pad(String value, String header) {
        return " ".repeat(Math.max(value.length(), header.length()) - header.length() + 2);
    }

    private static long records(String topic, int partition) throws Exception {
        return Kafka.offsetsOf(bed.source(), topic).entrySet().stream()
                .filter(e -> e.getKey().partition() == partition)
                .mapToLong(Map.Entry::getValue)
                .sum();
    }

    /** Every partition of the topic in {@code state}, whatever its ETA and RPO (MIRRORING has them, STOPPED "-"). */
    private void awaitStates(String mirror, String topic, String state) {
        Awaitility.await(topic + " all " + state)
                .atMost(Duration.ofSeconds(120))
                .pollInterval(Duration.ofMillis(500))
                .untilAsserted(() -> assertThat(describe(mirror, topic).outLines().stream()
                                .skip(1)
                                .toList())
                        .isNotEmpty()
                        .allSatisfy(row -> assertThat(row).matches(".* " + state + " +\\S+ +\\S+")));
    }

    private static Map<String, String> config(String mirror) {
        return api().get("/v1/mirrors/" + mirror)
                .then()
                .statusCode(200)
                .extract()
                .jsonPath()
                .getMap("config");
    }
}
