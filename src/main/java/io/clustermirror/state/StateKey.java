package io.clustermirror.state;

import java.util.Objects;

/**
 * Key of a {@code __mirror_state} record. Compaction keeps the newest value per key, so a key names
 * exactly one thing: today a mirror ({@link #KIND_MIRROR}); partition states join later under their own kind.
 *
 * @param v format version of the key
 * @param kind what the record describes
 * @param mirror the mirror it belongs to (also what picks the coordinator partition)
 */
public record StateKey(int v, String kind, String mirror) {

    public static final String KIND_MIRROR = "mirror";

    public StateKey {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(mirror, "mirror");
    }

    public static StateKey mirror(String name) {
        return new StateKey(StateSerde.FORMAT_VERSION, KIND_MIRROR, name);
    }
}
