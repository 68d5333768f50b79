package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.clustermirror.client.ApiClient;
import io.clustermirror.client.ApiException;
import io.clustermirror.client.api.MirrorsApi;
import io.clustermirror.client.api.TopicsApi;
import io.clustermirror.client.model.AlterMirrorConfigRequest;
import io.clustermirror.client.model.CreateMirrorRequest;
import io.clustermirror.client.model.MirrorDescription;
import io.clustermirror.client.model.MirrorSummary;
import io.clustermirror.client.model.PartitionDescription;
import io.clustermirror.client.model.Problem;
import io.clustermirror.client.model.StartTopicsRequest;
import io.clustermirror.client.model.TopicOutcome;
import io.clustermirror.client.model.TopicsRequest;
import io.clustermirror.client.model.TopicsResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The service driven only through the Java client generated from the committed openapi/openapi.yaml (the
 * openapi-generator plugin's generate-client execution): an operation, parameter or schema that changes in the
 * contract breaks this class's compilation, a change in what the service serves for it breaks its assertions.
 */
class GeneratedClientIT extends ServiceIT {

    private MirrorsApi mirrors;
    private TopicsApi topics;

    @BeforeEach
    void client() {
        ApiClient client = new ApiClient();
        client.updateBaseUri(bed.service().baseUri().toString().replaceAll("/$", ""));
        client.setReadTimeout(Duration.ofSeconds(30));
        mirrors = new MirrorsApi(client);
        topics = new TopicsApi(client);
    }

    @Test
    void everyMirrorAndTopicVerbShouldWorkThroughTheGeneratedClient() throws Exception {
        String mirror = uniqueName("genclient");
        String topic = uniqueName("genclient");
        try (Admin admin = bed.sourceAdmin()) {
            Kafka.createTopic(admin, topic, 2, Map.of());
        }
        Kafka.produce(bed.source().bootstrapServers(), topic, 200, "none", "genclient");

        // createClusterMirror, listClusterMirrors, describeClusterMirror
        MirrorDescription created = mirrors.createClusterMirror(new CreateMirrorRequest()
                .name(mirror)
                .config(Map.of("bootstrap.servers", bed.source().bootstrapServers())));
        assertThat(created.getName()).isEqualTo(mirror);
        assertThat(created.getSourceClusterId()).isEqualTo(sourceClusterId());
        assertThat(created.getCreatedAt()).isNotNull();
        assertThat(mirrors.listClusterMirrors().getMirrors())
                .filteredOn(m -> mirror.equals(m.getName()))
                .singleElement()
                .extracting(MirrorSummary::getTopicCount)
                .isEqualTo(0);
        assertThat(mirrors.describeClusterMirror(mirror, null).getConfig())
                .containsEntry("bootstrap.servers", bed.source().bootstrapServers());

        // alterClusterMirrorConfig
        MirrorDescription altered = mirrors.alterClusterMirrorConfig(
                mirror, new AlterMirrorConfigRequest().set(Map.of("mirror.groups.exclude", "internal-.*")));
        assertThat(altered.getConfig()).containsEntry("mirror.groups.exclude", "internal-.*");

        // startMirrorTopics, then describeMirrorTopic until every partition is MIRRORING with the records copied
        TopicsResponse started = topics.startMirrorTopics(mirror, new StartTopicsRequest().topics(List.of(topic)));
        assertThat(started.getTopics()).singleElement().satisfies(outcome -> {
            assertThat(outcome.getResult()).isEqualTo("STARTED");
            assertThat(outcome.getPartitions()).isEqualTo(2);
        });
        Awaitility.await(topic + " mirrored")
                .atMost(Duration.ofSeconds(120))
                .pollInterval(Duration.ofMillis(500))
                .untilAsserted(() -> {
                    List<PartitionDescription> partitions =
                            topics.describeMirrorTopic(mirror, topic).getPartitions();
                    assertThat(partitions).hasSize(2).allSatisfy(p -> {
                        assertThat(p.getState()).as(p.toString()).isEqualTo("MIRRORING");
                        assertThat(p.getLag()).as(p.toString()).isZero();
                    });
                    assertThat(partitions.stream()
                                    .mapToLong(PartitionDescription::getDestinationOffset)
                                    .sum())
                            .as("records copied")
                            .isEqualTo(200);
                });
        assertThat(mirrors.describeClusterMirror(mirror, null).getTopics())
                .singleElement()
                .satisfies(summary -> assertThat(summary.getStates()).containsEntry("MIRRORING", 2));

        // pauseMirrorTopics, resumeMirrorTopics
        assertSucceeded(topics.pauseMirrorTopics(mirror, new TopicsRequest().topics(List.of(topic))));
        awaitPartitions(mirror, topic, "PAUSED");
        assertSucceeded(topics.resumeMirrorTopics(mirror, new TopicsRequest().topics(List.of(topic))));
        awaitPartitions(mirror, topic, "MIRRORING");

        // stopMirrorTopics, deleteClusterMirror
        assertThat(topics.stopMirrorTopics(mirror, new TopicsRequest().topics(List.of(topic)))
                        .getTopics())
                .singleElement()
                .extracting(TopicOutcome::getResult)
                .isEqualTo("STOPPING");
        awaitPartitions(mirror, topic, "STOPPED");
        mirrors.deleteClusterMirror(mirror);
        assertThat(mirrors.listClusterMirrors().getMirrors()).noneMatch(m -> mirror.equals(m.getName()));
    }

    @Test
    void aProblemShouldSurfaceAsAnApiExceptionWithItsErrorCode() throws Exception {
        String mirror = uniqueName("genclient-missing");

        ApiException error =
                catchThrowableOfType(ApiException.class, () -> mirrors.describeClusterMirror(mirror, null));

        assertThat(error.getCode()).isEqualTo(404);
        assertThat(error.getResponseHeaders().firstValue("Content-Type")).hasValue("application/problem+json");
        Problem problem = new ApiClient().getObjectMapper().readValue(error.getResponseBody(), Problem.class);
        assertThat(problem.getStatus()).isEqualTo(404);
        assertThat(problem.getErrorCode()).isEqualTo("UNKNOWN_CLUSTER_MIRROR");
        assertThat(problem.getDetail()).contains(mirror);
    }

    private static void assertSucceeded(TopicsResponse response) {
        assertThat(response.getTopics()).singleElement().satisfies(outcome -> {
            assertThat(outcome.getErrorCode()).as(outcome.toString()).isNull();
            assertThat(outcome.getResult()).as(outcome.toString()).isNotNull();
        });
    }

    /** Waits, through describeMirrorTopic, until every partition of the topic is in {@code state}. */
    private void awaitPartitions(String mirror, String topic, String state) {
        Awaitility.await(topic + " all " + state)
                .atMost(Duration.ofSeconds(120))
                .pollInterval(Duration.ofMillis(500))
                .untilAsserted(() -> assertThat(
                                topics.describeMirrorTopic(mirror, topic).getPartitions())
                        .isNotEmpty()
                        .allSatisfy(
                                p -> assertThat(p.getState()).as(p.toString()).isEqualTo(state)));
    }
}
