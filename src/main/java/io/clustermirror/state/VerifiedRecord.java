package io.clustermirror.state;

/**
 * Value of a partition's {@code verified} record: a consistency verification found the source and the destination
 * identical up to {@code offset} (exclusive), where a {@code "from": "last"} one continues.
 */
public record VerifiedRecord(int v, long offset) {}
