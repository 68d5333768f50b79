package io.clustermirror.coordinator;

import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.state.MirrorStateStore;
import io.smallrye.mutiny.Uni;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Whether this instance may act for a mirror now. The state is active ({@link StateKeeper}), and the mirror's state
 * partition is one this instance holds: taken over from the state group ({@link StateGroup}) and replayed. A request
 * about a mirror held elsewhere, or being moved, is refused with COORDINATOR_NOT_AVAILABLE, to retry (or to be
 * forwarded to its owner); a mutation runs on the coordinator thread after the same checks ({@link #onCoordinator}).
 */
public final class HeldMirrors {

    private final StateKeeper keeper;
    private final StateGroup group;
    private final CoordinatorThread thread;
    private final ServiceInstance.Identity identity;

    HeldMirrors(StateKeeper keeper, StateGroup group, CoordinatorThread thread, ServiceInstance.Identity identity) {
        this.keeper = keeper;
        this.group = group;
        this.thread = thread;
        this.identity = identity;
    }

    /** {@code action} on the coordinator thread, once the state is active there (refused at once while it is not). */
    <T> Uni<T> onCoordinator(Supplier<T> action) {
        try {
            requireActive(); // answered at once while the state is unavailable, not after the tasks queued before it
        } catch (MirrorException e) {
            return Uni.createFrom().failure(e);
        }
        return thread.call(() -> {
            requireActive();
            return action.get();
        });
    }

    void requireActive() {
        CoordinatorStatus current = keeper.status();
        if (!current.isActive()) {
            throw new MirrorException(
                    MirrorError.COORDINATOR_NOT_AVAILABLE,
                    "Mirror state is not available on this instance (" + current.phase() + ": " + current.reason()
                            + ")");
        }
    }

    /** The mirror; UNKNOWN_CLUSTER_MIRROR if it does not exist, COORDINATOR_NOT_AVAILABLE if it is not held here. */
    Mirror require(String name) {
        // Held before and after the read: a partition is held only after its mirrors joined the state (take) and stops
        // being held before they leave it (give up), so a mirror missing between two holds is truly absent.
        boolean heldBefore = holds(name);
        Mirror mirror = keeper.state().mirrors().get(name);
        if (mirror == null) {
            if (!heldBefore) {
                throw notHeld(name);
            }
            requireHeld(name);
            throw MirrorException.unknownMirror(name);
        }
        return mirror;
    }

    /** CLUSTER_MIRROR_ALREADY_EXISTS if the mirror exists; COORDINATOR_NOT_AVAILABLE if its name is not held here. */
    void requireAbsent(String name) {
        requireHeld(name);
        boolean exists = keeper.state().mirrors().containsKey(name);
        requireHeld(name); // held on both sides of the read (see require)
        if (exists) {
            throw new MirrorException(
                    MirrorError.CLUSTER_MIRROR_ALREADY_EXISTS, "Cluster mirror '" + name + "' already exists", "name");
        }
    }

    /**
     * Refuses (503, to retry) a request about a mirror whose state partition this instance does not hold now: the
     * state group is moving it (a request forwarded here just before this instance gave it up, or before it finished
     * taking it over), so only its owner can tell whether the mirror exists.
     */
    private void requireHeld(String name) {
        if (!holds(name)) {
            throw notHeld(name);
        }
    }

    private MirrorException notHeld(String name) {
        return new MirrorException(
                MirrorError.COORDINATOR_NOT_AVAILABLE,
                "Mirror '" + name + "' lives in state partition " + statePartitionOf(name)
                        + ", which this instance does not hold now (the state group is moving it); retry");
    }

    /** Whether this instance holds the mirror's state partition now (true before the state topic is known). */
    boolean holds(String name) {
        int partition = statePartitionOf(name);
        return partition < 0 || keeper.holds(partition);
    }

    /** Whether this instance's lease in the state group is valid: it may act for the mirrors it holds (any thread). */
    boolean leaseValid() {
        return group.leaseValid();
    }

    /** This instance's id and advertised URL. */
    ServiceInstance.Identity identity() {
        return identity;
    }

    /** Who owns which state partition, as the state group last assigned them. */
    public StateOwnership ownership() {
        return group.ownership();
    }

    /** Whether this instance owns the state partition, as the state group last assigned them. */
    boolean ownsStatePartition(int partition) {
        return ownership()
                .ownerOf(partition)
                .map(o -> o.id().equals(identity.id()))
                .orElse(false);
    }

    /** The state partitions this instance holds now (taken over and replayed): whose mirrors it lists. */
    public Set<Integer> statePartitions() {
        return keeper.held();
    }

    /** The state topic's partition count (0 before it is known). */
    public int statePartitionCount() {
        return keeper.statePartitions();
    }

    /** The state partition of a mirror's records (-1 before the state topic is known). */
    public int statePartitionOf(String mirror) {
        int partitions = keeper.statePartitions();
        return partitions == 0 ? -1 : MirrorStateStore.partitionFor(mirror, partitions);
    }
}
