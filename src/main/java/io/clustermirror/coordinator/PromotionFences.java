package io.clustermirror.coordinator;

import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.TopicPromotion;
import io.clustermirror.topics.SourceFence;
import io.smallrye.mutiny.Uni;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
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
    private final long retryMs;
    /** Why the last attempt to lift a topic's source fence failed, while it is retried. */
    private final Map<MirroredTopic, String> liftErrors = new ConcurrentHashMap<>();

    PromotionFences(
            TopicPromotes.Host host,
            CoordinatorThread thread,
            MirrorMetrics metrics,
            long timeoutMs,
            FlowDeadlines flows) {
        this(host, thread, metrics, timeoutMs, flows, ROLLBACK_RETRY_MS);
    }

    /** @param retryMs how long a failed lift waits before it is tried again ({@value #ROLLBACK_RETRY_MS} ms) */
    PromotionFences(
            TopicPromotes.Host host,
            CoordinatorThread thread,
            MirrorMetrics metrics,
            long timeoutMs,
            FlowDeadlines flows,
            long retryMs) {
        this.host = host;
        this.thread = thread;
        this.metrics = metrics;
        this.timeoutMs = timeoutMs;
        this.flows = flows;
        this.retryMs = retryMs;
    }

    /** Why the last attempt to lift the topic's source fence failed, while it is retried (describe shows it). */
    Optional<String> liftError(String mirror, String topic) {
        return Optional.ofNullable(liftErrors.get(new MirroredTopic(mirror, topic)));
    }

    /**
     * The lift of these topics' fences is over (done, no longer this instance's, or a new promote of the topic
     * begins): no error of it stays shown.
     */
    void liftOver(String mirror, Set<String> topics) {
        topics.forEach(topic -> liftErrors.remove(new MirroredTopic(mirror, topic)));
    }

    /**
     * After a restart or a takeover: a promote that was under way never committed, and is rolled back; a promoted topic
     * this mirror started again (switch back) whose fence was not lifted yet has it lifted (coordinator thread).
     */
    void recover(String mirror) {
        Set<String> under = new TreeSet<>();
        Set<String> mirroredAgain = new TreeSet<>();
        host.partitions(mirror).forEach((partition, status) -> {
            if (status.state() != MirrorPartitionState.STOPPED) {
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
        return liftAndForget(mirror, topics, phase, why, null);
    }

    /**
     * {@link #liftAndForget(String, Set, TopicPromotion.Phase, String)}, for the promotions that started at {@code
     * which} (by topic; null on the first attempt, which takes those in {@code phase} now): a retry acts on the
     * promotions it began with, never on a later promotion of the same topic (a switch back whose lift kept failing,
     * then a new promote of the topic, PROMOTED again: forgetting it, or lifting its fence, would open the source
     * while the destination is the primary).
     */
    private Uni<Void> liftAndForget(
            String mirror, Set<String> topics, TopicPromotion.Phase phase, String why, Map<String, Instant> which) {
        AtomicReference<Map<String, Instant>> began = new AtomicReference<>(which);
        return host.onCoordinator(() -> {
                    if (!host.holds(mirror)) {
                        // its state is another instance's to change now (recover there): nothing is lifted or forgotten
                        throw new MirrorException(
                                MirrorError.COORDINATOR_NOT_AVAILABLE, "mirror " + mirror + " is not held here");
                    }
                    if (began.get() == null) {
                        Map<String, Instant> startedAt = new HashMap<>();
                        host.promotions(mirror).forEach((t, p) -> {
                            if (topics.contains(t) && p.phase() == phase) {
                                startedAt.put(t, p.startedAt());
                            }
                        });
                        began.set(Map.copyOf(startedAt));
                    }
                    Set<String> fenced = new TreeSet<>();
                    these(mirror, began.get(), phase).forEach((t, p) -> {
                        if (p.fenceCreated()) {
                            fenced.add(t);
                        }
                    });
                    return fenced;
                })
                .chain(fenced -> fenced.isEmpty()
                        ? Uni.createFrom().nullItem() // no fence of ours to lift: the source is not asked
                        : host.runtime(mirror)
                                .chain(runtime -> TopicPromotes.blocking(() -> {
                                    new SourceFence(runtime.sourceAdmin, timeoutMs).lift(fenced);
                                    return null;
                                })))
                .chain(() -> host.onCoordinator(() -> {
                    Map<String, TopicPromotion> forget = new HashMap<>();
                    these(mirror, began.get(), phase).keySet().forEach(t -> forget.put(t, null));
                    if (forget.isEmpty()) {
                        // forgotten meanwhile (by another lift, or promoted anew): nothing of it is left to do
                        liftOver(mirror, topics);
                        LOGGER.debugf(
                                "Mirror %s: the promotion of %s is no longer recorded: nothing to lift",
                                mirror, topics);
                        return null;
                    }
                    host.persist(mirror, forget, Map.of());
                    liftOver(mirror, forget.keySet());
                    LOGGER.infof(
                            "Mirror %s: promotion of %s %s: the source fence is lifted", mirror, forget.keySet(), why);
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
                            + "; retried every " + retryMs / 1000 + " s, the source stays fenced until it "
                            + "succeeds";
                    // ERROR when it starts or its reason changes; every retry that fails the same way is counted
                    LOGGER.logf(
                            liftFailed(mirror, topics, error) ? Logger.Level.ERROR : Logger.Level.DEBUG,
                            "Mirror %s: %s of %s",
                            mirror,
                            error,
                            topics);
                    Map<String, Instant> retried = began.get();
                    thread.schedule(
                            "lifting the source fence of " + mirror,
                            retryMs,
                            () -> liftAndForget(mirror, topics, phase, why, retried)
                                    .subscribe()
                                    .with(ok -> {}, x -> {}));
                    return null;
                });
    }

    /** The mirror's promotions in {@code phase} that started when {@code which} says, by topic (coordinator thread). */
    private Map<String, TopicPromotion> these(String mirror, Map<String, Instant> which, TopicPromotion.Phase phase) {
        Map<String, TopicPromotion> these = new HashMap<>();
        host.promotions(mirror).forEach((t, p) -> {
            if (p.phase() == phase && p.startedAt().equals(which.get(t))) {
                these.put(t, p);
            }
        });
        return these;
    }

    /** Records why the topics' lift failed; whether that is news (not the reason already shown for every topic). */
    private boolean liftFailed(String mirror, Set<String> topics, String error) {
        boolean news = false;
        for (String topic : topics) {
            news |= !error.equals(liftErrors.put(new MirroredTopic(mirror, topic), error));
        }
        return news;
    }

    /** A topic of a mirror: the key of what is shown per topic. */
    private record MirroredTopic(String mirror, String topic) {}
}
