package io.clustermirror.sync;

import java.time.Instant;
import java.util.List;

/**
 * What a mirror's last metadata sync cycle did: when, how long, the per-item errors, the groups skipped because they
 * are active on the destination, the cycle count, and the state of ACL sync and read-only enforcement.
 */
public record SyncReport(
        Instant lastCycleAt,
        long lastCycleMs,
        List<String> errors,
        List<String> groupsSkippedActive,
        long cycles,
        String acls) {

    public SyncReport {
        errors = List.copyOf(errors);
        groupsSkippedActive = List.copyOf(groupsSkippedActive);
    }
}
