package io.clustermirror.api;

import java.util.List;

import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(name = "StartTopicsRequest", description = "Topics to start mirroring: by name and/or by regex; patterns are kept on the mirror")
public record StartTopicsRequest(
        @Schema(description = "Source topic names", example = "[\"orders\", \"payments\"]") List<String> topics,
        @Schema(description = "Regexes of source topics to start (added to mirror.topics.include)", example = "[\"orders\\\\..*\"]")
        List<String> include,
        @Schema(description = "Regexes never to start (added to mirror.topics.exclude)", example = "[\"orders\\\\.tmp.*\"]")
        List<String> exclude) {
}
