package io.clustermirror.mirror;

import java.time.Instant;
import java.util.Objects;

/**
 * A cluster mirror: a named link from one source cluster (identified by its cluster id, recorded at
 * creation and checked thereafter) to the destination cluster this service runs against.
 */
public record Mirror(String name, MirrorConfig config, String sourceClusterId, Instant createdAt, Instant updatedAt) {

    public Mirror {
        MirrorName.validate(name);
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(sourceClusterId, "sourceClusterId");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(updatedAt, "updatedAt");
    }

    public Mirror withConfig(MirrorConfig newConfig, Instant now) {
        return new Mirror(name, newConfig, sourceClusterId, createdAt, now);
    }
}
