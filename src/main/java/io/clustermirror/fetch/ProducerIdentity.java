package io.clustermirror.fetch;

/** The mirror's own idempotent producer id and epoch on the destination. */
public record ProducerIdentity(long producerId, short producerEpoch) {}
