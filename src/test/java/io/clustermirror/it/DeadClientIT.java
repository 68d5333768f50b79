package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.clustermirror.embedded.KafkaBrokerProcess;
import io.clustermirror.testbed.CorruptingProxy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A source that answers with a wrong correlation id (a broken or fake broker) kills kafka-clients' network clients: the
 * mirror's source Admin thread and its data plane's fetch client. The partitions must fail with the reason (not stay
 * MIRRORING with a growing lag), and recover must get them mirroring again without a restart: the dead clients are
 * replaced.
 */
class DeadClientIT extends ServiceIT {

    private static CorruptingProxy proxy;
    private static KafkaBrokerProcess broken;

    @BeforeAll
    static void startABrokerBehindAProxy() throws Exception {
        proxy = new CorruptingProxy();
        broken = bed.newCluster("behind-proxy", proxy.port());
        proxy.forwardTo(broken.port());
        broken.start(Duration.ofSeconds(120));
    }

    @AfterAll
    static void stopIt() throws Exception {
        proxy.close();
        broken.close();
    }

    private static String throughProxy() {
        return "localhost:" + proxy.port();
    }

    @Test
    void aSourceAnsweringWithAWrongCorrelationIdShouldFailThePartitionsAndRecoverShouldReplaceTheDeadClients()
            throws Exception {
        // Given a topic mirrored from the source behind the proxy
        String mirror = uniqueName("deadclient");
        String topic = uniqueName("deadclient");
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, throughProxy()))) {
            Kafka.createTopic(admin, topic, 2, Map.of());
        }
        Kafka.produce(throughProxy(), topic, 50, "none", "before");
        api().body(createBody(mirror, Map.of("bootstrap.servers", throughProxy())))
                .post("/v1/mirrors")
                .then()
                .statusCode(201);
        startTopics(mirror, topic);
        awaitConverged(mirror, topic);

        // When the source answers with wrong correlation ids (the fetches meet it first)
        proxy.corrupt(true);
        try {
            // Then the partitions fail, saying why, instead of staying MIRRORING
            awaitAllPartitions(mirror, topic, "FAILED");
            assertThat(describeTopic(mirror, topic).getList("partitions.error", String.class))
                    .allSatisfy(error -> assertThat(error)
                            .contains("the data plane's fetcher thread died")
                            .contains("CorrelationIdMismatchException"));
            assertThat(metric("cluster_mirror_dead_loops_total", mirror)).isGreaterThanOrEqualTo(1.0);
            String readiness = api().get("/q/health/ready").then().extract().asString();
            assertThat(readiness).contains("\"deadLoops\"").contains("fetcher thread died");

            // and a recover while it still does builds a new data plane whose source Admin meets it too (LOG_TRUNCATION
            // asks the source for its offsets): that Admin's network thread dies. The Admin is shared by the mirrors of
            // one source connection and its client id names none of them: the log says which one this mirror uses
            // (only this mirror reaches the source through the proxy, so each of those Admins is its alone)
            topicVerb(mirror, "recover", topic);
            await("the source Admin's thread dies")
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> sourceAdminsOf(mirror).stream()
                            .anyMatch(id -> bed.service()
                                    .log()
                                    .contains(
                                            "Uncaught exception in thread 'kafka-admin-client-thread | " + id + "'")));
            awaitAllPartitions(mirror, topic, "FAILED");
        } finally {
            proxy.corrupt(false);
        }

        // Then, once the source answers properly, recover mirrors again: the dead Admin is replaced on its next call,
        // the new records arrive, and the lag is known and 0
        topicVerb(mirror, "recover", topic);
        Kafka.produce(throughProxy(), topic, 50, "none", "after");
        awaitConverged(mirror, topic);
        assertThat(sourceAdminsOf(mirror))
                .anyMatch(id -> bed.service().log().contains("Admin client " + id + ": its network thread"));
        try (Admin admin = bed.destinationAdmin()) {
            assertThat(Kafka.total(Kafka.offsets(admin, topic, OffsetSpec.latest())))
                    .isEqualTo(100);
        }
        List<Integer> sourceOffsets = describeTopic(mirror, topic).getList("partitions.sourceOffset", Integer.class);
        assertThat(sourceOffsets)
                .hasSize(2)
                .allSatisfy(offset -> assertThat(offset).isPositive());
    }

    /** The client ids of the source Admins the mirror has used, as the service logs them. */
    private static Set<String> sourceAdminsOf(String mirror) {
        Matcher m = Pattern.compile(
                        "Mirror " + Pattern.quote(mirror) + " uses source Admin (cluster-mirror-source-\\d+) ")
                .matcher(bed.service().log());
        Set<String> ids = new TreeSet<>();
        while (m.find()) {
            ids.add(m.group(1));
        }
        return ids;
    }

    private static double metric(String name, String mirror) {
        String body = api().get("/q/metrics").then().statusCode(200).extract().asString();
        return body.lines()
                .filter(line -> line.startsWith(name + "{") && line.contains("mirror=\"" + mirror + "\""))
                .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
                .sum();
    }
}
