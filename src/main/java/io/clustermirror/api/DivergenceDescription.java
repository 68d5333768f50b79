package io.clustermirror.api;

import io.clustermirror.mirror.TopicDivergence;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(
        name = "Divergence",
        description =
                "Records only the destination held when its topic diverged from the source (a failback), preserved "
                        + "before the topic was recreated")
public record DivergenceDescription(
        @Schema(description = "Where they were copied, on the destination", example = "__diverged.orders")
        String preservedTo,

        @Schema(example = "2026-12-01T10:00:00Z") String at,

        @Schema(example = "the topic was recreated from the source afterwards: its topic id changed")
        String note,

        List<DivergentPartition> partitions) {

    @Schema(name = "DivergentPartition", description = "One partition's preserved records")
    public record DivergentPartition(
            @Schema(example = "0") int partition,

            @Schema(description = "First offset where the logs differed", example = "1200")
            long fromOffset,

            @Schema(description = "The destination's log end then", example = "1250")
            long toOffset,

            @Schema(description = "Committed records copied", example = "50")
            long records) {}

    static DivergenceDescription of(TopicDivergence d) {
        return new DivergenceDescription(
                d.partitions().get(0).preservedTo(),
                d.at().toString(),
                "the topic was recreated from the source afterwards: its topic id changed",
                d.partitions().stream()
                        .map(p -> new DivergentPartition(p.partition(), p.from(), p.to(), p.records()))
                        .toList());
    }
}
