package io.clustermirror.api;

import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(
        name = "StartVerificationRequest",
        description = "The mirror's topics to verify: by name and/or by regex (matched against its topics, any state)")
public record StartVerificationRequest(
        @Schema(description = "Topics of the mirror", example = "[\"orders\"]")
        List<String> topics,

        @Schema(description = "Regexes of the mirror's topics to verify", example = "[\"orders\\\\..*\"]")
        List<String> include,

        @Schema(
                description = "Where each partition starts: 'start' (the first offset both logs hold) or 'last' "
                        + "(where the last verification of the partition that found it identical ended)",
                defaultValue = "start",
                enumeration = {"start", "last"},
                example = "last")
        String from) {}
