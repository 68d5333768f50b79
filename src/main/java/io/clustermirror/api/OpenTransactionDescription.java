package io.clustermirror.api;

import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(
        name = "OpenTransaction",
        description = "A source transaction replayed on the destination and not yet committed or aborted")
public record OpenTransactionDescription(
        @Schema(description = "The source producer id", example = "4021")
        long sourceProducerId,

        @Schema(
                description = "The destination transactional id replaying it",
                example = "cluster-mirror/dr/orders/0/4021")
        String destinationTransactionalId,

        @Schema(description = "Offset of the transaction's first record on this partition", example = "118733")
        long firstOffset,

        @Schema(description = "When the transaction began on the destination", example = "2026-11-29T12:00:00Z")
        String openSince) {}
