package io.clustermirror.coordinator;

/**
 * Where this instance's coordinator stands: not yet loaded (with the last reason), serving, or
 * fenced by another instance (permanent until restart).
 */
public record CoordinatorStatus(Phase phase, String reason) {

    public enum Phase {
        LOADING,
        ACTIVE,
        FENCED
    }

    public static CoordinatorStatus loading(String reason) {
        return new CoordinatorStatus(Phase.LOADING, reason);
    }

    public static CoordinatorStatus active() {
        return new CoordinatorStatus(Phase.ACTIVE, "state replayed");
    }

    public static CoordinatorStatus fenced(String reason) {
        return new CoordinatorStatus(Phase.FENCED, reason);
    }

    public boolean isActive() {
        return phase == Phase.ACTIVE;
    }
}
