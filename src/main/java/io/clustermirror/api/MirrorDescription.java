package io.clustermirror.api;

import java.time.Instant;
import java.util.Map;

import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfigRules;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(name = "MirrorDescription", description = "DescribeClusterMirrors for one mirror; secret config values read [hidden]")
public record MirrorDescription(
        @Schema(example = "dr-east") String name,
        @Schema(example = "source-kafka:9092") String sourceBootstrapServers,
        @Schema(description = "Cluster id of the source, recorded at creation", example = "MkU3OEVBNTcwNTJENDM2Qk") String sourceClusterId,
        @Schema(description = "The config as set, secrets masked",
                example = "{\"bootstrap.servers\": \"source-kafka:9092\", \"sasl.jaas.config\": \"[hidden]\"}")
        Map<String, String> config,
        @Schema(example = "2026-11-29T10:00:00Z") Instant createdAt,
        @Schema(example = "2026-11-29T10:05:00Z") Instant updatedAt) {

    static MirrorDescription of(Mirror mirror, MirrorConfigRules rules) {
        return new MirrorDescription(mirror.name(), mirror.config().bootstrapServers(), mirror.sourceClusterId(),
                mirror.config().masked(rules::isSensitive), mirror.createdAt(), mirror.updatedAt());
    }
}
