package io.clustermirror.api;

import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(
        name = "StartTopicsRequest",
        description = "Topics to start mirroring: by name and/or by regex; patterns are kept on the mirror")
public record StartTopicsRequest(
        @Schema(description = "Source topic names", example = "[\"orders\", \"payments\"]")
        List<String> topics,

        @Schema(
                description = "Regexes of source topics to start (added to mirror.topics.include)",
                example = "[\"orders\\\\..*\"]")
        List<String> include,

        @Schema(
                description = "Regexes never to start (added to mirror.topics.exclude)",
                example = "[\"orders\\\\.tmp.*\"]")
        List<String> exclude,

        @Schema(
                description =
                        "Take over destination topics of these names that exist but were not created by this mirror: they get the "
                                + "read-only guard and the mirror-owned configs, and mirror.truncation.policy=recreate may delete them. Without it, "
                                + "such a topic is left untouched and answered with TOPIC_ALREADY_EXISTS",
                defaultValue = "false",
                example = "false")
        Boolean adoptExisting,

        @Schema(
                description =
                        "Start topics named in 'topics' even when mirror.topics.exclude (default __.*) matches them; "
                                + "Kafka's internal topics and the state topic are refused regardless",
                defaultValue = "false",
                example = "false")
        Boolean overrideExclude) {}
