package io.clustermirror.sync;

import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.sync.plan.CommittedOffset;
import io.clustermirror.sync.plan.NameFilter;
import io.clustermirror.sync.plan.OffsetSyncPlan;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.GroupNotEmptyException;
import org.apache.kafka.common.errors.OffsetMetadataTooLarge;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.UnknownMemberIdException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.jboss.logging.Logger;

/**
 * Group offsets of the partitions being mirrored, for consumer groups and share groups alike: copied unchanged (offsets
 * are identical on both sides), clamped to the destination's end, written only where they differ, and skipped for a group with
 * members on the destination. Plans with {@link OffsetSyncPlan}.
 */
final class GroupOffsetStep {

    private static final Logger LOGGER = Logger.getLogger(GroupOffsetStep.class);

    /** Mirrors whose source was found without share groups (warned once). */
    private final Set<String> shareGroupsUnavailable = ConcurrentHashMap.newKeySet();

    Uni<Void> sync(
            Mirror mirror,
            Set<MirrorPartition> mirrored,
            ClusterMetadata source,
            ClusterMetadata destination,
            CycleLog log) {
        if (mirrored.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        NameFilter filter = NameFilter.of(
                mirror.config().list(MirrorConfig.GROUPS_INCLUDE, ".*"),
                mirror.config().list(MirrorConfig.GROUPS_EXCLUDE, ""));
        // read once, and only when a group is to be synced: 10,000 partitions' ends cost the destination a ListOffsets
        // of each every cycle otherwise; what could not be read is the error of the kind that needed it first (told
        // once)
        Uni<ClusterMetadata.EndOffsets> read =
                destination.endOffsets(mirrored).memoize().indefinitely();
        AtomicBoolean told = new AtomicBoolean();
        Function<GroupKind, Uni<Map<MirrorPartition, Long>>> ends = kind -> read.map(end -> {
            if (!end.unread().isEmpty() && told.compareAndSet(false, true)) {
                log.error(
                        kind.errorKind(),
                        "destination end offsets of " + end.unread().size() + " partition(s) "
                                + new TreeSet<>(end.unread())
                                + " (their group offsets are synced once they are read)",
                        end.failure() != null ? end.failure() : new IllegalStateException("not read"));
            }
            return end.read();
        });
        return sync(GroupKind.CONSUMER, mirror, filter, mirrored, ends, source, destination, log)
                .chain(() -> sync(GroupKind.SHARE, mirror, filter, mirrored, ends, source, destination, log));
    }

    /**
     * One kind's groups. What fails the whole kind (its groups cannot be listed) is counted and shown as the kind's
     * error, and the cycle goes on: the other kind, then the ACLs. A group whose offsets cannot be read is that group's
     * error, and the other groups go on.
     */
    private Uni<Void> sync(
            GroupKind kind,
            Mirror mirror,
            NameFilter filter,
            Set<MirrorPartition> mirrored,
            Function<GroupKind, Uni<Map<MirrorPartition, Long>>> ends,
            ClusterMetadata source,
            ClusterMetadata destination,
            CycleLog log) {
        return source.groups(kind)
                // a source whose brokers cannot list share groups (older releases) is told once; any other failure
                // to list them is the kind's error, counted below every cycle it happens
                .onFailure(e -> kind == GroupKind.SHARE && e instanceof UnsupportedVersionException)
                .recoverWithItem(e -> {
                    if (shareGroupsUnavailable.add(mirror.name())) {
                        LOGGER.warnf(
                                "Mirror %s: the source does not list share groups (%s); share-group offsets are not synced",
                                mirror.name(), e.toString());
                    }
                    return Set.of();
                })
                .chain(listed -> {
                    Set<String> groups =
                            listed.stream().filter(filter::matches).collect(Collectors.toCollection(TreeSet::new));
                    if (groups.isEmpty()) {
                        return Uni.createFrom().voidItem();
                    }
                    return source.groupOffsets(kind, groups, mirrored).chain(sourceReads -> {
                        // a group whose source offsets could not be read (its coordinator down) waits for a cycle
                        // that reads them; the others go on
                        sourceReads
                                .failed()
                                .forEach((group, e) ->
                                        log.error(kind.errorKind(), "source offsets of group " + group, e));
                        Map<String, Map<MirrorPartition, CommittedOffset>> sourceOffsets = sourceReads.read();
                        if (sourceOffsets.isEmpty()) {
                            return Uni.createFrom().voidItem();
                        }
                        Map<String, Map<MirrorPartition, CommittedOffset>> toWrite = new HashMap<>(sourceOffsets);
                        return destination
                                .groupOffsets(kind, sourceOffsets.keySet(), mirrored)
                                .map(destinationReads -> {
                                    // counted and shown. A group whose coordinator does not answer (a retriable
                                    // failure) would not take a write either: it waits for the next cycle. Any
                                    // other group's writes go on as if the destination had nothing: each writes the
                                    // source's offset, clamped to the destination's end
                                    destinationReads.failed().forEach((group, e) -> {
                                        log.error(kind.errorKind(), "destination offsets of group " + group, e);
                                        if (e instanceof RetriableException) {
                                            toWrite.remove(group);
                                        }
                                    });
                                    return destinationReads.read();
                                })
                                .onFailure()
                                .recoverWithItem(e -> {
                                    log.error(
                                            kind.errorKind(),
                                            "destination offsets of " + sourceOffsets.size() + " group(s)",
                                            e);
                                    return Map.of();
                                })
                                .chain(destinationOffsets -> ends.apply(kind)
                                        .chain(end -> commit(
                                                kind,
                                                OffsetSyncPlan.plan(toWrite, end, destinationOffsets, filter),
                                                destination,
                                                log)));
                    });
                })
                .onFailure()
                .recoverWithItem(e -> {
                    log.error(kind.errorKind(), kind.name().toLowerCase(Locale.ROOT) + " group offsets", e);
                    return null;
                });
    }

    /** Writes the plan group by group: a group with members on the destination is skipped and counted, other failures logged. */
    private static Uni<Void> commit(
            GroupKind kind,
            Map<String, Map<MirrorPartition, CommittedOffset>> commits,
            ClusterMetadata destination,
            CycleLog log) {
        return Multi.createFrom()
                .iterable(commits.entrySet())
                .onItem()
                .transformToUniAndConcatenate(entry -> destination
                        .alterGroupOffsets(kind, entry.getKey(), entry.getValue())
                        .onFailure(OffsetMetadataTooLarge.class)
                        .recoverWithUni(e -> {
                            // the destination takes less metadata (offset.metadata.max.bytes) than the source did: the
                            // offsets matter more, so they go without it, and that is told every cycle it happens; if
                            // they do not go either, that failure is the group's one error (below)
                            Map<MirrorPartition, CommittedOffset> bare = new TreeMap<>();
                            entry.getValue().forEach((p, o) -> bare.put(p, CommittedOffset.of(o.offset())));
                            return destination
                                    .alterGroupOffsets(kind, entry.getKey(), bare)
                                    .invoke(() -> log.error(
                                            kind.errorKind(),
                                            "group " + entry.getKey() + ": committed without its metadata",
                                            e))
                                    .onFailure(f -> !active(f))
                                    .transform(f -> new KafkaException(
                                            "its offsets were refused with their metadata (" + e.getMessage()
                                                    + ") and without it: " + f.getMessage(),
                                            f));
                        })
                        .invoke(() -> LOGGER.debugf(
                                "Mirror %s: group %s offsets %s", log.mirror(), entry.getKey(), entry.getValue()))
                        .onFailure()
                        .recoverWithItem(e -> {
                            if (active(e)) {
                                log.skippedActiveGroup(entry.getKey());
                            } else {
                                log.error(kind.errorKind(), "group " + entry.getKey(), e);
                            }
                            return null;
                        }))
                .collect()
                .asList()
                .replaceWithVoid();
    }

    /** The group has members on the destination: its offsets are not ours to write now. */
    private static boolean active(Throwable e) {
        return e instanceof UnknownMemberIdException || e instanceof GroupNotEmptyException;
    }
}
