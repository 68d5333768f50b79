package io.clustermirror.api;

import io.clustermirror.mirror.ClusterMirrorOperation;
import io.clustermirror.mirror.MirrorAccessPolicy;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import jakarta.enterprise.context.RequestScoped;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/** Who is calling (set by {@link AccessFilter}) and what the request touched, for the checks and the audit line. */
@RequestScoped
public class RequestCaller {

    private MirrorAccessPolicy policy;
    private MirrorAccessPolicy.Caller caller;
    private ClusterMirrorOperation operation;
    private String mirror;
    private List<String> topics = List.of();

    void authenticated(MirrorAccessPolicy policy, MirrorAccessPolicy.Caller caller) {
        this.policy = policy;
        this.caller = caller;
    }

    private boolean forwarded;

    void operation(ClusterMirrorOperation operation, String mirror) {
        this.operation = operation;
        this.mirror = mirror;
    }

    /** The principal's name, or {@code anonymous} where authentication is off. */
    String principal() {
        return caller == null ? "anonymous" : caller.principal();
    }

    ClusterMirrorOperation operation() {
        return operation;
    }

    /** The request went to the instance that owns its mirror, which audits it: this instance does not. */
    void forwarded() {
        this.forwarded = true;
    }

    boolean isForwarded() {
        return forwarded;
    }

    String mirror() {
        return mirror;
    }

    List<String> topics() {
        return topics;
    }

    /** Adds topics (or patterns) the request names. */
    void topics(List<String> named) {
        List<String> all = new ArrayList<>(topics);
        all.addAll(named);
        this.topics = List.copyOf(all);
    }

    /** Every operation where authentication is off; else what the policy gives the caller on this mirror. */
    Set<ClusterMirrorOperation> operations(String mirrorName) {
        return policy == null ? EnumSet.allOf(ClusterMirrorOperation.class) : policy.operations(caller, mirrorName);
    }

    boolean allows(ClusterMirrorOperation op, String mirrorName) {
        return policy == null || policy.allows(caller, op, mirrorName);
    }

    /** 403 CLUSTER_MIRROR_AUTHORIZATION_FAILED unless the caller may perform {@code op} service-wide (settings, instances). */
    void requireServiceWide(ClusterMirrorOperation op) {
        if (policy != null && !policy.allowsServiceWide(caller)) {
            throw new MirrorException(
                    MirrorError.CLUSTER_MIRROR_AUTHORIZATION_FAILED,
                    "'" + principal() + "' may not " + op + " the service-wide resources (its settings and "
                            + "instances): only the "
                            + MirrorAccessPolicy.ADMIN + " role may");
        }
    }

    /** 403 CLUSTER_MIRROR_AUTHORIZATION_FAILED unless the caller may perform {@code op} on {@code mirrorName}. */
    void require(ClusterMirrorOperation op, String mirrorName) {
        this.mirror = mirrorName;
        if (!allows(op, mirrorName)) {
            throw new MirrorException(
                    MirrorError.CLUSTER_MIRROR_AUTHORIZATION_FAILED,
                    "'" + principal() + "' may not " + op + " cluster mirror '" + mirrorName + "'");
        }
    }
}
