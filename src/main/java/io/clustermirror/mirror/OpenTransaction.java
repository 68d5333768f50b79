package io.clustermirror.mirror;

import java.time.Instant;

/**
 * A destination transaction the mirror holds open because the source's is still open: the source
 * producer, the destination transactional id replaying it, the offset it began at and since when.
 */
public record OpenTransaction(
        long sourceProducerId, String destinationTransactionalId, long firstOffset, Instant openSince) {}
