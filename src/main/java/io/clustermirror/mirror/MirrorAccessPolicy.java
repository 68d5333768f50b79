package io.clustermirror.mirror;

import com.google.re2j.Pattern;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Who may do what to which cluster mirror: three roles over every mirror, plus grants of operations on mirror-name
 * patterns to principals or roles. Pure: the caller's principal and roles come from whatever mechanism authenticated
 * it.
 */
public final class MirrorAccessPolicy {

    public static final String VIEWER = "mirror-viewer";
    public static final String OPERATOR = "mirror-operator";
    public static final String ADMIN = "mirror-admin";

    private static final Map<String, Set<ClusterMirrorOperation>> ROLES = Map.of(
            VIEWER, EnumSet.of(ClusterMirrorOperation.DESCRIBE),
            OPERATOR, EnumSet.of(ClusterMirrorOperation.DESCRIBE, ClusterMirrorOperation.ALTER),
            ADMIN, EnumSet.allOf(ClusterMirrorOperation.class));

    /** An authenticated caller: its principal name and roles. */
    public record Caller(String principal, Set<String> roles) {
        public Caller {
            roles = Set.copyOf(roles);
        }
    }

    /**
     * Operations on the mirrors whose whole name matches {@code mirrors}, for the principals and the holders of the
     * roles named (either list may be empty, not both).
     */
    public record Grant(
            Set<String> principals, Set<String> roles, Set<ClusterMirrorOperation> operations, Pattern mirrors) {
        public Grant {
            principals = Set.copyOf(principals);
            roles = Set.copyOf(roles);
            operations = operations.isEmpty() ? Set.of() : EnumSet.copyOf(operations);
            if (principals.isEmpty() && roles.isEmpty()) {
                throw new IllegalArgumentException("a grant names principals or roles");
            }
        }

        boolean appliesTo(Caller caller, String mirror) {
            return (principals.contains(caller.principal())
                            || caller.roles().stream().anyMatch(roles::contains))
                    && mirrors.matcher(mirror).matches();
        }
    }

    private final List<Grant> grants;

    public MirrorAccessPolicy(Collection<Grant> grants) {
        this.grants = List.copyOf(grants);
    }

    /** What {@code caller} may do to the mirror named {@code mirror}, in the KIP's order. */
    public Set<ClusterMirrorOperation> operations(Caller caller, String mirror) {
        Set<ClusterMirrorOperation> allowed = EnumSet.noneOf(ClusterMirrorOperation.class);
        caller.roles().forEach(role -> allowed.addAll(ROLES.getOrDefault(role, Set.of())));
        grants.stream().filter(g -> g.appliesTo(caller, mirror)).forEach(g -> allowed.addAll(g.operations()));
        return allowed;
    }

    /**
     * Whether the caller may read and change the service's own settings (the replication throttle): they act on every
     * mirror at once, so only the {@link #ADMIN} role may, and no grant (which names mirrors) reaches them.
     */
    public boolean allowsServiceWide(Caller caller) {
        return caller.roles().contains(ADMIN);
    }

    public boolean allows(Caller caller, ClusterMirrorOperation operation, String mirror) {
        return operations(caller, mirror).contains(operation);
    }
}
