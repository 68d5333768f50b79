package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.clustermirror.embedded.KafkaBrokerProcess;
import io.clustermirror.testbed.CuttingProxy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.protocol.ApiKeys;
import org.junit.jupiter.api.Test;

/**
 * Decisions §36 on a real broker: LOG_TRUNCATION of many partitions reads the source with requests per broker, not per
 * partition. A source of its own sits behind a proxy that counts the requests of each API; a start of 200 partitions
 * (one broker leads them all) must cost a handful of ListOffsets, where a check per partition took two each (earliest
 * and latest), 400 in all.
 */
class TruncationRequestsIT extends ServiceIT {

    private static final int PARTITIONS = 200;

    @Test
    void aStartOfManyPartitionsShouldReadTheSourcesOffsetsWithAFewRequestsPerBroker() throws Exception {
        try (CuttingProxy proxy = new CuttingProxy()) {
            KafkaBrokerProcess source = bed.newCluster("truncation-requests-source", proxy.port());
            proxy.forwardTo(source.port());
            source.start(Duration.ofSeconds(120));
            String mirror = uniqueName("trunc-requests");
            String topic = uniqueName("trunc-requests");
            try {
                // Given a mirror of a 200-partition topic with records in each partition, through the proxy
                try (Admin admin =
                        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, source.bootstrapServers()))) {
                    Kafka.createTopic(admin, topic, PARTITIONS, Map.of());
                }
                Kafka.produce(source.bootstrapServers(), topic, 2 * PARTITIONS, "none", "trunc");
                api().body(createBody(mirror, Map.of("bootstrap.servers", "localhost:" + proxy.port())))
                        .post("/v1/mirrors")
                        .then()
                        .statusCode(201);
                int before = proxy.requests(ApiKeys.LIST_OFFSETS.id);

                // When the topic is started (the test watches the mirror's summary, which reads no cluster)
                startTopics(mirror, topic);
                await("all " + PARTITIONS + " partitions MIRRORING")
                        .atMost(Duration.ofSeconds(120))
                        .pollInterval(Duration.ofMillis(500))
                        .until(() -> mirroring(mirror) == PARTITIONS);
                int listOffsets = proxy.requests(ApiKeys.LIST_OFFSETS.id) - before;

                // Then the source answered a few ListOffsets for all of them: the checks' batch (earliest and latest),
                // and the recovery-point sampler's one every 5 s
                System.out.printf(
                        "TruncationRequestsIT: %d ListOffsets to the source for LOG_TRUNCATION of %d partitions%n",
                        listOffsets, PARTITIONS);
                assertThat(listOffsets)
                        .as(
                                "ListOffsets requests to the one source broker while %d partitions went through "
                                        + "LOG_TRUNCATION",
                                PARTITIONS)
                        .isLessThanOrEqualTo(20);
                awaitConverged(mirror, topic);
            } finally {
                api().delete("/v1/mirrors/" + mirror);
                source.close();
            }
        }
    }

    /** The mirror's MIRRORING partitions, from its summary (no cluster read, so no request through the proxy). */
    private static int mirroring(String mirror) {
        List<Map<String, Object>> topics = api().get("/v1/mirrors/" + mirror)
                .then()
                .statusCode(200)
                .extract()
                .jsonPath()
                .getList("topics");
        return topics.stream()
                .mapToInt(t -> ((Map<?, ?>) t.get("states")).get("MIRRORING") instanceof Number n ? n.intValue() : 0)
                .sum();
    }
}
