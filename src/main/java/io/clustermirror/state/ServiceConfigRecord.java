package io.clustermirror.state;

/** A service setting's value set at runtime, as stored under {@link StateKey#config}; a tombstone deletes it. */
public record ServiceConfigRecord(int v, String value) {}
