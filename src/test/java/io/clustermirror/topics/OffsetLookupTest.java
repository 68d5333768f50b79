package io.clustermirror.topics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.clustermirror.topics.OffsetLookup.Offsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.clients.NodeApiVersions;
import org.apache.kafka.clients.admin.AdminClientUnitTestEnv;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsPartition;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.MetadataResponse.PartitionMetadata;
import org.apache.kafka.common.requests.MetadataResponse.TopicMetadata;
import org.apache.kafka.common.requests.RequestTestUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The offsets helper against kafka-clients' own Admin client over {@code MockClient}: what goes on the wire (one
 * ListOffsets per leader, the caller's isolation level and spec) and what comes back per partition.
 */
class OffsetLookupTest {

    private static final Node BROKER_0 = new Node(0, "localhost", 9092);
    private static final Node BROKER_1 = new Node(1, "localhost", 9093);
    private static final TopicPartition ORDERS_0 = new TopicPartition("orders", 0);
    private static final TopicPartition ORDERS_1 = new TopicPartition("orders", 1);
    private static final TopicPartition SECRET_0 = new TopicPartition("secret", 0);

    private AdminClientUnitTestEnv env;
    private final List<ListOffsetsRequest> sent = new ArrayList<>();

    @BeforeEach
    void startAdmin() {
        Cluster cluster = new Cluster(
                "source",
                List.of(BROKER_0, BROKER_1),
                List.of(partition(ORDERS_0, BROKER_0), partition(ORDERS_1, BROKER_0), partition(SECRET_0, BROKER_1)),
                Set.of(),
                Set.of(),
                BROKER_0);
        env = new AdminClientUnitTestEnv(cluster);
        env.kafkaClient().setNodeApiVersions(NodeApiVersions.create());
        prepareMetadata();
    }

    /** Where the partitions' leaders are: the first look-up asks. */
    private void prepareMetadata() {
        env.kafkaClient()
                .prepareResponse(RequestTestUtils.metadataResponse(
                        List.of(BROKER_0, BROKER_1),
                        "source",
                        0,
                        List.of(
                                topic("orders", leader(ORDERS_0, 0), leader(ORDERS_1, 0)),
                                topic("secret", leader(SECRET_0, 1)))));
    }

    @AfterEach
    void closeAdmin() {
        env.close();
    }

    @Test
    void aPartitionThatFailsShouldFailNoOther() throws Exception {
        // Given broker 0 answers both orders partitions, broker 1 refuses the secret topic
        answer(BROKER_0, ends(ORDERS_0, Errors.NONE, 42, 7), ends(ORDERS_1, Errors.NONE, 9, 7));
        answer(BROKER_1, ends(SECRET_0, Errors.TOPIC_AUTHORIZATION_FAILED, -1, -1));

        // When
        Offsets offsets = new OffsetLookup(env.adminClient(), 5_000).latest(List.of(ORDERS_0, ORDERS_1, SECRET_0));

        // Then each partition has its own answer, and the two orders partitions went in one request to their leader
        assertThat(offsets.offset(ORDERS_0)).hasValue(42);
        assertThat(offsets.found().get(ORDERS_0).leaderEpoch()).hasValue(7);
        assertThat(offsets.offset(ORDERS_1)).hasValue(9);
        assertThat(offsets.offset(SECRET_0)).isEmpty();
        assertThat(offsets.failedPartitions()).containsExactly(SECRET_0);
        assertThat(offsets.failed().get(SECRET_0)).isInstanceOf(TopicAuthorizationException.class);
        assertThat(sent).hasSize(2);
        assertThat(sent).allSatisfy(r -> assertThat(r.isolationLevel()).isEqualTo(IsolationLevel.READ_UNCOMMITTED));
        assertThat(timestamps(ORDERS_0)).containsExactly(ListOffsetsRequest.LATEST_TIMESTAMP);
        // and a caller that needs every partition gets the failure as the whole call's
        assertThatThrownBy(offsets::orThrow).hasCauseInstanceOf(TopicAuthorizationException.class);
    }

    @Test
    void theCallersIsolationLevelAndSpecShouldReachTheBroker() throws Exception {
        // Given
        answer(BROKER_0, ends(ORDERS_0, Errors.NONE, 40, 7));

        // When the last stable offset is asked for
        Offsets offsets = new OffsetLookup(env.adminClient(), 5_000)
                .await(List.of(ORDERS_0), OffsetSpec.latest(), IsolationLevel.READ_COMMITTED);

        // Then
        assertThat(offsets.orThrow().offset(ORDERS_0)).hasValue(40);
        assertThat(sent)
                .singleElement()
                .satisfies(r -> assertThat(r.isolationLevel()).isEqualTo(IsolationLevel.READ_COMMITTED));

        // and the log start, read uncommitted
        sent.clear(); // the client knows the leaders now: no metadata asked again
        answer(BROKER_0, ends(ORDERS_0, Errors.NONE, 3, 7));
        Offsets starts = new OffsetLookup(env.adminClient(), 5_000)
                .await(List.of(ORDERS_0), OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED);
        assertThat(starts.offset(ORDERS_0)).as("failed: %s", starts.failed()).hasValue(3);
        assertThat(timestamps(ORDERS_0)).containsExactly(ListOffsetsRequest.EARLIEST_TIMESTAMP);
    }

    @Test
    void aPartitionNotAnsweredWithinTheDeadlineShouldBeAnsweredWithATimeout() throws Exception {
        // Given broker 0 answers, broker 1 never does
        answer(BROKER_0, ends(ORDERS_0, Errors.NONE, 42, 7));

        // When
        Offsets offsets = new OffsetLookup(env.adminClient(), 300).latest(List.of(ORDERS_0, SECRET_0));

        // Then
        assertThat(offsets.offset(ORDERS_0)).hasValue(42);
        assertThat(offsets.failed().get(SECRET_0)).isInstanceOf(TimeoutException.class);
    }

    @Test
    void noPartitionsShouldAskNothing() throws Exception {
        Offsets offsets = new OffsetLookup(env.adminClient(), 5_000).latest(List.of());

        assertThat(offsets.found()).isEmpty();
        assertThat(offsets.failed()).isEmpty();
        assertThat(env.kafkaClient().requests()).isEmpty();
    }

    /** One leader's answer; the request it answers is kept for the assertions. */
    private void answer(Node broker, ListOffsetsResponseData.ListOffsetsTopicResponse... topics) {
        env.kafkaClient()
                .prepareResponseFrom(
                        body -> {
                            sent.add((ListOffsetsRequest) body);
                            return true;
                        },
                        new ListOffsetsResponse(new ListOffsetsResponseData().setTopics(List.of(topics))),
                        broker);
    }

    private List<Long> timestamps(TopicPartition tp) {
        return sent.stream()
                .flatMap(r -> r.data().topics().stream())
                .filter(t -> t.name().equals(tp.topic()))
                .flatMap(t -> t.partitions().stream())
                .filter(p -> p.partitionIndex() == tp.partition())
                .map(ListOffsetsPartition::timestamp)
                .toList();
    }

    private static ListOffsetsResponseData.ListOffsetsTopicResponse ends(
            TopicPartition tp, Errors error, long offset, int epoch) {
        return ListOffsetsResponse.singletonListOffsetsTopicResponse(tp, error, -1L, offset, epoch);
    }

    private static PartitionInfo partition(TopicPartition tp, Node leader) {
        return new PartitionInfo(tp.topic(), tp.partition(), leader, new Node[] {leader}, new Node[] {leader});
    }

    private static PartitionMetadata leader(TopicPartition tp, int broker) {
        return new PartitionMetadata(
                Errors.NONE, tp, Optional.of(broker), Optional.of(7), List.of(broker), List.of(broker), List.of());
    }

    private static TopicMetadata topic(String name, PartitionMetadata... partitions) {
        return new TopicMetadata(Errors.NONE, name, false, List.of(partitions));
    }
}
