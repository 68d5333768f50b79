package io.clustermirror.api;

import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(
        name = "AlterMirrorConfigRequest",
        description = "Keys to set and keys to remove, applied together or not at all")
public record AlterMirrorConfigRequest(
        @Schema(
                description = "Config keys to set to these values",
                example = "{\"mirror.truncation.policy\": \"recreate\"}")
        Map<String, String> set,

        @Schema(description = "Config keys to remove (back to their defaults)", example = "[\"mirror.groups.exclude\"]")
        List<String> delete) {}
