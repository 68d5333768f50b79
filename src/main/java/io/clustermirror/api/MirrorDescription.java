package io.clustermirror.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.clustermirror.mirror.ClusterMirrorOperation;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfigRules;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.PartitionStatus;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@JsonInclude(JsonInclude.Include.NON_NULL)
@Schema(
        name = "MirrorDescription",
        description = "DescribeClusterMirrors for one mirror; secret config values read [hidden]")
public record MirrorDescription(
        @Schema(example = "dr-east") String name,
        @Schema(example = "source-kafka:9092") String sourceBootstrapServers,

        @Schema(description = "Cluster id of the source, recorded at creation", example = "MkU3OEVBNTcwNTJENDM2Qk")
        String sourceClusterId,

        @Schema(
                description = "The config as set, secrets masked",
                example = "{\"bootstrap.servers\": \"source-kafka:9092\", \"sasl.jaas.config\": \"[hidden]\"}")
        Map<String, String> config,

        @Schema(example = "2026-11-29T10:00:00Z") Instant createdAt,
        @Schema(example = "2026-11-29T10:05:00Z") Instant updatedAt,

        @Schema(
                description = "The service instance that runs this mirror (its mirror.instance.id)",
                example = "cluster-mirror-0:8080")
        String runningOn,

        @Schema(description = "Mirrored topics with their partition states")
        List<TopicSummary> topics,

        @Schema(
                description = "Set when mirroring is halted because the source answers with another cluster id",
                example = "source cluster id is X, but mirror 'dr-east' mirrors cluster Y ...")
        String halted,

        @Schema(description = "The last metadata sync cycle (null before the first)")
        SyncStatus metadataSync,

        @Schema(
                description = "Describe only: lag, rates and ETA of the MIRRORING partitions together, and the slowest "
                        + "partitions")
        MirrorProgressDescription progress,

        @Schema(
                description = "What the caller may do to this mirror (only with includeAuthorizedOperations=true)",
                example = "[\"DESCRIBE\", \"ALTER\"]")
        List<String> authorizedOperations) {

    /** This description with the caller's operations on the mirror, as the KIP's IncludeAuthorizedOperations. */
    MirrorDescription withAuthorizedOperations(Collection<ClusterMirrorOperation> ops) {
        return new MirrorDescription(
                name,
                sourceBootstrapServers,
                sourceClusterId,
                config,
                createdAt,
                updatedAt,
                runningOn,
                topics,
                halted,
                metadataSync,
                progress,
                ops.stream().map(Enum::name).toList());
    }

    static MirrorDescription of(
            Mirror mirror,
            MirrorConfigRules rules,
            Map<MirrorPartition, PartitionStatus> partitions,
            String runningOn) {
        return of(mirror, rules, partitions, runningOn, null, null, null);
    }

    static MirrorDescription of(
            Mirror mirror,
            MirrorConfigRules rules,
            Map<MirrorPartition, PartitionStatus> partitions,
            String runningOn,
            String halted,
            SyncStatus sync,
            MirrorProgressDescription progress) {
        Map<String, Map<String, Integer>> states = new TreeMap<>();
        partitions.forEach((p, s) -> states.computeIfAbsent(p.topic(), t -> new TreeMap<>())
                .merge(s.state().name(), 1, Integer::sum));
        List<TopicSummary> topics = states.entrySet().stream()
                .map(e -> new TopicSummary(
                        e.getKey(),
                        e.getValue().values().stream()
                                .mapToInt(Integer::intValue)
                                .sum(),
                        e.getValue()))
                .toList();
        return new MirrorDescription(
                mirror.name(),
                mirror.config().bootstrapServers(),
                mirror.sourceClusterId(),
                mirror.config().masked(rules::isSensitive),
                mirror.createdAt(),
                mirror.updatedAt(),
                runningOn,
                topics,
                halted,
                sync,
                progress,
                null);
    }
}
