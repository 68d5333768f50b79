package io.clustermirror.mirror;

/** The KIP's operations on the ClusterMirror resource, which the control plane authorizes. */
public enum ClusterMirrorOperation {
    /** Create a mirror. */
    CREATE,
    /** List and describe mirrors and their topics. */
    DESCRIBE,
    /** Alter a mirror's config; every topic verb, promote included. */
    ALTER,
    /** Delete a mirror. */
    DELETE
}
