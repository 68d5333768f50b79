package io.clustermirror.api;

import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(name = "ServiceConfigList", description = "The service settings that change at runtime, sorted by name")
public record ServiceConfigList(List<ServiceConfigDescription> configs) {}
