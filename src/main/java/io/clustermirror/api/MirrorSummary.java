package io.clustermirror.api;

import io.clustermirror.mirror.Mirror;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(name = "MirrorSummary", description = "One row of ListClusterMirrors")
public record MirrorSummary(
        @Schema(example = "dr-east") String name,
        @Schema(example = "source-kafka:9092") String sourceBootstrapServers,
        @Schema(example = "MkU3OEVBNTcwNTJENDM2Qk") String sourceClusterId,

        @Schema(description = "Topics mirrored by this mirror", example = "0")
        int topicCount) {

    static MirrorSummary of(Mirror mirror, int topicCount) {
        return new MirrorSummary(
                mirror.name(), mirror.config().bootstrapServers(), mirror.sourceClusterId(), topicCount);
    }
}
