package io.clustermirror.sync;

/** Consumer groups and share groups: the sync logic is the same, the Admin calls and the error kind differ. */
public enum GroupKind {
    CONSUMER("ConsumerGroupOffsetSyncError"),
    SHARE("ShareGroupOffsetSyncError");

    private final String errorKind;

    GroupKind(String errorKind) {
        this.errorKind = errorKind;
    }

    /** The {@code kind} tag of {@code cluster_mirror_sync_errors_total} for a failure of this kind. */
    public String errorKind() {
        return errorKind;
    }
}
