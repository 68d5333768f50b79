package io.clustermirror.mirror;

import java.util.Comparator;
import java.util.Objects;

/** One partition of a mirrored topic (the same topic name and partition on source and destination). */
public record MirrorPartition(String topic, int partition) implements Comparable<MirrorPartition> {

    private static final Comparator<MirrorPartition> ORDER =
            Comparator.comparing(MirrorPartition::topic).thenComparingInt(MirrorPartition::partition);

    public MirrorPartition {
        Objects.requireNonNull(topic, "topic");
        if (partition < 0) {
            throw new IllegalArgumentException("partition must be >= 0");
        }
    }

    @Override
    public int compareTo(MirrorPartition other) {
        return ORDER.compare(this, other);
    }

    @Override
    public String toString() {
        return topic + "-" + partition;
    }
}
