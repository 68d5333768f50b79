package io.clustermirror.api;

import io.clustermirror.mirror.ServiceConfigEntry;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(
        name = "ServiceConfig",
        description = "A service setting that changes at runtime, as Kafka's DescribeConfigs shows a broker's")
public record ServiceConfigDescription(
        @Schema(example = "mirror.replication.throttled.rate")
        String name,

        @Schema(description = "The value in force", example = "2097152")
        String value,

        @Schema(
                description = "Where the value comes from: DYNAMIC (set at runtime, kept in __mirror_state), STATIC "
                        + "(the application config) or DEFAULT",
                enumeration = {"DYNAMIC", "STATIC", "DEFAULT"},
                example = "DYNAMIC")
        String source,

        @Schema(
                description = "Every level that sets it, in precedence order (the last is the default): deleting the "
                        + "dynamic value returns to the next")
        List<Synonym> synonyms,

        @Schema(example = "Bytes per second this instance fetches from every source, all mirrors together")
        String documentation) {

    @Schema(name = "ServiceConfigSynonym", description = "The value one level sets")
    public record Synonym(
            @Schema(
                    enumeration = {"DYNAMIC", "STATIC", "DEFAULT"},
                    example = "DEFAULT")
            String source,

            @Schema(example = "9223372036854775807") String value) {}

    static ServiceConfigDescription of(ServiceConfigEntry entry) {
        return new ServiceConfigDescription(
                entry.name(),
                entry.value(),
                entry.source().name(),
                entry.synonyms().stream()
                        .map(s -> new Synonym(s.source().name(), s.value()))
                        .toList(),
                entry.documentation());
    }
}
