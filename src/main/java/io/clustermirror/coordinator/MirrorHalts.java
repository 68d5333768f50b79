package io.clustermirror.coordinator;

import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.Mirror;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.jboss.logging.Logger;

/**
 * Mirrors halted because their source answers with another cluster id than the one they were created for: no data
 * plane until the metadata sync finds the right cluster again, then every partition continues from its persisted
 * state. The partition states themselves do not change: the halt is the mirror's, shown in describe and counted.
 */
final class MirrorHalts {

    private static final Logger LOGGER = Logger.getLogger(MirrorHalts.class);

    private final PartitionLifecycle.Host host;
    private final CoordinatorThread thread;
    private final MirrorMetrics metrics;
    /** Continues a mirror's partitions from their persisted states. */
    private final Consumer<String> resume;

    private final Map<String, String> halted = new ConcurrentHashMap<>();

    MirrorHalts(
            PartitionLifecycle.Host host, CoordinatorThread thread, MirrorMetrics metrics, Consumer<String> resume) {
        this.host = host;
        this.thread = thread;
        this.metrics = metrics;
        this.resume = resume;
    }

    /** Why the mirror is halted, or null. */
    String reason(String name) {
        return halted.get(name);
    }

    boolean isHalted(String name) {
        return halted.containsKey(name);
    }

    /** A deleted mirror leaves nothing behind. */
    void forget(String name) {
        halted.remove(name);
    }

    /**
     * The source cluster's id is not the one the mirror was created for: take every partition out of the data
     * plane (persisted states stay as they are) until {@link #unhalt} finds the right cluster again.
     */
    void halt(String name, String actualClusterId) {
        thread.run("halt of " + name, () -> {
            Mirror mirror = host.mirror(name).orElse(null);
            if (mirror == null || halted.containsKey(name)) {
                return;
            }
            String reason = "source cluster id is " + actualClusterId + ", but mirror '" + name + "' mirrors cluster "
                    + mirror.sourceClusterId() + " (bootstrap "
                    + mirror.config().bootstrapServers()
                    + "): mirroring halted; point bootstrap.servers back at that cluster, or delete the mirror";
            halted.put(name, reason);
            metrics.mirrorHalted(name);
            LOGGER.errorf("Mirror %s: %s", name, reason);
            host.liveRuntime(name)
                    .ifPresent(r -> host.partitions(name)
                            .keySet()
                            .forEach(p -> r.dataPlane().remove(p, false)));
        });
    }

    /** The source is the right cluster again: partitions continue from their persisted states. */
    void unhalt(String name) {
        thread.run("unhalt of " + name, () -> {
            if (halted.remove(name) != null) {
                LOGGER.infof("Mirror %s: source cluster id matches again; mirroring resumes", name);
                host.liveRuntime(name).ifPresent(r -> resume.accept(name));
            }
        });
    }
}
