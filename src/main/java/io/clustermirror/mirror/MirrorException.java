package io.clustermirror.mirror;

import java.util.List;
import java.util.Objects;

/**
 * The one error type of the service: a KIP error name, an operator-readable reason and, for input
 * errors, the request field at fault.
 */
public class MirrorException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final MirrorError error;
    private final String field;
    /** Per partition, where a promote stood when it gave up; empty for every other error. */
    private final transient List<PartitionLag> lag;

    public MirrorException(MirrorError error, String message) {
        this(error, message, null, null);
    }

    public MirrorException(MirrorError error, String message, String field) {
        this(error, message, field, null);
    }

    public MirrorException(MirrorError error, String message, String field, Throwable cause) {
        this(error, message, field, cause, List.of());
    }

    /** A promote's refusal, with where each partition stood. */
    public static MirrorException withLag(MirrorError error, String message, List<PartitionLag> lag) {
        return new MirrorException(error, message, null, null, lag);
    }

    private MirrorException(MirrorError error, String message, String field, Throwable cause, List<PartitionLag> lag) {
        super(message, cause);
        this.error = Objects.requireNonNull(error);
        this.field = field;
        this.lag = List.copyOf(lag);
    }

    /** Per partition, where a promote stood when it gave up (empty unless it is a promote's refusal). */
    public List<PartitionLag> lag() {
        return lag;
    }

    public MirrorError error() {
        return error;
    }

    /** The request field at fault (e.g. {@code config.bootstrap.servers}), or null. */
    public String field() {
        return field;
    }

    public static MirrorException unknownMirror(String name) {
        return new MirrorException(MirrorError.UNKNOWN_CLUSTER_MIRROR, "Cluster mirror '" + name + "' does not exist");
    }

    public static MirrorException invalidConfig(String key, String message) {
        return new MirrorException(MirrorError.INVALID_CONFIG, message, "config." + key);
    }
}
