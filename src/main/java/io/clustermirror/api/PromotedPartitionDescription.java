package io.clustermirror.api;

import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(name = "PromotedPartition", description = "One partition's zero-loss proof: both logs ended at the same offset")
public record PromotedPartitionDescription(
        @Schema(example = "0") int partition,

        @Schema(description = "The source's final log end offset", example = "120000")
        long sourceEndOffset,

        @Schema(description = "The destination's log end offset (equal)", example = "120000")
        long destinationEndOffset,

        @Schema(description = "The source leader epoch at that end, -1 when unknown", example = "3")
        int leaderEpoch) {}
