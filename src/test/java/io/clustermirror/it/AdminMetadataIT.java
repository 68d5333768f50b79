package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.sync.AdminMetadata;
import io.clustermirror.sync.ClusterMetadata;
import io.clustermirror.sync.CycleLog;
import io.clustermirror.sync.GroupKind;
import io.clustermirror.sync.plan.CommittedOffset;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** The sync cycle's reads of a cluster (AdminMetadata) against the test bed's destination broker. */
class AdminMetadataIT extends ServiceIT {

    @Test
    void aTopicTheDestinationDoesNotKnowShouldBeLeftOutOfTheConfigsWithoutAnError() throws Exception {
        String served = uniqueName("served");
        String unknown = uniqueName("not.created");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Admin admin = bed.destinationAdmin()) {
            Kafka.createTopic(admin, served, 1, Map.of("retention.ms", "3600000"));
            AdminMetadata destination = new AdminMetadata(admin, Runnable::run);

            Map<String, Map<String, String>> configs = destination
                    .topicConfigs(Set.of(served, unknown), new CycleLog("m", new MirrorMetrics(registry), null))
                    .await()
                    .atMost(Duration.ofSeconds(30));

            assertThat(configs).containsOnlyKeys(served);
            assertThat(configs.get(served)).containsEntry("retention.ms", "3600000");
            assertThat(registry.find("cluster.mirror.sync.errors").counters())
                    .as("no sync error counted")
                    .allSatisfy(c -> assertThat(c.count()).isZero());
        }
    }

    @Test
    void groupsTheDestinationDoesNotKnowShouldHaveNoOffsetsNextToOnesItDoes() throws Exception {
        String topic = uniqueName("group.offsets");
        String committed = uniqueName("committed");
        String unknownConsumers = uniqueName("unknown-consumers");
        String unknownShares = uniqueName("unknown-shares");
        try (Admin admin = bed.destinationAdmin()) {
            Kafka.createTopic(admin, topic, 2, Map.of());
            admin.alterConsumerGroupOffsets(committed, Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(0)))
                    .all()
                    .get(30, TimeUnit.SECONDS);
            AdminMetadata destination = new AdminMetadata(admin, Runnable::run);
            Set<MirrorPartition> partitions = Set.of(new MirrorPartition(topic, 0), new MirrorPartition(topic, 1));

            ClusterMetadata.GroupOffsets consumerReads = destination
                    .groupOffsets(GroupKind.CONSUMER, Set.of(committed, unknownConsumers), partitions)
                    .await()
                    .atMost(Duration.ofSeconds(30));
            ClusterMetadata.GroupOffsets shareReads = destination
                    .groupOffsets(GroupKind.SHARE, Set.of(unknownShares), partitions)
                    .await()
                    .atMost(Duration.ofSeconds(30));
            assertThat(consumerReads.failed()).isEmpty();
            assertThat(shareReads.failed()).isEmpty();
            Map<String, Map<MirrorPartition, CommittedOffset>> consumers = consumerReads.read();
            Map<String, Map<MirrorPartition, CommittedOffset>> shares = shareReads.read();

            assertThat(consumers.get(committed))
                    .containsExactly(Map.entry(new MirrorPartition(topic, 0), CommittedOffset.of(0)));
            assertThat(consumers.get(unknownConsumers)).isEmpty();
            assertThat(shares).containsOnlyKeys(unknownShares);
            assertThat(shares.get(unknownShares)).isEmpty();
        }
    }

    @Test
    void aConsumerGroupsCommitMetadataShouldBeReadAndWrittenWithItsOffset() throws Exception {
        // Kafka Streams keeps its partition time in the metadata string of its commits: a failover must not lose it
        String topic = uniqueName("group.metadata");
        String group = uniqueName("streams-app");
        MirrorPartition p0 = new MirrorPartition(topic, 0);
        try (Admin admin = bed.destinationAdmin()) {
            Kafka.createTopic(admin, topic, 1, Map.of());
            AdminMetadata cluster = new AdminMetadata(admin, Runnable::run);

            cluster.alterGroupOffsets(GroupKind.CONSUMER, group, Map.of(p0, new CommittedOffset(0, "AQAAAZS-time")))
                    .await()
                    .atMost(Duration.ofSeconds(30));

            assertThat(admin.listConsumerGroupOffsets(group)
                            .partitionsToOffsetAndMetadata()
                            .get(30, TimeUnit.SECONDS)
                            .get(new TopicPartition(topic, 0))
                            .metadata())
                    .isEqualTo("AQAAAZS-time");
            assertThat(cluster.groupOffsets(GroupKind.CONSUMER, Set.of(group), Set.of(p0))
                            .await()
                            .atMost(Duration.ofSeconds(30))
                            .read())
                    .containsEntry(group, Map.of(p0, new CommittedOffset(0, "AQAAAZS-time")));
        }
    }
}
