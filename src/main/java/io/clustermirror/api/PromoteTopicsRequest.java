package io.clustermirror.api;

import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(
        name = "PromoteTopicsRequest",
        description =
                "Topics of the mirror to promote (planned switchover): by name and/or by regex over the mirror's topics")
public record PromoteTopicsRequest(
        @Schema(description = "Topic names", example = "[\"orders\"]")
        List<String> topics,

        @Schema(description = "Regexes of the mirror's topics to promote as well", example = "[\"orders\\\\..*\"]")
        List<String> include,

        @Schema(description = "Regexes of topics to leave out", example = "[\"orders\\\\.tmp.*\"]")
        List<String> exclude,

        @Schema(
                description = "How long to wait for lag 0 with no source transaction open, in ms (1 to 3,600,000)",
                defaultValue = "60000",
                example = "60000")
        Long timeoutMs,

        @Schema(
                description = "Fence writes on the source topics with a DENY WRITE ACL for User:* (the mirror's source "
                        + "credentials need ALTER on the source cluster). false: the operator vouches that producers have "
                        + "stopped, and the promote also requires the source log end not to move",
                defaultValue = "true",
                example = "true")
        Boolean fenceSource) {}
