package io.clustermirror.mirror;

/**
 * Error names of KIP-1279 (upper-snake-cased), plus the few generic Kafka names this service needs.
 * Each carries the HTTP status it maps to; the REST layer maps them in exactly one place.
 */
public enum MirrorError {
    UNKNOWN_CLUSTER_MIRROR(404, "Unknown cluster mirror"),
    CLUSTER_MIRROR_ALREADY_EXISTS(409, "Cluster mirror already exists"),
    INVALID_CLUSTER_MIRROR_NAME(400, "Invalid cluster mirror name"),
    CLUSTER_MIRROR_NOT_EMPTY(409, "Cluster mirror not empty"),
    INVALID_CLUSTER_MIRROR_STATE(409, "Invalid cluster mirror state"),
    INVALID_MIRROR_PARTITION_STATE(409, "Invalid mirror partition state"),
    INVALID_CONFIG(400, "Invalid config"),
    TOPIC_NOT_IN_CLUSTER_MIRROR(404, "Topic not in cluster mirror"),
    TOPIC_ALREADY_IN_CLUSTER_MIRROR(409, "Topic already in cluster mirror"),
    MIRROR_TOPIC_ALREADY_STOPPED(409, "Mirror topic already stopped"),
    /** Per-topic outcome: the topic does not exist on the source. */
    UNKNOWN_TOPIC_OR_PARTITION(404, "Unknown topic or partition"),
    /** A promote cannot fence the source: it has no authorizer (Kafka's SECURITY_DISABLED). */
    SECURITY_DISABLED(409, "Security disabled"),
    /** A promote cannot fence the source: the mirror's source credentials may not manage ACLs there. */
    CLUSTER_AUTHORIZATION_FAILED(409, "Cluster authorization failed"),
    /** A promote did not reach lag 0 (with no source transaction open) within its timeoutMs: rolled back. */
    REQUEST_TIMED_OUT(409, "Request timed out"),
    /** Per-topic outcome or request error: not a legal topic name, or a topic that is never mirrored (internal, state). */
    INVALID_TOPIC_EXCEPTION(400, "Invalid topic"),
    /** Per-topic outcome: the destination has a topic of that name this mirror did not create. */
    TOPIC_ALREADY_EXISTS(409, "Topic already exists"),
    /** The request body or parameters are malformed (Kafka's INVALID_REQUEST). */
    INVALID_REQUEST(400, "Invalid request"),
    /** The source cluster could not be reached or described in time. */
    SOURCE_METADATA_NOT_AVAILABLE(422, "Source metadata not available"),
    /** This instance cannot serve mirror operations (state not replayed yet, or fenced). */
    COORDINATOR_NOT_AVAILABLE(503, "Coordinator not available"),
    /** The caller may not perform this operation on this cluster mirror (the KIP's ClusterMirrorAuthorization). */
    CLUSTER_MIRROR_AUTHORIZATION_FAILED(403, "Cluster mirror authorization failed"),
    /** No credentials, or credentials no configured mechanism accepts. */
    AUTHENTICATION_FAILED(401, "Authentication failed"),
    NOT_FOUND(404, "Not found"),
    UNKNOWN_SERVER_ERROR(500, "Unknown server error");

    private final int httpStatus;
    private final String title;

    MirrorError(int httpStatus, String title) {
        this.httpStatus = httpStatus;
        this.title = title;
    }

    public int httpStatus() {
        return httpStatus;
    }

    public String title() {
        return title;
    }
}
