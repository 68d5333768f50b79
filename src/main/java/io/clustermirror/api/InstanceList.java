package io.clustermirror.api;

import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(name = "InstanceList", description = "The service instances of this destination's group, sorted by id")
public record InstanceList(
        @Schema(description = "The id of the instance that answered", example = "cluster-mirror-0:8080")
        String answeredBy,

        List<InstanceDescription> instances) {}
