package io.clustermirror.state;

import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfig;
import java.time.Instant;
import java.util.Map;

/**
 * Value of a mirror's {@code __mirror_state} record; a tombstone deletes the mirror.
 * Holds the full config, secrets included: the destination must protect this topic with ACLs.
 */
public record MirrorRecord(
        int v, String name, Map<String, String> config, String sourceClusterId, Instant createdAt, Instant updatedAt) {

    public MirrorRecord {
        config = Map.copyOf(config);
    }

    public static MirrorRecord of(Mirror mirror) {
        return new MirrorRecord(
                StateSerde.FORMAT_VERSION,
                mirror.name(),
                mirror.config().values(),
                mirror.sourceClusterId(),
                mirror.createdAt(),
                mirror.updatedAt());
    }

    public Mirror toMirror() {
        return new Mirror(name, new MirrorConfig(config), sourceClusterId, createdAt, updatedAt);
    }

    @Override
    public String toString() {
        return "MirrorRecord[v=" + v + ", name=" + name + ", sourceClusterId=" + sourceClusterId + "]";
    }
}
