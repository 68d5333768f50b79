package io.clustermirror.api;

import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(name = "TopicDescription", description = "Every partition of one mirrored topic")
public record TopicDescription(
        @Schema(example = "dr-east") String mirror,
        @Schema(example = "orders") String topic,
        List<PartitionDescription> partitions,

        @Schema(
                description =
                        "The topic's promote: under way, or the zero-loss proof of the one that stopped it; null when none")
        PromotionDescription promotion,

        @Schema(
                description =
                        "Records only the destination held when the topic was last recreated for diverging from the "
                                + "source (failback), and where they were preserved; null when none")
        DivergenceDescription divergence) {}
