package io.clustermirror.sync.plan;

/**
 * A group's committed position in one partition: the offset, and the metadata string its consumer committed with it
 * (empty when none; Kafka Streams keeps its partition time there). Share groups have no metadata: theirs is empty.
 */
public record CommittedOffset(long offset, String metadata) {

    public CommittedOffset {
        metadata = metadata == null ? "" : metadata;
    }

    public static CommittedOffset of(long offset) {
        return new CommittedOffset(offset, "");
    }

    /** The same metadata at the offset clamped to {@code end}. */
    CommittedOffset clampedTo(long end) {
        return offset <= end ? this : new CommittedOffset(end, metadata);
    }

    @Override
    public String toString() {
        return metadata.isEmpty() ? Long.toString(offset) : offset + " \"" + metadata + "\"";
    }
}
