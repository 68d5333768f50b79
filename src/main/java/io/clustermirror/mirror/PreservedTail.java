package io.clustermirror.mirror;

/**
 * What was preserved of a destination partition before its diverged topic was recreated: its records in [from, to),
 * the offsets the source did not have, {@code records} of them committed, copied into {@code preservedTo}.
 */
public record PreservedTail(String topic, int partition, long from, long to, long records, String preservedTo) {}
