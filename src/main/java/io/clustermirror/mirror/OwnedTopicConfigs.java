package io.clustermirror.mirror;

import java.util.Set;

/**
 * Topic configs the mirror owns on a destination topic while it is mirrored, so that the destination keeps the
 * source's bytes as they come (DESIGN §4.1): no recompression, the producer's timestamps whatever their age, batches
 * as large as the source's. They are restored to the source's values when the topic is stopped, and never synced.
 */
public final class OwnedTopicConfigs {

    public static final String COMPRESSION_TYPE = "compression.type";
    public static final String MESSAGE_TIMESTAMP_TYPE = "message.timestamp.type";
    public static final String MESSAGE_TIMESTAMP_AFTER_MAX_MS = "message.timestamp.after.max.ms";
    public static final String MESSAGE_TIMESTAMP_BEFORE_MAX_MS = "message.timestamp.before.max.ms";
    public static final String MAX_MESSAGE_BYTES = "max.message.bytes";

    public static final Set<String> NAMES = Set.of(
            COMPRESSION_TYPE,
            MESSAGE_TIMESTAMP_TYPE,
            MESSAGE_TIMESTAMP_AFTER_MAX_MS,
            MESSAGE_TIMESTAMP_BEFORE_MAX_MS,
            MAX_MESSAGE_BYTES);

    private OwnedTopicConfigs() {}
}
