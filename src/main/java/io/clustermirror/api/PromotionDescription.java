package io.clustermirror.api;

import io.clustermirror.mirror.TopicPromotion;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(
        name = "Promotion",
        description = "A topic's planned switchover: under way (PROMOTING) or completed (PROMOTED) with its proof")
public record PromotionDescription(
        @Schema(example = "orders") String topic,

        @Schema(
                enumeration = {"PROMOTING", "PROMOTED"},
                example = "PROMOTED")
        String phase,

        @Schema(example = "2026-12-01T10:00:00Z") String startedAt,

        @Schema(nullable = true, example = "2026-12-01T10:00:02Z")
        String promotedAt,

        @Schema(
                description = "The write fence on the source topic, null when the promote did not fence",
                nullable = true,
                example =
                        "DENY WRITE for User:* on source topic orders (created by this promote; lifted when this mirror "
                                + "starts the topic again)")
        String sourceFence,

        @Schema(
                description = "Why the last attempt to lift the source fence failed (after a rollback, or when this "
                        + "mirror started the topic again), while it is retried; null otherwise",
                nullable = true,
                example = "lifting the source fence (started again by this mirror) failed: "
                        + "org.apache.kafka.common.errors.TimeoutException: Timed out waiting for a node assignment; "
                        + "retried every 5 s, the source stays fenced until it succeeds")
        String sourceFenceLiftError,

        List<PromotedPartitionDescription> partitions) {

    /** A promote's answer: nothing to lift yet. */
    static PromotionDescription of(TopicPromotion p) {
        return of(p, null);
    }

    static PromotionDescription of(TopicPromotion p, String sourceFenceLiftError) {
        return new PromotionDescription(
                p.topic(),
                p.phase().name(),
                p.startedAt().toString(),
                p.promotedAt() == null ? null : p.promotedAt().toString(),
                p.sourceFence(),
                sourceFenceLiftError,
                p.partitions().stream()
                        .map(x -> new PromotedPartitionDescription(
                                x.partition(), x.sourceEndOffset(), x.destinationEndOffset(), x.leaderEpoch()))
                        .toList());
    }
}
