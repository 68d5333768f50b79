package io.clustermirror.coordinator;

/**
 * Where this instance's coordinator stands: not yet serving (with the last reason: the state topic not reachable, the
 * state group not joined, its partitions not taken over), or serving. A state partition another instance took over is
 * given up alone; the instance goes on serving the others.
 */
public record CoordinatorStatus(Phase phase, String reason) {

    public enum Phase {
        LOADING,
        ACTIVE
    }

    public static CoordinatorStatus loading(String reason) {
        return new CoordinatorStatus(Phase.LOADING, reason);
    }

    public static CoordinatorStatus active() {
        return new CoordinatorStatus(Phase.ACTIVE, "state replayed");
    }

    public boolean isActive() {
        return phase == Phase.ACTIVE;
    }
}
