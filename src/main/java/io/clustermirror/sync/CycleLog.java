package io.clustermirror.sync;

import io.clustermirror.metrics.MirrorMetrics;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * What one sync cycle of one mirror records as it goes: per-item errors (each counted under its kind, and logged at
 * WARN unless the last cycle already had it), groups skipped because they are active on the destination, and the ACL
 * sync's state. Steps may report from several Admin threads at once.
 */
public final class CycleLog {

    private static final Logger LOGGER = Logger.getLogger(CycleLog.class);

    private final String mirror;
    private final MirrorMetrics metrics;
    private final SyncReport last;
    private final List<String> errors = Collections.synchronizedList(new ArrayList<>());
    private final List<String> skippedGroups = Collections.synchronizedList(new ArrayList<>());
    private volatile String acls;

    /** @param last the previous cycle's report, or null */
    public CycleLog(String mirror, MirrorMetrics metrics, SyncReport last) {
        this.mirror = mirror;
        this.metrics = metrics;
        this.last = last;
    }

    public String mirror() {
        return mirror;
    }

    /** An item failed: counted under {@code kind} and shown in describe. */
    public void error(String kind, String item, Throwable e) {
        failed(kind, item + ": " + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()));
    }

    /** An item failed, told as "item: reason" (a topic a start refused): counted, shown, logged as {@link #error}. */
    void failed(String kind, String message) {
        errors.add(message);
        metrics.syncError(mirror, kind);
        LOGGER.logf(
                last != null && last.errors().contains(message) ? Logger.Level.DEBUG : Logger.Level.WARN,
                "Mirror %s: %s (%s)",
                mirror,
                message,
                kind);
    }

    /** A failure that is no item's: shown in describe as it is. */
    void note(String message) {
        errors.add(message);
    }

    /** The group has members on the destination: its offsets are not written there. */
    void skippedActiveGroup(String group) {
        skippedGroups.add(group);
        metrics.groupSkippedActive(mirror);
    }

    void acls(String status) {
        acls = status;
    }

    List<String> errors() {
        return List.copyOf(errors);
    }

    SyncReport report(Instant at, Duration took, long cycle) {
        return new SyncReport(at, took.toMillis(), errors(), List.copyOf(skippedGroups), cycle, acls);
    }
}
