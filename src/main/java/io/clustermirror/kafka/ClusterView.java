package io.clustermirror.kafka;

import io.clustermirror.mirror.Failures;
import io.clustermirror.mirror.Frozen;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/** A snapshot of one cluster's brokers, partition leaders and topic ids, for the topics a fetcher handles. */
public record ClusterView(
        String clusterId,
        Collection<Node> nodes,
        Map<TopicPartition, Node> leaders,
        Map<String, Uuid> topicIds,
        Map<Uuid, String> topicNames) {

    public static ClusterView empty() {
        return new ClusterView("", List.of(), Map.of(), Map.of(), Map.of());
    }

    /** Blocking: describes the cluster and the topics that exist among {@code topics}. */
    public static ClusterView load(Admin admin, Set<String> topics, long timeoutMs) throws Exception {
        var cluster = admin.describeCluster();
        Collection<Node> nodes = cluster.nodes().get(timeoutMs, TimeUnit.MILLISECONDS);
        String clusterId = cluster.clusterId().get(timeoutMs, TimeUnit.MILLISECONDS);
        Map<TopicPartition, Node> leaders = new HashMap<>();
        Map<String, Uuid> ids = new HashMap<>();
        var futures = admin.describeTopics(topics).topicNameValues();
        for (var entry : futures.entrySet()) {
            TopicDescription description;
            try {
                description = entry.getValue().get(timeoutMs, TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                    continue;
                }
                throw e;
            }
            ids.put(description.name(), description.topicId());
            description.partitions().forEach(p -> {
                if (p.leader() != null && !p.leader().isEmpty()) {
                    leaders.put(new TopicPartition(description.name(), p.partition()), p.leader());
                }
            });
        }
        return new ClusterView(clusterId, List.copyOf(nodes), Frozen.map(leaders), Frozen.map(ids), inverse(ids));
    }

    /**
     * The same without blocking: completes once the Admin's answers are in (on its thread), or exceptionally after
     * {@code timeoutMs}.
     */
    public static CompletableFuture<ClusterView> loadAsync(Admin admin, Set<String> topics, long timeoutMs) {
        var cluster = admin.describeCluster();
        CompletableFuture<Collection<Node>> nodes =
                cluster.nodes().toCompletionStage().toCompletableFuture();
        CompletableFuture<String> clusterId =
                cluster.clusterId().toCompletionStage().toCompletableFuture();
        Map<String, CompletableFuture<TopicDescription>> described = new HashMap<>();
        admin.describeTopics(topics)
                .topicNameValues()
                .forEach((topic, future) -> described.put(
                        topic,
                        future.toCompletionStage()
                                .toCompletableFuture()
                                .exceptionallyCompose(
                                        e -> Failures.unwrap(e) instanceof UnknownTopicOrPartitionException
                                                ? CompletableFuture.completedFuture(null)
                                                : CompletableFuture.failedFuture(Failures.unwrap(e)))));
        List<CompletableFuture<?>> all = new ArrayList<>(described.values());
        all.add(nodes);
        all.add(clusterId);
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new))
                .orTimeout(timeoutMs, TimeUnit.MILLISECONDS)
                .thenApply(done -> {
                    Map<TopicPartition, Node> leaders = new HashMap<>();
                    Map<String, Uuid> ids = new HashMap<>();
                    described.values().stream()
                            .map(CompletableFuture::join)
                            .filter(Objects::nonNull)
                            .forEach(description -> {
                                ids.put(description.name(), description.topicId());
                                description.partitions().forEach(p -> {
                                    if (p.leader() != null && !p.leader().isEmpty()) {
                                        leaders.put(new TopicPartition(description.name(), p.partition()), p.leader());
                                    }
                                });
                            });
                    return new ClusterView(
                            clusterId.join(),
                            List.copyOf(nodes.join()),
                            Frozen.map(leaders),
                            Frozen.map(ids),
                            inverse(ids));
                });
    }

    /** Topic names by id, built once per view: every Fetch and Produce response needs it. */
    private static Map<Uuid, String> inverse(Map<String, Uuid> topicIds) {
        Map<Uuid, String> names = new HashMap<>();
        topicIds.forEach((name, id) -> names.put(id, name));
        return Frozen.map(names);
    }

    public Node anyNode() {
        if (nodes.isEmpty()) {
            throw new IllegalStateException("no brokers known");
        }
        return nodes.iterator().next();
    }
}
