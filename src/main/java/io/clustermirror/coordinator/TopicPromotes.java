package io.clustermirror.coordinator;

import com.google.re2j.Pattern;
import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.Frozen;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionLag;
import io.clustermirror.mirror.PartitionStatus;
import io.clustermirror.mirror.TopicPromotion;
import io.clustermirror.sync.SyncReport;
import io.clustermirror.topics.DrainCheck;
import io.clustermirror.topics.DrainCheck.Drain;
import io.clustermirror.topics.SourceFence;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.jboss.logging.Logger;

/**
 * A planned switchover, {@code topics:promote}: fence writes on the source topics, wait until the destination holds
 * every source record and no source transaction is open, copy the groups' offsets one last time, then stop the topics
 * (writable on the destination) with the per-partition proof persisted. The point of no return is one state write: the
 * partitions move to STOPPING together with the proof. Anything that fails before it rolls back: the fence this mirror
 * created is lifted, the topics keep MIRRORING. A promote found under way after a restart never committed, and is
 * rolled back the same way, retried until the source lets the fence go.
 */
public final class TopicPromotes {

    private static final Logger LOGGER = Logger.getLogger(TopicPromotes.class);
    private static final long POLL_MS = 100;
    private static final Duration STOP_WAIT = Duration.ofSeconds(30);
    static final String PROMOTED = "promoted: the destination holds every source record; the topic is writable here";

    /** What a promote needs from the coordinator. */
    interface Host {
        /** The mirror, or UNKNOWN_CLUSTER_MIRROR (or COORDINATOR_NOT_AVAILABLE). */
        Mirror require(String name);

        <T> Uni<T> onCoordinator(Supplier<T> action);

        /** The mirror's runtime once built (off the coordinator thread). */
        Uni<MirrorRuntime> runtime(String name);

        Admin destinationAdmin();

        Map<MirrorPartition, PartitionStatus> partitions(String mirror);

        Map<String, TopicPromotion> promotions(String mirror);

        /** Persists promotions (null: remove the topic's) and partition statuses in one write, then applies them. */
        void persist(
                String mirror, Map<String, TopicPromotion> promotions, Map<MirrorPartition, PartitionStatus> changed);

        /** Takes STOPPING partitions out of the data plane and settles them STOPPED. */
        void stopPartitions(String mirror, Collection<MirrorPartition> partitions);

        Uni<SyncReport> syncGroupOffsets(Mirror mirror, Set<MirrorPartition> partitions);

        /**
         * Whether this instance holds the mirror's state partition now (always, while it holds them all): only then is
         * a promote of it this instance's to roll back (any thread).
         */
        boolean holds(String mirror);

        /**
         * Whether this instance may still act for the mirrors it holds: its lease in the state group (what appends
         * wait for) is valid, so no other instance can have taken them over yet (any thread).
         */
        boolean leaseValid();
    }

    /** What the operator asked: topics by name and/or pattern (among the mirror's), how long to wait, whether to fence. */
    public record Request(
            List<String> topics, List<String> include, List<String> exclude, long timeoutMs, boolean fenceSource) {}

    /** What a completed promote answers: each topic's promotion with its proof, and how the final group sync went. */
    public record Outcome(List<TopicPromotion> topics, SyncReport groups) {}

    /** One promote as it goes. */
    static final class Attempt {
        final String mirror;
        final Request request;
        final long deadline;
        Mirror mirrorValue;
        MirrorRuntime runtime;
        DrainCheck check;
        Set<String> topics = Set.of();
        List<MirrorPartition> partitions = List.of();
        Set<String> preFenced = Set.of();
        Map<MirrorPartition, Drain> proof = Map.of();
        /** The promotions with their proof as the commit wrote them: the answer, whatever happens to the mirror next. */
        Map<String, TopicPromotion> promoted = Map.of();

        SyncReport groups;
        volatile List<Pattern> include;
        volatile List<Pattern> exclude;
        volatile boolean begun;
        volatile boolean committed;

        Attempt(String mirror, Request request) {
            this.mirror = mirror;
            this.request = request;
            this.deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(request.timeoutMs());
        }
    }

    private final Host host;
    private final PromotionFences fences;
    private final MirrorMetrics metrics;
    private final Clock clock;
    private final long timeoutMs;
    private final FlowDeadlines flows;

    TopicPromotes(
            Host host,
            CoordinatorThread thread,
            MirrorMetrics metrics,
            Clock clock,
            long timeoutMs,
            FlowDeadlines flows) {
        this.host = host;
        this.metrics = metrics;
        this.fences = new PromotionFences(host, thread, metrics, timeoutMs, flows);
        this.clock = clock;
        this.timeoutMs = timeoutMs;
        this.flows = flows;
    }

    Uni<Outcome> promote(String name, Request request) {
        Attempt a = new Attempt(name, request);
        // patterns are compiled on a worker: a large list must not hold up the coordinator thread
        Uni<Outcome> promote = blocking(() -> {
                    a.include = TopicStarts.patterns(request.include(), "include");
                    a.exclude = TopicStarts.patterns(request.exclude(), "exclude");
                    return null;
                })
                .chain(() -> host.onCoordinator(() -> select(a)))
                .chain(() -> host.runtime(a.mirror))
                .invoke(runtime -> {
                    a.runtime = runtime;
                    a.check = new DrainCheck(runtime.sourceAdmin, host.destinationAdmin(), timeoutMs);
                })
                .chain(() -> blocking(() -> a.preFenced = request.fenceSource() ? fence(a).fenced(a.topics) : Set.of()))
                .chain(() -> host.onCoordinator(() -> begin(a)))
                .chain(() -> blocking(() -> {
                    if (request.fenceSource()) {
                        fenceSource(a);
                    }
                    a.proof = drain(a);
                    return null;
                }))
                .chain(() -> host.syncGroupOffsets(a.mirrorValue, new TreeSet<>(a.partitions)))
                .invoke(report -> a.groups = report)
                .chain(() -> blocking(() -> a.proof = confirm(a)))
                .chain(() -> host.onCoordinator(() -> commit(a)))
                .chain(() -> blocking(() -> awaitStopped(a)))
                .invoke(done -> metrics.promote(name, "promoted"));
        // the drain has its own timeout (timeoutMs); this bounds every other step (a coordinator task dropped, a call
        // that never answers): the promote is cancelled and rolled back like any failure before its commit
        return flows.bound(
                        promote,
                        "promote",
                        name,
                        Duration.ofMillis(request.timeoutMs()).plus(flows.timeout()),
                        MirrorError.REQUEST_TIMED_OUT,
                        "it was cancelled and rolled back unless it had already committed (describe shows each "
                                + "topic's promotion)")
                .onFailure()
                .call(e -> {
                    if (!a.begun || a.committed) {
                        return Uni.createFrom().voidItem();
                    }
                    metrics.promote(name, "rolled_back");
                    return rollBack(a.mirror, a.topics, e.getMessage());
                });
    }

    private Void select(Attempt a) {
        a.mirrorValue = host.require(a.mirror);
        Map<MirrorPartition, PartitionStatus> owned = host.partitions(a.mirror);
        Set<String> held = new TreeSet<>();
        owned.keySet().forEach(p -> held.add(p.topic()));
        Set<String> chosen = new TreeSet<>();
        for (String topic : a.request.topics()) {
            if (!held.contains(topic)) {
                throw new MirrorException(
                        MirrorError.TOPIC_NOT_IN_CLUSTER_MIRROR,
                        "Topic '" + topic + "' is not in mirror '" + a.mirror + "'",
                        "topics");
            }
            chosen.add(topic);
        }
        held.stream()
                .filter(t -> a.include.stream().anyMatch(p -> p.matcher(t).matches()))
                .forEach(chosen::add);
        chosen.removeIf(t -> a.exclude.stream().anyMatch(p -> p.matcher(t).matches()));
        if (chosen.isEmpty()) {
            throw new MirrorException(
                    MirrorError.INVALID_REQUEST,
                    "Name at least one topic of the mirror, or include patterns that match some of them",
                    "topics");
        }
        List<String> notMirroring = new ArrayList<>();
        List<MirrorPartition> partitions = new ArrayList<>();
        new TreeMap<>(owned).forEach((p, s) -> {
            if (chosen.contains(p.topic())) {
                partitions.add(p);
                if (s.state() != MirrorPartitionState.MIRRORING) {
                    notMirroring.add(p + " is " + s.state());
                }
            }
        });
        if (!notMirroring.isEmpty()) {
            throw new MirrorException(
                    MirrorError.INVALID_MIRROR_PARTITION_STATE,
                    "Cannot promote: every partition must be MIRRORING; "
                            + String.join(", ", notMirroring.subList(0, Math.min(20, notMirroring.size()))),
                    "topics");
        }
        a.topics = chosen;
        a.partitions = List.copyOf(partitions);
        return null;
    }

    /** Persists the promote as under way before the fence goes up, so that a crash from here on is rolled back. */
    private Void begin(Attempt a) {
        Map<String, TopicPromotion> current = host.promotions(a.mirror);
        Map<String, TopicPromotion> promoting = new TreeMap<>();
        Instant now = clock.instant();
        for (String topic : a.topics) {
            TopicPromotion existing = current.get(topic);
            if (existing != null && existing.phase() == TopicPromotion.Phase.PROMOTING) {
                throw new MirrorException(
                        MirrorError.INVALID_CLUSTER_MIRROR_STATE,
                        "A promote of topic '" + topic + "' is already under way",
                        "topics");
            }
            boolean fenceCreated = a.request.fenceSource() && !a.preFenced.contains(topic);
            promoting.put(topic, TopicPromotion.promoting(topic, a.request.fenceSource(), fenceCreated, now));
        }
        host.persist(a.mirror, promoting, Map.of());
        fences.liftOver(a.mirror, a.topics); // a failed lift of an earlier promotion of these topics is not this one's
        a.begun = true;
        return null;
    }

    /** Waits, until the deadline, for every partition to be drained; gives up naming the lag per partition. */
    private Map<MirrorPartition, Drain> drain(Attempt a) throws Exception {
        while (true) {
            requireMirroring(a);
            Map<MirrorPartition, Drain> drains = a.check.read(a.partitions);
            if (drains.values().stream().allMatch(Drain::drained)) {
                return drains;
            }
            if (System.nanoTime() > a.deadline) {
                List<PartitionLag> lag = new ArrayList<>();
                new TreeMap<>(drains)
                        .forEach((p, d) -> lag.add(new PartitionLag(
                                p.topic(),
                                p.partition(),
                                d.sourceEnd(),
                                d.destinationEnd(),
                                d.lag(),
                                d.openTransactionStart())));
                long open = drains.values().stream()
                        .filter(d -> d.openTransactionStart() >= 0)
                        .count();
                throw MirrorException.withLag(
                        MirrorError.REQUEST_TIMED_OUT,
                        "The mirror did not drain within " + a.request.timeoutMs() + " ms (lag "
                                + drains.values().stream().mapToLong(Drain::lag).sum() + " record(s)"
                                + (open > 0 ? ", " + open + " partition(s) with a source transaction still open" : "")
                                + "); the promote was rolled back: the source fence is lifted and the topics keep MIRRORING",
                        lag);
            }
            Thread.sleep(POLL_MS);
        }
    }

    /**
     * After the group sync: the source must still end where the proof says. With the fence it may have taken a last
     * write while the ACL reached its brokers: then drain again; without it, producers are still writing: refused.
     */
    private Map<MirrorPartition, Drain> confirm(Attempt a) throws Exception {
        Map<MirrorPartition, Drain> proof = a.proof;
        while (true) {
            Map<MirrorPartition, Drain> now = a.check.read(a.partitions);
            Map<MirrorPartition, Drain> proven = proof;
            boolean unchanged = now.entrySet().stream()
                    .allMatch(e -> e.getValue().drained()
                            && e.getValue().sourceEnd()
                                    == proven.get(e.getKey()).sourceEnd());
            if (unchanged) {
                return now;
            }
            if (!a.request.fenceSource()) {
                throw new MirrorException(
                        MirrorError.INVALID_CLUSTER_MIRROR_STATE,
                        "The source log end moved during the promote: producers are still writing to the source. Stop "
                                + "them (or let the promote fence the source), then promote again; rolled back",
                        "fenceSource");
            }
            proof = drain(a);
        }
    }

    /** The point of no return: the partitions move to STOPPING together with the proof, in one write. */
    Void commit(Attempt a) {
        requireMirroring(a);
        Instant now = clock.instant();
        Map<MirrorPartition, PartitionStatus> owned = host.partitions(a.mirror);
        Map<String, TopicPromotion> promotions = host.promotions(a.mirror);
        Map<MirrorPartition, PartitionStatus> stopping = new TreeMap<>();
        a.partitions.forEach(p -> stopping.put(p, owned.get(p).moveTo(MirrorPartitionState.STOPPING, PROMOTED, now)));
        Map<String, TopicPromotion> promoted = new TreeMap<>();
        for (String topic : a.topics) {
            List<TopicPromotion.PromotedPartition> proof = new ArrayList<>();
            new TreeMap<>(a.proof).forEach((p, d) -> {
                if (p.topic().equals(topic)) {
                    proof.add(new TopicPromotion.PromotedPartition(
                            p.partition(), d.sourceEnd(), d.destinationEnd(), d.sourceLeaderEpoch()));
                }
            });
            TopicPromotion begun = promotions.get(topic);
            if (begun == null) {
                throw MirrorException.unknownMirror(a.mirror);
            }
            promoted.put(topic, begun.promoted(proof, now));
        }
        host.persist(a.mirror, promoted, stopping);
        a.promoted = Frozen.map(promoted);
        a.committed = true;
        LOGGER.infof(
                "Mirror %s: promoted %s: the destination ends where the source does (%s); stopping the topics",
                a.mirror,
                a.topics,
                a.proof.values().stream().mapToLong(Drain::sourceEnd).sum() + " records in all");
        host.stopPartitions(a.mirror, stopping.keySet());
        return null;
    }

    Outcome awaitStopped(Attempt a) throws InterruptedException {
        long until = System.nanoTime() + STOP_WAIT.toNanos();
        while (System.nanoTime() < until
                && a.partitions.stream().anyMatch(p -> {
                    PartitionStatus s = host.partitions(a.mirror).get(p);
                    return s != null && s.state() != MirrorPartitionState.STOPPED;
                })) {
            Thread.sleep(POLL_MS);
        }
        // the committed values, not the state read again: a DELETE of the mirror may have removed them meanwhile
        return new Outcome(a.topics.stream().map(a.promoted::get).toList(), a.groups);
    }

    private void requireMirroring(Attempt a) {
        host.require(a.mirror); // a mirror deleted meanwhile is UNKNOWN_CLUSTER_MIRROR, not a partition gone
        Map<MirrorPartition, PartitionStatus> owned = host.partitions(a.mirror);
        for (MirrorPartition p : a.partitions) {
            PartitionStatus s = owned.get(p);
            if (s == null || s.state() != MirrorPartitionState.MIRRORING) {
                throw new MirrorException(
                        MirrorError.INVALID_MIRROR_PARTITION_STATE,
                        p + " left MIRRORING during the promote (" + (s == null ? "gone" : s.state())
                                + (s != null && s.error() != null ? ": " + s.error() : "")
                                + "); the promote was rolled back",
                        "topics");
            }
        }
    }

    private Uni<Void> rollBack(String mirror, Set<String> topics, String why) {
        return fences.rollBack(mirror, topics, why);
    }

    /** The fences promotes put on the source, after the promote. */
    PromotionFences fences() {
        return fences;
    }

    /**
     * Fences the source topics that are not fenced already, while this instance still runs the mirror: one that lost
     * it (paused past its session, cut off) since the promote began must not fence, since the new owner has rolled the
     * promote back (lifting what it recorded) and would never know of a fence put up after that. The lease bounds the
     * window as it does for appends (decisions §48).
     */
    void fenceSource(Attempt a) throws Exception {
        if (!host.holds(a.mirror) || !host.leaseValid()) {
            throw new MirrorException(
                    MirrorError.COORDINATOR_NOT_AVAILABLE,
                    "Mirror '" + a.mirror + "' may have moved to another instance during the promote (this instance "
                            + "no longer holds its state partition, or its lease in the state group lapsed), before the "
                            + "source was fenced: nothing was fenced, the instance that runs the mirror rolls the "
                            + "promote back; try again");
        }
        fence(a).fence(without(a.topics, a.preFenced));
        LOGGER.infof("Mirror %s: source topics %s fenced against writes for a promote", a.mirror, a.topics);
    }

    private SourceFence fence(Attempt a) {
        return new SourceFence(a.runtime.sourceAdmin, timeoutMs);
    }

    static <T> Uni<T> blocking(Callable<T> step) {
        return Uni.createFrom()
                .item(() -> {
                    try {
                        return step.call();
                    } catch (RuntimeException e) {
                        throw e;
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new MirrorException(MirrorError.UNKNOWN_SERVER_ERROR, "interrupted");
                    } catch (Exception e) {
                        throw new MirrorException(
                                MirrorError.INVALID_CLUSTER_MIRROR_STATE, "The promote could not go on: " + e);
                    }
                })
                .runSubscriptionOn(Infrastructure.getDefaultWorkerPool());
    }

    private static Set<String> without(Set<String> all, Set<String> some) {
        Set<String> rest = new TreeSet<>(all);
        rest.removeAll(some);
        return rest;
    }
}
