package io.clustermirror.mirror;

/**
 * Where a partition stood when a promote gave up: the source's and the destination's log end, and the first offset of
 * a transaction still open on the source (-1: none).
 */
public record PartitionLag(
        String topic,
        int partition,
        long sourceEndOffset,
        long destinationEndOffset,
        long lag,
        long openTransactionStartOffset) {}
