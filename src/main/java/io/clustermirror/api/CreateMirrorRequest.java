package io.clustermirror.api;

import java.util.Map;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(
        name = "CreateMirrorRequest",
        description = "A new cluster mirror: its name and how to reach the source cluster")
public record CreateMirrorRequest(
        @Schema(
                required = true,
                description = "1-249 characters of [a-zA-Z0-9._-], not '.' or '..'",
                example = "dr-east")
        String name,

        @Schema(
                required = true,
                description =
                        "Source connection (bootstrap.servers, security.protocol, sasl.*, ssl.*) and mirror.* policies",
                example = "{\"bootstrap.servers\": \"source-kafka:9092\", \"mirror.topics.include\": \"orders.*\"}")
        Map<String, String> config) {}
