package io.clustermirror.api;

import io.clustermirror.mirror.ClusterMirrorOperation;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The operation on the ClusterMirror resource a REST method performs. {@link AccessFilter} authenticates every such
 * call and, when the path names a mirror, authorizes the operation on it; CREATE and the list check by the name they
 * read. A service-wide method ({@link #serviceWide()}) touches no one mirror but all of them: only the mirror-admin
 * role may call it, and no grant reaches it.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface ClusterMirrorAccess {
    ClusterMirrorOperation value();

    /** The service's own settings ({@code /v1/config}) rather than one mirror: mirror-admin only. */
    boolean serviceWide() default false;
}
