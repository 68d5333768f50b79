package io.clustermirror.coordinator;

import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.TopicPromotion;
import io.clustermirror.topics.SourceFence;
import io.smallrye.mutiny.Uni;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/**
 * The write fences promotes put on source topics, after the promote: lifted when a promote rolls back (at once, or
 * after a restart found it under way) and when this mirror starts a promoted topic again (switch back). A fence that
 * cannot be lifted yet stays recorded and is tried again every few seconds.
 */
final class PromotionFences {

    private static final Logger LOGGER = Logger.getLogger(PromotionFences.class);
    private static final long ROLLBACK_RETRY_MS = 5_000;

    private final TopicPromotes.Host host;
    private final CoordinatorThread thread;
    private final MirrorMetrics metrics;
    private final long timeoutMs;

    private final FlowDeadlines flows;
    /** By mirror and topic: why the last attempt to lift the topic's source fence failed, while it is retried. */
    private final Map<String, Map<String, String>> liftErrors = new ConcurrentHashMap<>();

    PromotionFences(
            TopicPromotes.Host host,
            CoordinatorThread thread,
            MirrorMetrics metrics,
            long timeoutMs,
            FlowDeadlines flows) {
        this.host = host;
        this.thread = thread;
        this.metrics = metrics;
        this.timeoutMs = timeoutMs;
        this.flows = flows;
    }

    /** Why the last attempt to lift the topic's source fence failed, while it is retried (describe shows it). */
    Optional<String> liftError(String mirror, String topic) {
        return Optional.ofNullable(liftErrors.getOrDefault(mirror, Map.of()).get(topic));
    }

    /** The lift of these topics' fences is over (done, or no longer this instance's): no error stays shown. */
    private void liftOver(String mirror, Set<String> topics) {
        liftErrors.computeIfPresent(mirror, (m, byTopic) -> {
            byTopic.keySet().removeAll(topics);
            return byTopic.isEmpty() ? null : byTopic;
        });
    }

    /**
     * After a restart or a takeover: a promote that was under way never committed, and is rolled back; a promoted topic
     * this mirror started again (switch back) whose fence was not lifted yet has it lifted (coordinator thread).
     */
    void recover(String mirror) {
        Set<String> under = new TreeSet<>();
        Set<String> mirroredAgain = new TreeSet<>();
        host.partitions(mirror).forEach((partition, status) -> {
            if (status.state() != io.clustermirror.mirror.MirrorPartitionState.STOPPED) {
                mirroredAgain.add(partition.topic());
            }
        });
        host.promotions(mirror).forEach((topic, p) -> {
            if (p.phase() == TopicPromotion.Phase.PROMOTING) {
                under.add(topic);
            }
        });
        restarted(mirror, mirroredAgain);
        if (!under.isEmpty()) {
            LOGGER.warnf(
                    "Mirror %s: a promote of %s was under way when the service stopped; rolling it back",
                    mirror, under);
            rollBack(mirror, under, "the service stopped during the promote")
                    .subscribe()
                    .with(ok -> {}, e -> {});
        }
    }

    /** Rolls back a promote that did not commit: see {@link #liftAndForget}. */
    Uni<Void> rollBack(String mirror, Set<String> topics, String why) {
        return liftAndForget(mirror, topics, TopicPromotion.Phase.PROMOTING, "rolled back (" + why + ")");
    }

    /**
     * This mirror starts topics again (switch back): the fences its promotes put on their source are lifted and the
     * promotions forgotten (coordinator thread).
     */
    void restarted(String mirror, Set<String> topics) {
        Set<String> promoted = new TreeSet<>();
        host.promotions(mirror).forEach((t, p) -> {
            if (topics.contains(t) && p.phase() == TopicPromotion.Phase.PROMOTED) {
                promoted.add(t);
            }
        });
        if (!promoted.isEmpty()) {
            liftAndForget(mirror, promoted, TopicPromotion.Phase.PROMOTED, "started again by this mirror")
                    .subscribe()
                    .with(ok -> {}, e -> {});
        }
    }

    /**
     * Lifts the source fences this mirror created for the topics' promotions in {@code phase}, then forgets those
     * promotions; retried every few seconds while the source will not let the fence go, the record saying what is
     * pending meanwhile.
     */
    private Uni<Void> liftAndForget(String mirror, Set<String> topics, TopicPromotion.Phase phase, String why) {
        return host.onCoordinator(() -> {
                    Set<String> fenced = new TreeSet<>();
                    host.promotions(mirror).forEach((t, p) -> {
                        if (topics.contains(t) && p.phase() == phase && p.fenceCreated()) {
                            fenced.add(t);
                        }
                    });
                    return Map.entry(host.runtime(mirror), fenced);
                })
                .chain(entry -> entry.getKey()
                        .chain(runtime -> TopicPromotes.blocking(() -> {
                            new SourceFence(runtime.sourceAdmin, timeoutMs).lift(entry.getValue());
                            return null;
                        })))
                .chain(() -> host.onCoordinator(() -> {
                    Map<String, TopicPromotion> forget = new HashMap<>();
                    host.promotions(mirror).forEach((t, p) -> {
                        if (topics.contains(t) && p.phase() == phase) {
                            forget.put(t, null);
                        }
                    });
                    host.persist(mirror, forget, Map.of());
                    liftOver(mirror, topics);
                    LOGGER.infof("Mirror %s: promotion of %s %s: the source fence is lifted", mirror, topics, why);
                    return null;
                }))
                .replaceWithVoid()
                // a lift that never finishes is retried like one that failed
                .ifNoItem()
                .after(flows.timeout())
                .failWith(() -> new IllegalStateException(flows.exceeded("promote", mirror, flows.timeout())))
                .onFailure()
                .recoverWithItem(e -> {
                    if (e instanceof MirrorException m && m.error() == MirrorError.UNKNOWN_CLUSTER_MIRROR) {
                        liftOver(mirror, topics);
                        LOGGER.warnf(
                                "Mirror %s was deleted during the promote of %s: its source fence, if any, stays",
                                mirror, topics);
                        return null;
                    }
                    if (!host.holds(mirror)) {
                        // its next owner lifts what the state records, on taking it over (recover), this one no more
                        liftOver(mirror, topics);
                        LOGGER.warnf(
                                "Mirror %s moved to another instance before the promotion of %s was %s: that instance "
                                        + "lifts the source fence the state records and forgets the promotion",
                                mirror, topics, why);
                        return null;
                    }
                    metrics.fenceLiftFailed(mirror);
                    String error = "lifting the source fence (" + why + ") failed: " + e
                            + "; retried every " + ROLLBACK_RETRY_MS / 1000 + " s, the source stays fenced until it "
                            + "succeeds";
                    Map<String, String> byTopic = liftErrors.computeIfAbsent(mirror, m -> new ConcurrentHashMap<>());
                    boolean again = topics.stream().allMatch(t -> error.equals(byTopic.get(t)));
                    topics.forEach(t -> byTopic.put(t, error));
                    // ERROR when it starts or its reason changes; every retry that fails the same way is counted
                    LOGGER.logf(
                            again ? Logger.Level.DEBUG : Logger.Level.ERROR,
                            "Mirror %s: %s of %s",
                            mirror,
                            error,
                            topics);
                    thread.schedule(
                            "lifting the source fence of " + mirror,
                            ROLLBACK_RETRY_MS,
                            () -> liftAndForget(mirror, topics, phase, why)
                                    .subscribe()
                                    .with(ok -> {}, x -> {}));
                    return null;
                });
    }
}
