package io.clustermirror.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.clustermirror.mirror.MirrorProgress;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@JsonInclude(JsonInclude.Include.NON_NULL)
@Schema(
        name = "MirrorProgress",
        description = "The mirror's MIRRORING partitions together, as its data plane sees them (the rates of the "
                + "last 30 s; each lag as the data plane saw it at its last sample, taken every 2 s)")
public record MirrorProgressDescription(
        @Schema(
                description = "Records behind, summed over the MIRRORING partitions whose lag is known",
                example = "120000")
        long lag,

        @Schema(description = "Log bytes per second the destination acknowledged, summed", example = "10485760.0")
        double bytesPerSecond,

        @Schema(description = "Records per second the destination acknowledged, summed", example = "10240.0")
        double recordsPerSecond,

        @Schema(
                description = "The slowest partition's etaSeconds: 0 when every MIRRORING partition is caught up; "
                        + "absent (null) when a partition's is unknown or not shrinking, or none is MIRRORING",
                example = "95")
        Integer etaSeconds,

        @Schema(description = "Partitions in MIRRORING", example = "12")
        int mirroringPartitions,

        @Schema(
                description = "Up to 5 partitions that are not caught up, slowest first: those not catching up (or "
                        + "unknown) by lag, then by ETA, then by lag")
        List<PartitionProgressDescription> slowestPartitions) {

    static MirrorProgressDescription of(MirrorProgress progress) {
        return new MirrorProgressDescription(
                progress.lag(),
                progress.bytesPerSecond(),
                progress.recordsPerSecond(),
                progress.etaSeconds(),
                progress.mirroringPartitions(),
                progress.slowest().stream()
                        .map(PartitionProgressDescription::of)
                        .toList());
    }
}
