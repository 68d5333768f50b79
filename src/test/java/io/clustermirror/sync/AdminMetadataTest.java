package io.clustermirror.sync;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.admin.MockAdminClient;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Node;
import org.junit.jupiter.api.Test;

/** {@link AdminMetadata} over kafka-clients' {@link MockAdminClient}. */
class AdminMetadataTest {

    private final Fixtures fixtures = new Fixtures();

    @Test
    void aTopicTheDestinationDoesNotServeYetShouldBeLeftOutOfTheConfigsWithoutAnError() throws Exception {
        try (MockAdminClient admin = new MockAdminClient(List.of(new Node(0, "d", 9092)), new Node(0, "d", 9092))) {
            admin.createTopics(List.of(new NewTopic("served", 1, (short) 1).configs(Map.of("retention.ms", "1000"))))
                    .all()
                    .get();
            AdminMetadata destination = new AdminMetadata(admin, Runnable::run);

            Map<String, Map<String, String>> configs = destination
                    .topicConfigs(Set.of("served", "just.created"), fixtures.log)
                    .await()
                    .atMost(Duration.ofSeconds(5));

            assertThat(configs).containsOnlyKeys("served");
            assertThat(fixtures.report().errors()).isEmpty();
        }
    }
}
