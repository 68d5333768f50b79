package io.clustermirror.coordinator;

/**
 * A mirrored partition's ends as read now: the source high watermark and the destination log end; -1 where one
 * could not be read (source unreachable, no data plane yet).
 */
public record PartitionOffsets(long sourceEnd, long destinationEnd) {

    /** Records the destination is behind the source, or -1 when either end is unknown. */
    public long lag() {
        return sourceEnd >= 0 && destinationEnd >= 0 ? Math.max(0, sourceEnd - destinationEnd) : -1;
    }
}
