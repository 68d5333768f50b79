package io.clustermirror.api;

import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(name = "TopicsRequest", description = "Topics of the mirror to act on")
public record TopicsRequest(
        @Schema(description = "Topic names", example = "[\"orders\"]")
        List<String> topics) {}
