package io.clustermirror.sync;

import io.clustermirror.mirror.Mirror;
import io.smallrye.mutiny.Uni;
import java.util.Optional;

/**
 * The first step of every cycle: is the source still the cluster the mirror was created for? If not, the mirror halts
 * (and the cycle ends: nothing of another cluster is synced); once it is again, the mirror goes on.
 */
final class ClusterIdStep {

    private ClusterIdStep() {}

    /** Halt, unhalt, or nothing to do. */
    static Uni<Optional<SyncAction>> check(Mirror mirror, boolean halted, ClusterMetadata source) {
        return source.clusterId().map(id -> {
            if (!id.equals(mirror.sourceClusterId())) {
                return Optional.of(new SyncAction.Halt(id));
            }
            return halted ? Optional.of(new SyncAction.Unhalt()) : Optional.empty();
        });
    }
}
