package io.clustermirror.kafka;

/** The mirror's own idempotent producer id and epoch on the destination. */
public record ProducerIdentity(long producerId, short producerEpoch) {}
