package io.clustermirror.api;

import io.clustermirror.mirror.PartitionLag;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(name = "PartitionLag", description = "Where a partition stood when a promote gave up")
public record PartitionLagDescription(
        @Schema(example = "orders") String topic,
        @Schema(example = "0") int partition,

        @Schema(description = "The source's log end offset", example = "120000")
        long sourceEndOffset,

        @Schema(description = "The destination's log end offset", example = "118733")
        long destinationEndOffset,

        @Schema(description = "Records the destination is behind", example = "1267")
        long lag,

        @Schema(
                description = "First offset of a transaction still open on the source partition, -1 when none",
                example = "-1")
        long openTransactionStartOffset) {

    static PartitionLagDescription of(PartitionLag lag) {
        return new PartitionLagDescription(
                lag.topic(),
                lag.partition(),
                lag.sourceEndOffset(),
                lag.destinationEndOffset(),
                lag.lag(),
                lag.openTransactionStartOffset());
    }
}
