package io.clustermirror.coordinator;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.clustermirror.mirror.MirrorError;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** The outcome of a topic verb for one topic: a state reached, or an error for that topic alone. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@Schema(name = "TopicOutcome", description = "What a topic verb did to one topic")
public record TopicOutcome(
        @Schema(example = "orders") String topic,

        @Schema(description = "Partitions of the topic in this mirror", example = "4")
        Integer partitions,

        @Schema(description = "The state the topic's partitions moved to, when it succeeded", example = "STARTED")
        String result,

        @Schema(description = "KIP error name, when it failed for this topic", example = "UNKNOWN_TOPIC_OR_PARTITION")
        String errorCode,

        @Schema(description = "Why it failed", example = "topic does not exist on the source cluster")
        String error) {

    public static TopicOutcome ok(String topic, int partitions, String result) {
        return new TopicOutcome(topic, partitions, result, null, null);
    }

    public static TopicOutcome error(String topic, MirrorError code, String error) {
        return new TopicOutcome(topic, null, null, code.name(), error);
    }
}
