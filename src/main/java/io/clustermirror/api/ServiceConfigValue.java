package io.clustermirror.api;

import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(name = "ServiceConfigValue", description = "The value to set, as a string (Kafka's config values are)")
public record ServiceConfigValue(
        @Schema(description = "For mirror.replication.throttled.rate: bytes per second, positive", example = "2097152")
        String value) {}
