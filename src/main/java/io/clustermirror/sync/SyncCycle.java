package io.clustermirror.sync;

import io.clustermirror.mirror.AclEntry;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.sync.SyncAction.Halt;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * One sync cycle of one mirror, as a Mutiny pipeline of its steps in order: the source's cluster id (a wrong one halts
 * the mirror and ends the cycle), topics, topic configs, group offsets, ACLs. The actions the first two ask for are
 * applied by the {@link SyncHost} before the next step reads the mirror's partitions. A failing item is logged and
 * counted and never fails the cycle; a failing step ends up as one error.
 */
final class SyncCycle {

    static final String REFRESH_ERROR = "MetadataRefreshError";

    private final SyncHost host;
    private final String stateTopic;
    private final GroupOffsetStep groupOffsets;
    private final AclStep acls;

    SyncCycle(SyncHost host, String stateTopic, GroupOffsetStep groupOffsets, AclStep acls) {
        this.host = host;
        this.stateTopic = stateTopic;
        this.groupOffsets = groupOffsets;
        this.acls = acls;
    }

    /** Runs the cycle; completes (never fails) once every step is done, everything it met recorded in {@code log}. */
    Uni<Void> run(Mirror mirror, CycleLog log) {
        String name = mirror.name();
        return host.source(name)
                .chain(source -> ClusterIdStep.check(mirror, host.haltedReason(name) != null, source)
                        .chain(action -> {
                            if (action.isPresent() && action.get() instanceof Halt halt) {
                                log.note("source cluster id is " + halt.actualClusterId() + ", expected "
                                        + mirror.sourceClusterId() + ": mirror halted");
                                return apply(name, List.of(halt), log);
                            }
                            return host.destination(name)
                                    .chain(destination -> apply(
                                                    name, action.stream().toList(), log)
                                            .chain(() ->
                                                    TopicStep.plan(mirror, host.partitions(name), stateTopic, source))
                                            .chain(actions ->
                                                    apply(name, actions, log).replaceWith(() -> started(actions)))
                                            .chain(started -> ConfigStep.sync(
                                                            mirror,
                                                            without(activeTopics(name), started),
                                                            source,
                                                            destination,
                                                            log)
                                                    .chain(() -> groupOffsets.sync(
                                                            mirror,
                                                            mirroredPartitions(name, started),
                                                            source,
                                                            destination,
                                                            log)))
                                            .chain(() -> acls.sync(
                                                    mirror,
                                                    () -> activeTopics(name),
                                                    source,
                                                    destination,
                                                    ledger(name),
                                                    log)));
                        }))
                .onFailure()
                .recoverWithItem(e -> {
                    log.error(REFRESH_ERROR, "metadata refresh", e);
                    return null;
                });
    }

    /** Applies the actions one after the other; each one's failures are logged, and a failing one does not stop the next. */
    private Uni<Void> apply(String name, List<SyncAction> actions, CycleLog log) {
        return Multi.createFrom()
                .iterable(actions)
                .onItem()
                .transformToUniAndConcatenate(action -> host.apply(name, action)
                        .invoke(failures -> failures.forEach(f -> log.failed(REFRESH_ERROR, f)))
                        .onFailure()
                        .recoverWithItem(e -> {
                            log.error(REFRESH_ERROR, describe(action), e);
                            return null;
                        }))
                .collect()
                .asList()
                .replaceWithVoid();
    }

    /**
     * The topics this cycle started: their destination topics were just created with the source's configs, and the
     * destination may not serve them yet (it answers for them once its brokers applied them), so their configs and
     * group offsets are left to the next cycle.
     */
    private static Set<String> started(List<SyncAction> actions) {
        Set<String> started = new TreeSet<>();
        actions.stream()
                .filter(SyncAction.StartTopics.class::isInstance)
                .forEach(a -> started.addAll(((SyncAction.StartTopics) a).topics()));
        return started;
    }

    private static Set<String> without(Set<String> topics, Set<String> left) {
        Set<String> rest = new TreeSet<>(topics);
        rest.removeAll(left);
        return rest;
    }

    private static String describe(SyncAction action) {
        if (action instanceof SyncAction.StartTopics start) {
            return "start " + new TreeSet<>(start.topics());
        }
        if (action instanceof SyncAction.ExpandTopic expand) {
            return "expand " + expand.topic();
        }
        if (action instanceof SyncAction.StopTopics stop) {
            return "stop deleted " + new TreeSet<>(stop.topics());
        }
        return action.getClass().getSimpleName().toLowerCase(Locale.ROOT);
    }

    private AclStep.Ledger ledger(String name) {
        return new AclStep.Ledger() {
            @Override
            public Set<AclEntry> created() {
                return host.createdAcls(name);
            }

            @Override
            public Uni<Void> record(Set<AclEntry> acls) {
                return host.recordCreatedAcls(name, acls);
            }
        };
    }

    /** Topics with a partition that is not STOPPED or STOPPING: their configs and guards are kept in step. */
    private Set<String> activeTopics(String name) {
        Set<String> topics = new TreeSet<>();
        host.partitions(name).forEach((p, s) -> {
            if (s.state().isHeld()) {
                topics.add(p.topic());
            }
        });
        return topics;
    }

    /**
     * Partitions MIRRORING, but not those of the topics this cycle started: their group offsets are synced. Only there
     * is the destination known to hold the source's records at the same offsets: a partition in LOG_TRUNCATION or
     * EPOCH_FENCING may hold a divergent tail not dealt with yet, a FAILED one may hold one for good (a failback with
     * {@code mirror.truncation.policy=fail}), and a PAUSED one has no metadata sync (KIP-1279).
     */
    private Set<MirrorPartition> mirroredPartitions(String name, Set<String> startedNow) {
        Set<MirrorPartition> mirrored = new TreeSet<>();
        host.partitions(name).forEach((p, s) -> {
            if (s.state() == MirrorPartitionState.MIRRORING && !startedNow.contains(p.topic())) {
                mirrored.add(p);
            }
        });
        return mirrored;
    }
}
