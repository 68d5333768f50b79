package io.clustermirror.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.clustermirror.mirror.MirrorProgress;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@JsonInclude(JsonInclude.Include.NON_NULL)
@Schema(name = "PartitionProgress", description = "One MIRRORING partition's progress, in a mirror's summary")
public record PartitionProgressDescription(
        @Schema(example = "orders") String topic,
        @Schema(example = "3") int partition,

        @Schema(
                description = "Records behind as the data plane saw it at its last sample (-1: unknown)",
                example = "90000")
        long lag,

        @Schema(description = "Log bytes per second acknowledged over the last 30 s", example = "2621440.0")
        Double bytesPerSecond,

        @Schema(description = "Records per second acknowledged over the last 30 s", example = "2560.0")
        Double recordsPerSecond,

        @Schema(description = "As etaSeconds of PartitionDescription", example = "95")
        Integer etaSeconds,

        @Schema(
                description = "The same as a sentence",
                example = "mirroring 2,560 records/s, 2.5 MiB/s over the last 30 s; 90000 records behind, caught up "
                        + "in about 95 s")
        String progress) {

    static PartitionProgressDescription of(MirrorProgress.Partition p) {
        return new PartitionProgressDescription(
                p.partition().topic(),
                p.partition().partition(),
                p.progress().lag(),
                p.progress().bytesPerSecond(),
                p.progress().recordsPerSecond(),
                p.progress().etaSeconds(),
                p.progress().sentence());
    }
}
