package io.clustermirror.api;

import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(name = "PromoteResponse", description = "A completed promote: per topic the proof, and the final group sync")
public record PromoteResponse(
        @Schema(example = "dr-east") String mirror,
        List<PromotionDescription> topics,

        @Schema(
                description = "Groups whose offsets were not copied because they have members on the destination",
                example = "[]")
        List<String> groupsSkippedActive,

        @Schema(description = "Groups whose final offset copy failed, with the reason", example = "[]")
        List<String> groupSyncErrors) {}
