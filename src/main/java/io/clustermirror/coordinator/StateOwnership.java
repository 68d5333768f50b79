package io.clustermirror.coordinator;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Who owns which partition of {@code __mirror_state}, as the group leader last assigned them: every member learns the
 * whole map from its assignment ({@link MirrorStateAssignor}). A partition that moves is owned by no one between the
 * two rebalances of the cooperative protocol; a request for one of its mirrors is answered 503 meanwhile.
 *
 * @param members each member with its id, advertised URL and partitions
 * @param weights mirrors per partition when the leader assigned them
 */
public record StateOwnership(List<Owner> members, Map<Integer, Integer> weights) {

    /** Before the first assignment: no one owns anything. */
    public static final StateOwnership NONE = new StateOwnership(List.of(), Map.of());

    public StateOwnership {
        members = List.copyOf(members);
        weights = Map.copyOf(weights);
    }

    /** A member: its instance id, its advertised URL and the state partitions it owns. */
    public record Owner(String id, String url, Set<Integer> partitions) {
        public Owner {
            partitions = Set.copyOf(partitions);
        }
    }

    /** The member that owns the partition, if any does now. */
    public Optional<Owner> ownerOf(int partition) {
        return members.stream().filter(m -> m.partitions().contains(partition)).findFirst();
    }
}
