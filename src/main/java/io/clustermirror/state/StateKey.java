package io.clustermirror.state;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Objects;

/**
 * Key of a {@code __mirror_state} record. Compaction keeps the newest value per key, so a key names
 * exactly one thing: a mirror ({@link #KIND_MIRROR}), one of its partitions ({@link #KIND_PARTITION}), the ACLs it
 * created ({@link #KIND_ACLS}), the promote of one of its topics ({@link #KIND_PROMOTION}), or what a topic held
 * when it was recreated for diverging ({@link #KIND_DIVERGENCE}).
 *
 * @param v format version of the key
 * @param kind what the record describes
 * @param mirror the mirror it belongs to (also what picks the coordinator partition)
 * @param topic for partition, promotion and divergence records
 * @param partition for partition records
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record StateKey(int v, String kind, String mirror, String topic, Integer partition) {

    public static final String KIND_MIRROR = "mirror";
    public static final String KIND_PARTITION = "partition";
    public static final String KIND_ACLS = "acls";
    public static final String KIND_PROMOTION = "promotion";
    public static final String KIND_DIVERGENCE = "divergence";

    public StateKey {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(mirror, "mirror");
    }

    public static StateKey mirror(String name) {
        return new StateKey(StateSerde.FORMAT_VERSION, KIND_MIRROR, name, null, null);
    }

    public static StateKey acls(String mirror) {
        return new StateKey(StateSerde.FORMAT_VERSION, KIND_ACLS, mirror, null, null);
    }

    public static StateKey promotion(String mirror, String topic) {
        return new StateKey(StateSerde.FORMAT_VERSION, KIND_PROMOTION, mirror, topic, null);
    }

    public static StateKey divergence(String mirror, String topic) {
        return new StateKey(StateSerde.FORMAT_VERSION, KIND_DIVERGENCE, mirror, topic, null);
    }

    public static StateKey partition(String mirror, String topic, int partition) {
        return new StateKey(StateSerde.FORMAT_VERSION, KIND_PARTITION, mirror, topic, partition);
    }
}
