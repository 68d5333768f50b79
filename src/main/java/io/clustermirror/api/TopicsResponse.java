package io.clustermirror.api;

import io.clustermirror.coordinator.TopicOutcome;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(name = "TopicsResponse", description = "One outcome per topic")
public record TopicsResponse(List<TopicOutcome> topics) {}
