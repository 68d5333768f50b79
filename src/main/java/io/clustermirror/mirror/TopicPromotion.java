package io.clustermirror.mirror;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * A planned switchover of one mirrored topic ({@code topics:promote}), as persisted in {@code __mirror_state}: while
 * PROMOTING the source may be fenced and the mirror drains; once PROMOTED the topic was stopped with the proof that
 * nothing was lost, per partition the source's final end offset, the destination's (equal) and the source leader epoch.
 * A PROMOTING record found after a restart is rolled back: the promote never completed.
 *
 * @param fenceSource whether the source topic is fenced against writes (a DENY WRITE ACL for {@code User:*})
 * @param fenceCreated whether this mirror created that ACL (and so lifts it); false when it was there already
 */
public record TopicPromotion(
        String topic,
        Phase phase,
        boolean fenceSource,
        boolean fenceCreated,
        Instant startedAt,
        Instant promotedAt,
        List<PromotedPartition> partitions) {

    public enum Phase {
        PROMOTING,
        PROMOTED
    }

    /** One partition's zero-loss proof: the source ended at {@code sourceEndOffset}, and so did the destination. */
    public record PromotedPartition(int partition, long sourceEndOffset, long destinationEndOffset, int leaderEpoch) {}

    public TopicPromotion {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(phase, "phase");
        Objects.requireNonNull(startedAt, "startedAt");
        partitions = partitions == null ? List.of() : List.copyOf(partitions);
    }

    public static TopicPromotion promoting(String topic, boolean fenceSource, boolean fenceCreated, Instant now) {
        return new TopicPromotion(topic, Phase.PROMOTING, fenceSource, fenceCreated, now, null, List.of());
    }

    /** The write fence on the source topic as an operator reads it, or null when the promote did not fence. */
    public String sourceFence() {
        if (!fenceSource) {
            return null;
        }
        return "DENY WRITE for User:* on source topic " + topic
                + (fenceCreated
                        ? " (created by this promote; lifted when this mirror starts the topic again)"
                        : " (there before the promote: not this mirror's to lift)");
    }

    public TopicPromotion promoted(List<PromotedPartition> proof, Instant now) {
        return new TopicPromotion(topic, Phase.PROMOTED, fenceSource, fenceCreated, startedAt, now, proof);
    }
}
