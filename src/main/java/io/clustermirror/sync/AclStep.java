package io.clustermirror.sync;

import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.AclEntry;
import io.clustermirror.mirror.AclRule;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.sync.plan.AclSyncPlan;
import io.smallrye.mutiny.Uni;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.apache.kafka.common.errors.SecurityDisabledException;
import org.jboss.logging.Logger;

/**
 * ACLs: every mirrored topic keeps its read-only guard on the destination; ACLs matching {@code mirror.acl.include} are
 * copied from the source, and the ones this mirror created that the source no longer has are deleted. What the mirror
 * creates is recorded in its {@link Ledger} before it is created, so a crash never leaves ACLs it would not delete. A
 * side without an authorizer is reported once (in describe and a metric), not retried with noise.
 */
final class AclStep {

    private static final Logger LOGGER = Logger.getLogger(AclStep.class);

    /** The ACLs a mirror created on the destination, kept in the state topic by the coordinator. */
    interface Ledger {
        Set<AclEntry> created();

        Uni<Void> record(Set<AclEntry> acls);
    }

    private final MirrorMetrics metrics;
    /** Mirrors whose destination, or source, has no authorizer (warned once). */
    private final Set<String> noAuthorizer = ConcurrentHashMap.newKeySet();

    private final Set<String> sourceNoAuthorizer = ConcurrentHashMap.newKeySet();

    AclStep(MirrorMetrics metrics) {
        this.metrics = metrics;
    }

    /**
     * @param heldTopics the mirror's topics that keep their guard now (a partition neither STOPPED nor STOPPING), read
     *     when the guards are planned and again once the missing ones are created
     */
    Uni<Void> sync(
            Mirror mirror,
            Supplier<Set<String>> heldTopics,
            ClusterMetadata source,
            ClusterMetadata destination,
            Ledger ledger,
            CycleLog log) {
        String name = mirror.name();
        List<AclRule> rules = mirror.config().list(MirrorConfig.ACL_INCLUDE, "").stream()
                .map(AclRule::parse)
                .toList();
        return destination
                .acls()
                .chain(existing -> guards(heldTopics, existing, destination, ledger, log)
                        .chain(() -> rules.isEmpty()
                                ? Uni.createFrom().voidItem()
                                : copy(name, rules, existing, source, destination, ledger, log)))
                .onFailure(SecurityDisabledException.class)
                .recoverWithItem(e -> {
                    log.acls("destination has no authorizer: ACL sync and read-only enforcement inactive");
                    if (noAuthorizer.add(name)) {
                        metrics.syncError(name, "AclSyncError");
                        LOGGER.warnf(
                                "Mirror %s: destination has no authorizer: ACL sync and read-only enforcement inactive",
                                name);
                    }
                    return null;
                })
                .onFailure()
                .recoverWithItem(e -> {
                    log.error("AclSyncError", "ACL sync", e);
                    return null;
                });
    }

    /**
     * Creates the guards of held topics that lack one. A topic whose stop began while this ran may have had its guard
     * lifted by the stop before this put it back; nothing would lift it again, and a stopped topic must be writable
     * (a failover). So the topics are read again once the guards are created, and the guard of one that is no longer
     * held is deleted: its stop was persisted (STOPPING) before it lifted anything, so either this read sees it, or
     * the stop's lift comes after this creation.
     */
    private static Uni<Void> guards(
            Supplier<Set<String>> heldTopics,
            Set<AclEntry> existing,
            ClusterMetadata destination,
            Ledger ledger,
            CycleLog log) {
        List<AclEntry> missing = heldTopics.get().stream()
                .map(AclEntry::readOnly)
                .filter(guard -> !existing.contains(guard))
                .toList();
        log.acls(enforced(ledger.created().size()));
        if (missing.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        return destination.createAcls(missing).chain(() -> {
            Set<String> held = heldTopics.get();
            List<AclEntry> stopped = missing.stream()
                    .filter(guard -> !held.contains(guard.resourceName()))
                    .toList();
            return stopped.isEmpty() ? Uni.createFrom().voidItem() : destination.deleteAcls(stopped);
        });
    }

    private Uni<Void> copy(
            String name,
            List<AclRule> rules,
            Set<AclEntry> existing,
            ClusterMetadata source,
            ClusterMetadata destination,
            Ledger ledger,
            CycleLog log) {
        return source.acls()
                .invoke(() -> sourceNoAuthorizer.remove(name)) // one again later is told again
                .chain(sourceAcls -> {
                    AclSyncPlan plan = AclSyncPlan.plan(sourceAcls, existing, ledger.created(), rules);
                    if (plan.isEmpty()) {
                        return Uni.createFrom().voidItem();
                    }
                    LOGGER.debugf("Mirror %s: ACLs create %s, delete %s", name, plan.create(), plan.delete());
                    Set<AclEntry> owned = new TreeSet<>(ledger.created());
                    owned.addAll(plan.create());
                    // a creation the destination refuses (an ACL its authorizer does not take) must not keep the
                    // deletions from happening: they run all the same, and the refusal is the step's error after them;
                    // the refused ACL stays recorded (plan.created() holds what was to be created), to be tried again
                    Throwable[] refused = {null};
                    return ledger.record(owned)
                            .chain(() -> destination
                                    .createAcls(plan.create())
                                    .onFailure()
                                    .recoverWithItem(e -> {
                                        refused[0] = e;
                                        return null;
                                    }))
                            .chain(() -> destination.deleteAcls(plan.delete()))
                            .chain(() -> ledger.record(plan.created()))
                            .invoke(() -> log.acls(enforced(plan.created().size())))
                            .chain(() -> refused[0] == null
                                    ? Uni.createFrom().voidItem()
                                    : Uni.createFrom().failure(refused[0]));
                })
                .onFailure(SecurityDisabledException.class)
                .recoverWithItem(e -> {
                    // mirror.acl.include asks for ACLs that cannot exist: shown every cycle, counted and logged once
                    log.acls(enforced(ledger.created().size())
                            + "; the source has no authorizer: no ACLs to copy (mirror.acl.include is set)");
                    if (sourceNoAuthorizer.add(name)) {
                        metrics.syncError(name, "AclSyncError");
                        LOGGER.warnf("Mirror %s: the source has no authorizer; there are no ACLs to copy", name);
                    }
                    return null;
                });
    }

    private static String enforced(int created) {
        return "read-only enforced; " + created + " ACL(s) created by this mirror";
    }
}
