package io.clustermirror.state;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Objects;

/**
 * Key of a {@code __mirror_state} record. Compaction keeps the newest value per key, so a key names
 * exactly one thing: a mirror ({@link #KIND_MIRROR}), one of its partitions ({@link #KIND_PARTITION}), the ACLs it
 * created ({@link #KIND_ACLS}), the promote of one of its topics ({@link #KIND_PROMOTION}), what a topic held
 * when it was recreated for diverging ({@link #KIND_DIVERGENCE}), how far a verification last confirmed one of its
 * partitions identical ({@link #KIND_VERIFIED}), or a service setting changed at runtime ({@link #KIND_CONFIG}).
 *
 * @param v format version of the key
 * @param kind what the record describes
 * @param mirror the mirror it belongs to (also what picks the coordinator partition); empty for a service-wide record
 *     (no mirror has an empty name, and a release that does not know the kind skips it rather than refuse a key
 *     without a mirror)
 * @param topic for partition, promotion and divergence records
 * @param partition for partition records
 * @param name for config records: the setting's key
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record StateKey(int v, String kind, String mirror, String topic, Integer partition, String name) {

    public static final String KIND_MIRROR = "mirror";
    public static final String KIND_PARTITION = "partition";
    public static final String KIND_ACLS = "acls";
    public static final String KIND_PROMOTION = "promotion";
    public static final String KIND_DIVERGENCE = "divergence";
    public static final String KIND_CONFIG = "config";
    public static final String KIND_VERIFIED = "verified";

    public StateKey {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(mirror, "mirror");
    }

    public static StateKey mirror(String name) {
        return new StateKey(StateSerde.FORMAT_VERSION, KIND_MIRROR, name, null, null, null);
    }

    public static StateKey acls(String mirror) {
        return new StateKey(StateSerde.FORMAT_VERSION, KIND_ACLS, mirror, null, null, null);
    }

    public static StateKey promotion(String mirror, String topic) {
        return new StateKey(StateSerde.FORMAT_VERSION, KIND_PROMOTION, mirror, topic, null, null);
    }

    public static StateKey divergence(String mirror, String topic) {
        return new StateKey(StateSerde.FORMAT_VERSION, KIND_DIVERGENCE, mirror, topic, null, null);
    }

    public static StateKey partition(String mirror, String topic, int partition) {
        return new StateKey(StateSerde.FORMAT_VERSION, KIND_PARTITION, mirror, topic, partition, null);
    }

    /** How far a consistency verification last confirmed one of the mirror's partitions identical. */
    public static StateKey verified(String mirror, String topic, int partition) {
        return new StateKey(StateSerde.FORMAT_VERSION, KIND_VERIFIED, mirror, topic, partition, null);
    }

    /** A service setting changed at runtime ({@code /v1/config}), for every instance that replays the state. */
    public static StateKey config(String name) {
        return new StateKey(StateSerde.FORMAT_VERSION, KIND_CONFIG, "", null, null, name);
    }
}
