package io.clustermirror.api;

import java.util.List;

import io.clustermirror.coordinator.TopicOutcome;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(name = "TopicsResponse", description = "One outcome per topic")
public record TopicsResponse(List<TopicOutcome> topics) {
}
