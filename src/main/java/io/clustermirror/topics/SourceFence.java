package io.clustermirror.topics;

import io.clustermirror.kafka.AclConversions;
import io.clustermirror.mirror.AclEntry;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import java.util.Collection;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.SecurityDisabledException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;

/**
 * The write fence a planned switchover puts on the source (split-brain protection): a DENY WRITE ACL for
 * {@code User:*} on each source topic, created and deleted with the mirror's own source credentials, which need ALTER
 * on the source cluster. Super users bypass ACLs, so producers must run as ordinary users. Blocking; for a worker.
 */
public final class SourceFence {

    private final Admin source;
    private final long timeoutMs;

    public SourceFence(Admin source, long timeoutMs) {
        this.source = source;
        this.timeoutMs = timeoutMs;
    }

    /** The fence of one topic: the same DENY WRITE for {@code User:*} a mirror puts on its destination topics. */
    public static AclBinding binding(String topic) {
        return AclConversions.binding(AclEntry.readOnly(topic));
    }

    /** The topics already fenced on the source (their fence predates this promote: it is not ours to lift). */
    public Set<String> fenced(Collection<String> topics) throws Exception {
        AclBindingFilter fences = new AclBindingFilter(
                new ResourcePatternFilter(ResourceType.TOPIC, null, PatternType.LITERAL),
                binding("any").entry().toFilter()); // the fence's entry, on any topic
        Set<String> fenced = new TreeSet<>();
        try {
            for (AclBinding binding : source.describeAcls(fences).values().get(timeoutMs, TimeUnit.MILLISECONDS)) {
                if (topics.contains(binding.pattern().name())) {
                    fenced.add(binding.pattern().name());
                }
            }
        } catch (ExecutionException e) {
            throw refusal(e.getCause());
        }
        return fenced;
    }

    /** Fences the topics; a source that cannot be fenced is refused with a reason that names the way out. */
    public void fence(Collection<String> topics) throws Exception {
        if (topics.isEmpty()) {
            return;
        }
        try {
            source.createAcls(topics.stream().map(SourceFence::binding).toList())
                    .all()
                    .get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw refusal(e.getCause());
        }
    }

    /**
     * Lifts the fence of the topics (only ever the fences this mirror created). A source without an authorizer cannot
     * hold a fence: nothing to lift then. One that refuses this mirror ACL changes may: its credentials may have lost
     * ALTER since it fenced, so it is refused unless none of the fences is there (a promote refused before it fenced).
     */
    public void lift(Collection<String> topics) throws Exception {
        if (topics.isEmpty()) {
            return;
        }
        try {
            source.deleteAcls(topics.stream().map(t -> binding(t).toFilter()).toList())
                    .all()
                    .get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (!nothingToLift(e.getCause(), () -> !fenced(topics).isEmpty())) {
                throw e;
            }
        }
    }

    /**
     * Whether a refused lift leaves nothing to lift: a source without an authorizer holds no fence; one that refuses
     * this mirror ACL changes may hold one put up before its credentials lost ALTER, so only if none is there (read
     * then, and only then: {@code stillFenced} reads whether any of the fences is still there).
     */
    static boolean nothingToLift(Throwable refusal, Callable<Boolean> stillFenced) throws Exception {
        if (refusal instanceof SecurityDisabledException) {
            return true;
        }
        return refusal instanceof ClusterAuthorizationException && !stillFenced.call();
    }

    private static Exception refusal(Throwable cause) {
        if (cause instanceof SecurityDisabledException) {
            return new MirrorException(
                    MirrorError.SECURITY_DISABLED,
                    "The source cluster has no authorizer, so its topics cannot be fenced against writes; stop the producers "
                            + "on the source and promote with \"fenceSource\": false (the promote then also requires the source "
                            + "log end not to move)",
                    "fenceSource");
        }
        if (cause instanceof ClusterAuthorizationException || cause instanceof TopicAuthorizationException) {
            return new MirrorException(
                    MirrorError.CLUSTER_AUTHORIZATION_FAILED,
                    "The mirror's source credentials may not manage ACLs on the source (they need ALTER on the source "
                            + "cluster): " + cause.getMessage() + "; grant it, or stop the producers and promote with "
                            + "\"fenceSource\": false",
                    "fenceSource");
        }
        return cause instanceof Exception e ? e : new IllegalStateException(cause);
    }
}
