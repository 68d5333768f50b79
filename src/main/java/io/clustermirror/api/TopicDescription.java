package io.clustermirror.api;

import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(name = "TopicDescription", description = "Every partition of one mirrored topic")
public record TopicDescription(
        @Schema(example = "dr-east") String mirror,
        @Schema(example = "orders") String topic,
        List<PartitionDescription> partitions) {}
