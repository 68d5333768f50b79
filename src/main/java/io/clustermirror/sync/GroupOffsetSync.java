package io.clustermirror.sync;

import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorPartition;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;

/**
 * One group-offset sync outside the schedule, for a promote's last step: the consumer and share groups the mirror
 * syncs get their committed offsets on these partitions copied to the destination, as a sync cycle would copy them.
 */
public final class GroupOffsetSync {

    private GroupOffsetSync() {}

    /** The outcome: the groups skipped because they are active on the destination, and the errors per group. */
    public static Uni<SyncReport> once(
            Mirror mirror,
            Set<MirrorPartition> partitions,
            ClusterMetadata source,
            ClusterMetadata destination,
            MirrorMetrics metrics) {
        CycleLog log = new CycleLog(mirror.name(), metrics, null);
        long started = System.nanoTime();
        return new GroupOffsetStep()
                .sync(mirror, partitions, source, destination, log)
                .map(done -> log.report(Instant.now(), Duration.ofNanos(System.nanoTime() - started), 0));
    }
}
