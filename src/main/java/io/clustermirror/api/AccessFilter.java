package io.clustermirror.api;

import io.clustermirror.mirror.MirrorAccessPolicy;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.quarkus.arc.ClientProxy;
import io.quarkus.security.AuthenticationFailedException;
import io.quarkus.security.identity.CurrentIdentityAssociation;
import io.quarkus.security.identity.SecurityIdentity;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ResourceInfo;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.security.auth.x500.X500Principal;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * Authentication and authorization of every REST method that names a {@link ClusterMirrorAccess}: 401
 * AUTHENTICATION_FAILED without acceptable credentials, 403 CLUSTER_MIRROR_AUTHORIZATION_FAILED when the caller may not
 * perform the operation on the mirror the path names. Runs before the body is read. The mechanisms themselves are
 * Quarkus' (Basic, JWT, mTLS), asked lazily here ({@code quarkus.http.auth.proactive=false}) so that their refusals are
 * answered as problem+json like every other error.
 */
public class AccessFilter {

    private final ControlPlaneSecurity security;
    private final CurrentIdentityAssociation identities;
    private final RequestCaller caller;

    public AccessFilter(ControlPlaneSecurity security, CurrentIdentityAssociation identities, RequestCaller caller) {
        this.security = security;
        this.identities = identities;
        this.caller = caller;
    }

    @ServerRequestFilter
    public Uni<Void> authorize(ContainerRequestContext request, ResourceInfo resource) {
        ClusterMirrorAccess access = resource.getResourceMethod() == null
                ? null
                : resource.getResourceMethod().getAnnotation(ClusterMirrorAccess.class);
        if (access == null) {
            // fail closed: a REST method that does not say which operation it performs is served only while open
            return security.mode() == ControlPlaneSecurity.Mode.ENFORCED
                            || security.mode() == ControlPlaneSecurity.Mode.REFUSED
                    ? Uni.createFrom()
                            .failure(new MirrorException(
                                    MirrorError.CLUSTER_MIRROR_AUTHORIZATION_FAILED,
                                    "This endpoint names no ClusterMirror operation and is not served"))
                    : Uni.createFrom().voidItem();
        }
        String mirror = request.getUriInfo().getPathParameters().getFirst("name");
        // this request's own instance: the identity may be resolved on another thread than the request context's
        RequestCaller current = ClientProxy.unwrap(caller);
        current.operation(access.value(), mirror);
        switch (security.mode()) {
            case DISABLED, DEV_OPEN -> {
                return Uni.createFrom().voidItem();
            }
            case REFUSED -> {
                return Uni.createFrom()
                        .failure(new MirrorException(
                                MirrorError.AUTHENTICATION_FAILED,
                                "No authentication is configured: this service serves nothing"));
            }
            default -> {
                return identities
                        .getDeferredIdentity()
                        .onFailure(AuthenticationFailedException.class)
                        .transform(e -> new MirrorException(
                                MirrorError.AUTHENTICATION_FAILED, "The credentials were not accepted"))
                        .invoke(identity -> check(current, identity, access, mirror))
                        .replaceWithVoid();
            }
        }
    }

    private void check(RequestCaller caller, SecurityIdentity identity, ClusterMirrorAccess access, String mirror) {
        if (identity.isAnonymous()) {
            throw new MirrorException(
                    MirrorError.AUTHENTICATION_FAILED,
                    "Authentication is required: " + String.join(", ", security.mechanisms()));
        }
        caller.authenticated(
                security.policy(), new MirrorAccessPolicy.Caller(principal(identity), identity.getRoles()));
        if (access.serviceWide()) {
            caller.requireServiceWide(access.value());
        } else if (mirror != null) {
            caller.require(access.value(), mirror);
        }
    }

    /**
     * The caller's name for grants and the audit: a Basic user, a JWT's principal claim, and for a client certificate
     * its subject's CN (the name its roles are mapped by), not the whole distinguished name.
     */
    static String principal(SecurityIdentity identity) {
        if (identity.getPrincipal() instanceof X500Principal x500) {
            try {
                for (Rdn rdn : new LdapName(x500.getName()).getRdns()) {
                    if (rdn.getType().equalsIgnoreCase("CN")) {
                        return String.valueOf(rdn.getValue());
                    }
                }
            } catch (InvalidNameException e) {
                return x500.getName();
            }
        }
        return identity.getPrincipal().getName();
    }
}
