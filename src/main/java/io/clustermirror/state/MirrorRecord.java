package io.clustermirror.state;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfig;
import java.time.Instant;
import java.util.Map;

/**
 * Value of a mirror's {@code __mirror_state} record; a tombstone deletes the mirror. {@code config} holds the values in
 * clear; with a state encryption key, the secret ones are in {@code sealed} instead (format version 2), each with the
 * id of its key. Without a key they stay in {@code config}: the destination must then protect this topic with ACLs.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record MirrorRecord(
        int v,
        String name,
        Map<String, String> config,
        Map<String, SecretCipher.Sealed> sealed,
        String sourceClusterId,
        Instant createdAt,
        Instant updatedAt) {

    /** The version of a record holding sealed values: a release that cannot open them refuses it. */
    static final int SEALED_VERSION = 2;

    public MirrorRecord {
        config = Map.copyOf(config);
        sealed = sealed == null ? null : Map.copyOf(sealed);
    }

    static MirrorRecord of(Mirror mirror, Map<String, String> clear, Map<String, SecretCipher.Sealed> sealed) {
        return new MirrorRecord(
                sealed == null ? StateSerde.FORMAT_VERSION : SEALED_VERSION,
                mirror.name(),
                clear,
                sealed,
                mirror.sourceClusterId(),
                mirror.createdAt(),
                mirror.updatedAt());
    }

    Mirror toMirror(Map<String, String> values) {
        return new Mirror(name, new MirrorConfig(values), sourceClusterId, createdAt, updatedAt);
    }

    @Override
    public String toString() {
        return "MirrorRecord[v=" + v + ", name=" + name + ", sourceClusterId=" + sourceClusterId + "]";
    }
}
