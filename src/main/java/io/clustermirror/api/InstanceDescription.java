package io.clustermirror.api;

import io.clustermirror.coordinator.ServiceInstance;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(name = "InstanceDescription", description = "A service instance of this destination's group")
public record InstanceDescription(
        @Schema(description = "Its mirror.instance.id", example = "cluster-mirror-0:8080")
        String id,

        @Schema(
                description = "Its advertised URL (mirror.instance.advertised.url)",
                example = "http://cluster-mirror-0:8080")
        String url,

        @Schema(
                description = "The partitions of the state topic it owns: it runs the mirrors whose records they hold",
                example = "[0, 1, 2]")
        List<Integer> statePartitions,

        @Schema(description = "How many mirrors it runs", example = "12")
        int mirrors) {

    static InstanceDescription of(ServiceInstance.Member member) {
        return new InstanceDescription(member.id(), member.url(), member.statePartitions(), member.mirrors());
    }
}
