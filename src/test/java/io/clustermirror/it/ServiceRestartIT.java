package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.hamcrest.Matchers.equalTo;

import io.clustermirror.testbed.ServiceProcess;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/** Mirrors live in {@code __mirror_state}: a new service process, after a crash or a clean stop, shows the same mirrors. */
class ServiceRestartIT extends ServiceIT {

    @Test
    void mirrorsShouldSurviveKillNineAndCleanRestart() {
        // Given
        String kept = uniqueName("kept");
        String altered = uniqueName("altered");
        String deleted = uniqueName("deleted");
        createMirror(kept);
        createMirror(altered);
        createMirror(deleted);
        api().body(Map.of("set", Map.of("mirror.truncation.policy", "recreate", "sasl.jaas.config", "x")))
                .patch("/v1/mirrors/" + altered + "/config")
                .then()
                .statusCode(200);
        api().delete("/v1/mirrors/" + deleted).then().statusCode(204);
        var keptBefore =
                stored(api().get("/v1/mirrors/" + kept).then().extract().asString());
        var alteredBefore =
                stored(api().get("/v1/mirrors/" + altered).then().extract().asString());
        ServiceProcess service = bed.service();

        // When: a crash, then a new process
        service.kill();
        assertThat(service.isAlive()).isFalse();
        service.start();

        // Then
        assertThat(mirrorNames()).contains(kept, altered).doesNotContain(deleted);
        assertThat(stored(api().get("/v1/mirrors/" + kept)
                        .then()
                        .statusCode(200)
                        .extract()
                        .asString()))
                .isEqualTo(keptBefore);
        assertThat(stored(api().get("/v1/mirrors/" + altered)
                        .then()
                        .statusCode(200)
                        .body("config.'mirror.truncation.policy'", equalTo("recreate"))
                        .body("config.'sasl.jaas.config'", equalTo("[hidden]"))
                        .extract()
                        .asString()))
                .isEqualTo(alteredBefore);

        // When: a clean stop and start
        service.stop();
        service.start();

        // Then
        assertThat(stored(api().get("/v1/mirrors/" + kept)
                        .then()
                        .statusCode(200)
                        .extract()
                        .asString()))
                .isEqualTo(keptBefore);
        assertThat(stored(api().get("/v1/mirrors/" + altered)
                        .then()
                        .statusCode(200)
                        .extract()
                        .asString()))
                .isEqualTo(alteredBefore);
    }

    @Test
    void anInstanceShouldFenceTheSingleStateWriterOfEarlierReleases() throws Exception {
        // Given the one transactional writer that releases before the state group used for the whole state topic
        String name = uniqueName("fence");
        String scratch = uniqueName("fence-scratch");
        createMirror(name);
        try (Admin admin = bed.destinationAdmin()) {
            Kafka.createTopic(admin, scratch, 1, Map.of());
        }
        ServiceProcess service = bed.service();
        try (KafkaProducer<byte[], byte[]> earlier = new KafkaProducer<>(
                Map.of(
                        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                        bed.destination().bootstrapServers(),
                        ProducerConfig.TRANSACTIONAL_ID_CONFIG,
                        "cluster-mirror-coordinator-" + STATE_TOPIC,
                        ProducerConfig.MAX_BLOCK_MS_CONFIG,
                        10_000),
                new ByteArraySerializer(),
                new ByteArraySerializer())) {
            earlier.initTransactions();

            // When this release starts on the same state topic
            service.stop();
            service.start();

            // Then that writer can no longer write, and the mirrors are all there
            earlier.beginTransaction();
            earlier.send(new ProducerRecord<>(scratch, new byte[0], new byte[0])); // never the state topic itself
            // (fenced: the produce is refused for its old epoch, or the commit for the bumped one)
            assertThatThrownBy(earlier::commitTransaction)
                    .isInstanceOfAny(ProducerFencedException.class, InvalidProducerEpochException.class);
        }
        api().get("/v1/mirrors/" + name).then().statusCode(200);
    }
}
