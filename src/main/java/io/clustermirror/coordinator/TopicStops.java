package io.clustermirror.coordinator;

import io.clustermirror.fetch.DataPlane;
import io.clustermirror.mirror.LossReport;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionStatus;
import io.smallrye.mutiny.TimeoutException;
import io.smallrye.mutiny.Uni;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import org.jboss.logging.Logger;

/**
 * StopMirrorTopics once the partitions are STOPPING: each leaves the data plane (open destination transactions are
 * aborted: a stopped topic never shows uncommitted data as committed); then, in one task for all the partitions of the
 * stop, what it may have left on the source is read ({@link LossReport}: the ends at the stop, the last sighting of
 * the source's end, the RPO), every topic left without an active partition is made writable (its read-only guard
 * lifted) and then gets its mirror-owned configs back from the source's, and the partitions settle STOPPED. The mirror's clients are built off the coordinator thread; while they cannot be built, the stop waits,
 * saying why, and is tried again.
 */
final class TopicStops {

    private static final Logger LOGGER = Logger.getLogger(TopicStops.class);
    /** How long the topics of a stop that are out wait for the others, to be handed back together. */
    static final long GATHER_MS = 500;
    /** How often a stop that waits for the mirror's clients is tried again. */
    private static final long RETRY_SECONDS = 3;

    /** Moves a partition still in {@code from} to {@code to}, with the data plane's last progress. */
    @FunctionalInterface
    interface Settler {
        void settle(
                String mirror,
                MirrorPartition partition,
                MirrorPartitionState from,
                MirrorPartitionState to,
                String error,
                DataPlane.Progress last,
                LossReport loss);
    }

    /**
     * The topics each mirror made writable while their stop waited for its clients, and when (coordinator thread
     * writes; the stop's worker reads): their STOPPED status says that the loss report's destination end, read once the
     * clients are back, counts what was written since.
     */
    private final Map<String, Map<String, Instant>> writableWhileWaiting = new ConcurrentHashMap<>();

    private final PartitionLifecycle.Host host;
    private final CoordinatorThread thread;
    private final Settler settler;
    private final Clock clock;
    private final FlowDeadlines flows;

    TopicStops(
            PartitionLifecycle.Host host, CoordinatorThread thread, Settler settler, Clock clock, FlowDeadlines flows) {
        this.host = host;
        this.thread = thread;
        this.settler = settler;
        this.clock = clock;
        this.flows = flows;
    }

    /**
     * Takes the partitions out of the data plane; once they are out, hands back the topics left without an active
     * partition and settles the partitions STOPPED.
     */
    void stop(String name, Collection<MirrorPartition> stopping) {
        host.withRuntime(name, runtime -> stop(name, stopping, runtime), e -> awaitClientsToStop(name, stopping, e));
    }

    private void stop(String name, Collection<MirrorPartition> stopping, MirrorParts runtime) {
        Map<String, Map<MirrorPartition, CompletableFuture<DataPlane.Progress>>> byTopic = new TreeMap<>();
        Map<MirrorPartition, Integer> epochs = new HashMap<>();
        stopping.stream()
                .filter(p -> host.partitions(name).containsKey(p)) // gone while the mirror's clients were built
                .forEach(p -> {
                    // a stopped topic never shows uncommitted data as committed
                    byTopic.computeIfAbsent(p.topic(), t -> new TreeMap<>())
                            .put(p, runtime.dataPlane().remove(p, true));
                    epochs.put(p, host.partitions(name).get(p).stateEpoch());
                });
        Gathering gathering = new Gathering(name, runtime, epochs, byTopic.size());
        byTopic.forEach((topic, removals) -> {
            Set<MirrorPartition> releasing = new TreeSet<>(removals.keySet());
            // a removal that never completes (a loop that died, a task dropped by a closed runtime) must not leave
            // the partitions STOPPING without a word: at the deadline they say why, and the topic's stop is tried again
            Uni.createFrom()
                    .completionStage(CompletableFuture.allOf(removals.values().toArray(CompletableFuture[]::new)))
                    .ifNoItem()
                    .after(flows.timeout())
                    .fail()
                    .subscribe()
                    .with(
                            done -> thread.run("stop of " + topic, () -> gathering.out(removals)),
                            failure -> thread.run("stop of " + topic, () -> {
                                waitAndRetry(
                                        name,
                                        releasing,
                                        failure instanceof TimeoutException
                                                ? flows.exceeded("stop", name, flows.timeout())
                                                        + " (the data plane has not released " + releasing
                                                        + "); tried again every " + RETRY_SECONDS + " s"
                                                : "the data plane could not release " + releasing + ": " + failure);
                                gathering.answered();
                            }));
        });
    }

    /**
     * The topics of one stop as their partitions come out of the data plane (coordinator thread): handed back in one
     * task once every topic answered, or {@value #GATHER_MS} ms after the first was out while others still wait (one
     * topic waiting for its data plane holds back no other for long), and so on. With the source gone, each task waits
     * out one source read, so the fewer the better.
     */
    private final class Gathering {
        private final String name;
        private final MirrorParts runtime;
        private final Map<MirrorPartition, Integer> epochs;
        private final Map<MirrorPartition, CompletableFuture<DataPlane.Progress>> out = new TreeMap<>();
        /** The topics that have not answered yet. */
        private int waiting;

        private boolean flushDue;

        Gathering(String name, MirrorParts runtime, Map<MirrorPartition, Integer> epochs, int topics) {
            this.name = name;
            this.runtime = runtime;
            this.epochs = epochs;
            this.waiting = topics;
        }

        void out(Map<MirrorPartition, CompletableFuture<DataPlane.Progress>> removals) {
            out.putAll(removals);
            answered();
            if (!out.isEmpty() && !flushDue) {
                flushDue = true;
                thread.schedule("stop of " + name, GATHER_MS, this::flush);
            }
        }

        void answered() {
            if (--waiting == 0) {
                flush();
            }
        }

        private void flush() {
            flushDue = false;
            if (out.isEmpty()) {
                return;
            }
            Map<MirrorPartition, CompletableFuture<DataPlane.Progress>> batch = new TreeMap<>(out);
            out.clear();
            handBackAndSettle(name, runtime, batch, epochs);
        }
    }

    /**
     * Once the partitions are out (one task for all, on the mirror's workers): what the stop may leave on the source,
     * read first, for all at once (the destination's ends before anyone else may write to them; with the source gone,
     * this waits out its read's timeout once); then the topics left without an active partition are handed back; then
     * the partitions settle STOPPED.
     */
    private void handBackAndSettle(
            String name,
            MirrorParts runtime,
            Map<MirrorPartition, CompletableFuture<DataPlane.Progress>> removals,
            Map<MirrorPartition, Integer> epochs) {
        try {
            runtime.workers().execute(() -> {
                Map<MirrorPartition, LossReport> read;
                String unreported = null;
                try {
                    read = host.lossAtStop(name, removals.keySet());
                } catch (RuntimeException e) {
                    read = Map.of();
                    unreported = "what the stop may have left on the source could not be read: " + e;
                }
                Map<MirrorPartition, LossReport> losses = read;
                Set<String> topics = new TreeSet<>();
                removals.keySet().forEach(p -> topics.add(p.topic()));
                // a topic with another partition not STOPPED stays guarded: that one's stop hands it back (the
                // partitions of a topic are stopped together, also after a restart)
                topics.removeIf(topic -> activeBeside(name, topic, removals.keySet(), true));
                Map<String, List<String>> handedBack = handBack(topics, runtime);
                Map<String, Instant> early = Map.copyOf(writableWhileWaiting.getOrDefault(name, Map.of()));
                String lossError = unreported;
                // what went wrong first, what is true now; then the partition's error while STOPPING, if any: the
                // stop's reason ("promoted: …", "source topic deleted; …", which say what the stop meant to leave:
                // writable) and any data-plane failure since, which stay
                BiFunction<MirrorPartition, PartitionStatus, String> errors = (p, stopping) -> {
                    List<String> each = new ArrayList<>();
                    if (lossError != null) {
                        each.add(lossError);
                    }
                    if (early.containsKey(p.topic())) {
                        each.add("the topic was writable from " + early.get(p.topic())
                                + " while the stop waited for the mirror's clients: the loss report's destination end,"
                                + " read at the stop's end, counts what was written since");
                    }
                    each.addAll(handedBack.getOrDefault(p.topic(), List.of()));
                    if (each.isEmpty()) {
                        return null;
                    }
                    if (stopping.error() != null) {
                        each.add(stopping.error());
                    }
                    return String.join("; ", each);
                };
                thread.run("stop of " + name, () -> {
                    removals.forEach((p, removal) -> {
                        PartitionStatus now = host.partitions(name).get(p);
                        if (now != null && now.stateEpoch() >= epochs.get(p)) {
                            settler.settle(
                                    name,
                                    p,
                                    MirrorPartitionState.STOPPING,
                                    MirrorPartitionState.STOPPED,
                                    errors.apply(p, now),
                                    removal.getNow(null),
                                    losses.get(p));
                        }
                    });
                    Map<String, Instant> lifted = writableWhileWaiting.get(name);
                    if (lifted != null) {
                        lifted.keySet().removeAll(topics);
                    }
                });
            });
        } catch (RejectedExecutionException e) {
            thread.run(
                    "stop of " + name,
                    () -> waitAndRetry(
                            name,
                            removals.keySet(),
                            "the mirror's clients were closed during the stop; tried again every " + RETRY_SECONDS
                                    + " s"));
        }
    }

    /**
     * Hands the topics back: every one writable first (its guard lifted), then their mirror-owned configs restored from
     * the source's, all together (a read of each cluster and a write per 500 topics, {@link
     * MirrorParts#restoreConfigs}). The guards go whatever the configs do: in an unplanned failover the source is gone,
     * and the topics must take writes all the same (the owned configs let any batch in); with it gone, the configs wait
     * out one timeout for all the topics. What could not be done, by topic, for the partitions' STOPPED status.
     */
    private static Map<String, List<String>> handBack(Set<String> topics, MirrorParts runtime) {
        Map<String, List<String>> errors = new TreeMap<>();
        if (topics.isEmpty()) {
            return errors;
        }
        try {
            runtime.liftGuards(topics);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            // one DeleteAcls for all: what failed it (authorization, the destination) failed it for each
            topics.forEach(topic -> errors.computeIfAbsent(topic, t -> new ArrayList<>())
                    .add("the destination topic is still read-only: its guard ACL (DENY WRITE for User:*) could not "
                            + "be deleted: " + unwrapped(e)));
        }
        Map<String, Exception> notRestored;
        try {
            notRestored = runtime.restoreConfigs(topics);
        } catch (InterruptedException | RuntimeException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            notRestored = new TreeMap<>();
            for (String topic : topics) {
                notRestored.put(topic, e);
            }
        }
        notRestored.forEach((topic, e) -> errors.computeIfAbsent(topic, t -> new ArrayList<>())
                .add("mirror-owned configs of the destination topic could not be restored: " + unwrapped(e)));
        return errors;
    }

    /** What a blocking Admin call failed with: the cause an {@link ExecutionException} wraps, else e. */
    private static Throwable unwrapped(Exception e) {
        return e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
    }

    /**
     * A stop needs the mirror's clients (to restore the destination topic's configs from the source's and to abort
     * the destination transactions it holds open); while they cannot be built, the partitions stay STOPPING with the
     * reason in describe and the stop is tried again every few seconds.
     */
    private void awaitClientsToStop(String name, Collection<MirrorPartition> stopping, RuntimeException cause) {
        waitAndRetry(name, stopping, "stopping waits for the mirror's clients: " + cause.getMessage());
        writableWhileWaiting(name, stopping);
    }

    /**
     * The mirror's clients cannot be built (in an unplanned failover: the source's name no longer resolves, its login
     * server is gone, a secret is missing), so nothing of the mirror writes to its topics (no clients, no data plane):
     * the topics left without an active partition are made writable now, over the service's destination Admin, and the
     * rest of the stop (open transactions aborted, configs, the loss report) waits for the clients. A lift that fails
     * is tried again with the stop, every few seconds.
     */
    private void writableWhileWaiting(String name, Collection<MirrorPartition> stopping) {
        Map<String, Instant> lifted = writableWhileWaiting.computeIfAbsent(name, n -> new ConcurrentHashMap<>());
        Set<MirrorPartition> asked = new TreeSet<>(stopping);
        Set<String> topics = new TreeSet<>();
        stopping.forEach(p -> topics.add(p.topic()));
        // a STOPPING partition outside this stop has no data plane either (the mirror has no clients)
        topics.removeIf(topic -> lifted.containsKey(topic) || activeBeside(name, topic, asked, false));
        if (topics.isEmpty()) {
            return;
        }
        host.liftGuards(topics)
                .whenComplete((done, error) -> thread.run("guards of " + name, () -> {
                    if (error != null) {
                        LOGGER.warnf(
                                "Mirror %s: the guards of %s could not be lifted while the stop waits for the mirror's clients "
                                        + "(tried again with the stop): %s",
                                name, topics, error);
                        return;
                    }
                    Instant now = clock.instant();
                    // a stop that ended meanwhile (its clients came back) handed these back already
                    topics.stream()
                            .filter(topic -> stillStopping(name, topic, asked))
                            .forEach(topic -> lifted.put(topic, now));
                    LOGGER.warnf(
                            "Mirror %s: %s made writable while the stop waits for the mirror's clients (configs, open "
                                    + "transactions and the loss report follow once they can be built)",
                            name, topics);
                }));
    }

    /**
     * Whether a partition of the topic other than {@code stopping} is not STOPPED ({@code stoppingCounts}) or neither
     * STOPPED nor STOPPING.
     */
    private boolean activeBeside(String name, String topic, Set<MirrorPartition> stopping, boolean stoppingCounts) {
        return host.partitions(name).entrySet().stream()
                .anyMatch(e -> e.getKey().topic().equals(topic)
                        && !stopping.contains(e.getKey())
                        && e.getValue().state() != MirrorPartitionState.STOPPED
                        && (stoppingCounts || e.getValue().state() != MirrorPartitionState.STOPPING));
    }

    /** Whether a partition of the topic among {@code asked} is still STOPPING. */
    private boolean stillStopping(String name, String topic, Set<MirrorPartition> asked) {
        return asked.stream().anyMatch(p -> {
            PartitionStatus status = host.partitions(name).get(p);
            return p.topic().equals(topic) && status != null && status.state() == MirrorPartitionState.STOPPING;
        });
    }

    /** A deleted mirror leaves nothing behind. */
    void forget(String name) {
        writableWhileWaiting.remove(name);
    }

    /**
     * The partitions stay STOPPING with what they wait for in describe ({@code waiting}, persisted and logged once,
     * when it changes; their error, the stop's reason if any, stays), and the stop is tried again every few seconds
     * (coordinator thread). Their next move (STOPPED) drops it.
     */
    private void waitAndRetry(String name, Collection<MirrorPartition> stopping, String reason) {
        Map<MirrorPartition, PartitionStatus> waiting = new TreeMap<>();
        stopping.forEach(p -> {
            PartitionStatus current = host.partitions(name).get(p);
            if (current != null
                    && current.state() == MirrorPartitionState.STOPPING
                    && !reason.equals(current.waiting())) {
                waiting.put(p, current.waitingFor(reason, clock.instant()));
            }
        });
        if (!waiting.isEmpty()) {
            host.persistPartitions(name, waiting);
            LOGGER.warnf("Mirror %s: %s", name, reason);
        }
        thread.schedule("stop of " + name, TimeUnit.SECONDS.toMillis(RETRY_SECONDS), () -> {
            List<MirrorPartition> still = stopping.stream()
                    .filter(p -> host.partitions(name).containsKey(p)
                            && host.partitions(name).get(p).state() == MirrorPartitionState.STOPPING)
                    .toList();
            if (!still.isEmpty() && host.exists(name)) {
                stop(name, still);
            }
        });
    }
}
