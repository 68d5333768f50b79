package io.clustermirror.api;

import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(name = "MirrorList", description = "ListClusterMirrors: every mirror, sorted by name")
public record MirrorList(List<MirrorSummary> mirrors) {}
