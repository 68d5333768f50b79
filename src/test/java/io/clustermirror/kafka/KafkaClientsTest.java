package io.clustermirror.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Test;

class KafkaClientsTest {

    @Test
    void aDestinationAdminShouldRetryAfterTenMillisecondsFirstUnlessTheOperatorSetsItsBackOff() {
        Map<String, Object> props = KafkaClients.destinationAdminProps(
                Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092"), 30000);

        assertThat(props)
                .containsEntry(AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, 10)
                .containsEntry(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 30000)
                .containsEntry(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30000)
                .containsEntry(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092")
                .doesNotContainKey(AdminClientConfig.RETRY_BACKOFF_MAX_MS_CONFIG); // kafka-clients' 1 s cap stays
        assertThat(KafkaClients.destinationAdminProps(Map.of(AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, "250"), 30000))
                .containsEntry(AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, "250");
    }
}
