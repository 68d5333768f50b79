package io.clustermirror.api;

import java.util.Map;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(name = "TopicSummary", description = "A mirrored topic: how many of its partitions are in each state")
public record TopicSummary(
        @Schema(example = "orders") String topic,
        @Schema(example = "4") int partitions,

        @Schema(description = "Partition count per state", example = "{\"MIRRORING\": 4}")
        Map<String, Integer> states) {}
