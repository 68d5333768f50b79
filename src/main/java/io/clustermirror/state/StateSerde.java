package io.clustermirror.state;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import java.io.IOException;

/**
 * JSON encoding of {@code __mirror_state} records. Every key and value carries a format version
 * {@code v}; a record from a newer format stops the replay with a clear message rather than being misread.
 * Its own mapper, so REST settings never change the stored format.
 */
public final class StateSerde {

    public static final int FORMAT_VERSION = 1;

    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .addModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    private StateSerde() {}

    public static byte[] key(StateKey key) {
        return write(key);
    }

    public static byte[] value(MirrorRecord value) {
        return write(value);
    }

    public static StateKey readKey(byte[] bytes) {
        StateKey key = read(bytes, StateKey.class);
        requireKnownVersion(key.v(), "key");
        return key;
    }

    public static byte[] value(PartitionRecord value) {
        return write(value);
    }

    public static byte[] value(AclsRecord value) {
        return write(value);
    }

    public static byte[] value(PromotionRecord value) {
        return write(value);
    }

    public static PromotionRecord readPromotion(byte[] bytes) {
        PromotionRecord value = read(bytes, PromotionRecord.class);
        requireKnownVersion(value.v(), "promotion value");
        return value;
    }

    public static byte[] value(DivergenceRecord value) {
        return write(value);
    }

    public static DivergenceRecord readDivergence(byte[] bytes) {
        DivergenceRecord value = read(bytes, DivergenceRecord.class);
        requireKnownVersion(value.v(), "divergence value");
        return value;
    }

    public static byte[] value(VerifiedRecord value) {
        return write(value);
    }

    public static VerifiedRecord readVerified(byte[] bytes) {
        VerifiedRecord value = read(bytes, VerifiedRecord.class);
        requireKnownVersion(value.v(), "verified value");
        return value;
    }

    public static byte[] value(ServiceConfigRecord value) {
        return write(value);
    }

    public static ServiceConfigRecord readServiceConfig(byte[] bytes) {
        ServiceConfigRecord value = read(bytes, ServiceConfigRecord.class);
        requireKnownVersion(value.v(), "config value");
        return value;
    }

    public static AclsRecord readAcls(byte[] bytes) {
        AclsRecord value = read(bytes, AclsRecord.class);
        requireKnownVersion(value.v(), "acls value");
        return value;
    }

    public static PartitionRecord readPartition(byte[] bytes) {
        PartitionRecord value = read(bytes, PartitionRecord.class);
        requireKnownVersion(value.v(), "partition value");
        return value;
    }

    public static MirrorRecord readMirror(byte[] bytes) {
        MirrorRecord value = read(bytes, MirrorRecord.class);
        requireKnownVersion(value.v(), MirrorRecord.SEALED_VERSION, "value of mirror '" + value.name() + "'");
        return value;
    }

    private static void requireKnownVersion(int version, String what) {
        requireKnownVersion(version, FORMAT_VERSION, what);
    }

    private static void requireKnownVersion(int version, int newest, String what) {
        if (version < 1 || version > newest) {
            throw new StateFormatException("__mirror_state " + what + " has format version " + version
                    + "; this service reads versions 1.." + newest + " (was it written by a newer release?)");
        }
    }

    private static byte[] write(Object value) {
        try {
            return MAPPER.writeValueAsBytes(value);
        } catch (IOException e) {
            throw new IllegalStateException("Cannot encode " + value.getClass().getSimpleName(), e);
        }
    }

    private static <T> T read(byte[] bytes, Class<T> type) {
        try {
            return MAPPER.readValue(bytes, type);
        } catch (IOException e) {
            throw new StateFormatException(
                    "Unreadable __mirror_state record (" + type.getSimpleName() + "): " + e.getMessage(), e);
        }
    }
}
