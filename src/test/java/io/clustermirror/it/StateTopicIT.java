package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.testbed.ServiceProcess;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** How the service treats its state topic at start-up. */
class StateTopicIT extends ServiceIT {

    @Test
    void stateTopicShouldBeCreatedCompactedWithReplicationCappedToTheBrokers() throws Exception {
        try (Admin admin = bed.destinationAdmin()) {
            TopicDescription description = admin.describeTopics(List.of(STATE_TOPIC))
                    .allTopicNames()
                    .get()
                    .get(STATE_TOPIC);
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, STATE_TOPIC);
            Config config = admin.describeConfigs(Set.of(resource)).all().get().get(resource);

            assertThat(description.partitions()).hasSize(5);
            assertThat(description.partitions().get(0).replicas()).hasSize(1);
            assertThat(config.get("cleanup.policy").value()).isEqualTo("compact");
        }
        assertThat(bed.service().log())
                .contains("mirror.state.topic.replication.factor=3 but the destination has 1 broker(s)");
    }

    @ParameterizedTest(name = "cleanup.policy={0}")
    @ValueSource(strings = {"delete", "compact,delete"})
    void aStateTopicThatIsNotCompactedShouldStopTheServiceWithAReason(String policy) throws Exception {
        // Given
        String topic = uniqueName("__mirror_state_" + policy.replace(",", "_"));
        try (Admin admin = bed.destinationAdmin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(Map.of("cleanup.policy", policy))))
                    .all()
                    .get();
        }
        ServiceProcess service = bed.newService("refuses-" + topic, Map.of("mirror.state.topic.name", topic));

        // When
        service.launch();
        Integer exitCode = service.waitFor(Duration.ofSeconds(60));

        // Then
        assertThat(exitCode).as("exit code").isNotNull().isNotZero();
        assertThat(service.log())
                .contains("Refusing to start")
                .contains("cleanup.policy=" + policy)
                .contains("must be exactly 'compact'");
    }

    @Test
    void aRecordOfANewerFormatShouldStopTheServiceInsteadOfBeingMisread() throws Exception {
        // Given
        String topic = uniqueName("__mirror_state_future");
        try (Admin admin = bed.destinationAdmin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(Map.of("cleanup.policy", "compact"))))
                    .all()
                    .get();
        }
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(
                Map.of(
                        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                        bed.destination().bootstrapServers()),
                new StringSerializer(),
                new StringSerializer())) {
            producer.send(new ProducerRecord<>(topic, "{\"v\":99,\"kind\":\"mirror\",\"mirror\":\"m\"}", "{\"v\":99}"))
                    .get();
        }
        ServiceProcess service = bed.newService("refuses-" + topic, Map.of("mirror.state.topic.name", topic));

        // When
        service.launch();
        Integer exitCode = service.waitFor(Duration.ofSeconds(60));

        // Then
        assertThat(exitCode).as("exit code").isNotNull().isNotZero();
        assertThat(service.log()).contains("Refusing to start").contains("format version 99");
    }
}
