package io.clustermirror.verification;

import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.WireClient;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.VerificationReport;
import io.clustermirror.mirror.VerificationReport.Result;
import io.clustermirror.mirror.VerificationReport.State;
import io.clustermirror.mirror.VerificationReport.Verdict;
import io.clustermirror.topics.OffsetLookup;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.jboss.logging.Logger;

/**
 * One consistency verification of a mirror's partitions (decisions §46): the offsets both logs hold when it starts,
 * read from both clusters in rounds and judged by {@link LogComparison}. Each round is one task on the mirror's worker
 * executor (never an event loop, never the coordinator thread): it reads every open partition's next answer with one
 * Fetch per leader and cluster (at most {@link #PARTITION_MAX_BYTES} a partition), judges it, and gives the workers
 * back, so a LOG_TRUNCATION or a stop of the same mirror waits one round at most. The next round waits long enough for
 * the source bytes read to stay within the instance's replication budget ({@code mirror.replication.throttled.rate},
 * read at each round), so a verification alone reads no faster than the mirror may.
 *
 * <p>Thread-safe: the rounds run one after another (each schedules the next); {@link #report()} may be called from
 * any thread, an HTTP event loop included: it reads, and at most marks a stalled verification FAILED, whose clients
 * then close on another thread.
 */
public final class Verification {

    private static final Logger LOGGER = Logger.getLogger(Verification.class);
    /** What one partition's answer may bring per cluster and round. */
    static final int PARTITION_MAX_BYTES = 1 << 20;
    /**
     * Open partitions a round reads, in turn: what one Fetch per cluster carries, so that a round holds at most this many
     * times {@link #PARTITION_MAX_BYTES} of each cluster in memory, whatever the partition count.
     */
    static final int ROUND_PARTITIONS = VerificationReads.PARTITIONS_PER_FETCH;
    /** Rounds in a row without progress (or failing reads) after which a partition is INCOMPLETE. */
    static final int MAX_IDLE_ROUNDS = 3;
    /**
     * A queued round that has not started this long after it was due was dropped (the mirror's runtime was closed or
     * rebuilt, which drops its queued worker tasks): the verification ends FAILED instead of RUNNING forever.
     */
    static final long STALLED_AFTER_MS = 10 * 60_000L;

    /** What the verification tells its owner. */
    public interface Listener {

        /** The partition was verified identical up to {@code upTo} (exclusive). */
        void verified(MirrorPartition partition, long upTo);

        /** The partition differs. */
        void differed(MirrorPartition partition);

        /** The verification ended (DONE or FAILED). */
        void finished(VerificationReport report);
    }

    /** Both clusters as the verification reads them; the wire clients are made for it and closed at its end. */
    public record Clusters(
            Admin sourceAdmin,
            Admin destinationAdmin,
            Supplier<WireClient> sourceClient,
            Supplier<WireClient> destinationClient,
            int timeoutMs) {}

    private final String id;
    private final String mirror;
    private final Clusters clusters;
    private final Executor workers;
    private final LongSupplier bytesPerSecond;
    private final Listener listener;
    private final Clock clock;
    private final Instant startedAt;
    /** Guarded by this. */
    private final Map<MirrorPartition, Work> works = new LinkedHashMap<>();
    /** The last partition a round read ({@link #nextInTurn}); under the lock. */
    private MirrorPartition lastRead;

    private State state = State.RUNNING;
    /** Whether {@link #finish} ran: it closes the clients and tells the owner once, whoever reaches it later. */
    private boolean finished;

    private String failure;
    private Instant finishedAt;
    private long bytesCompared;
    /** When the next step was due to start (clock millis); a step not begun long after it was dropped. */
    private long dueMillis;

    private WireClient source;
    private WireClient destination;
    private ClusterView sourceView;
    private ClusterView destinationView;

    /** One partition: where it starts and ends, how far it got. Guarded by the verification. */
    private static final class Work {
        final MirrorPartition partition;
        final TopicPartition tp;
        final Long resumeFrom;
        long from = -1;
        long to = -1;
        long next = -1;
        long batches;
        long records;
        Result result;
        long differenceOffset = -1;
        String reason;
        int idleRounds;
        LogComparison.Cleaning cleaning;

        Work(MirrorPartition partition, Long resumeFrom) {
            this.partition = partition;
            this.tp = new TopicPartition(partition.topic(), partition.partition());
            this.resumeFrom = resumeFrom;
        }

        void end(Result result, long offset, String reason) {
            this.result = result;
            this.differenceOffset = offset;
            this.reason = reason;
        }
    }

    /**
     * @param resumeFrom per partition, where a {@code "from": "last"} verification continues (the offset the last one
     *     verified up to); partitions without one start at the logs' start
     */
    public Verification(
            String id,
            String mirror,
            Collection<MirrorPartition> partitions,
            Map<MirrorPartition, Long> resumeFrom,
            Clusters clusters,
            Executor workers,
            LongSupplier bytesPerSecond,
            Listener listener,
            Clock clock) {
        this.id = id;
        this.mirror = mirror;
        this.clusters = clusters;
        this.workers = workers;
        this.bytesPerSecond = bytesPerSecond;
        this.listener = listener;
        this.clock = clock;
        this.startedAt = clock.instant();
        this.dueMillis = clock.millis();
        new TreeSet<>(partitions).forEach(p -> works.put(p, new Work(p, resumeFrom.get(p))));
    }

    public String id() {
        return id;
    }

    /** Queues the first step on the workers; a refusal (the mirror's runtime closing) is thrown to the caller. */
    public void start() {
        workers.execute(() -> step(this::prepare));
    }

    /** Runs a step, ending the whole verification FAILED when it throws. */
    private void step(StepBody body) {
        synchronized (this) {
            dueMillis = Long.MAX_VALUE; // running: a step blocks at most for its requests' timeouts
        }
        try {
            body.run();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail("interrupted (the mirror's runtime was closed)");
        } catch (Exception | LinkageError | OutOfMemoryError e) {
            // an OutOfMemoryError too: the verification's answers are what the heap held, so it ends and lets them go
            // instead of staying RUNNING with its clients open
            LOGGER.warnf(e, "Verification %s of mirror %s failed", id, mirror);
            fail(e.toString());
        }
    }

    @FunctionalInterface
    private interface StepBody {
        void run() throws Exception;
    }

    /** Both clusters' views, policies and offsets: from and to of every partition. Worker thread. */
    private void prepare() throws Exception {
        Set<String> topics = new TreeSet<>();
        synchronized (this) {
            works.values().forEach(w -> topics.add(w.tp.topic()));
        }
        WireClient sourceClient = clusters.sourceClient().get();
        WireClient destinationClient = clusters.destinationClient().get();
        synchronized (this) {
            source = sourceClient;
            destination = destinationClient;
        }
        if (ended()) {
            closeClients(); // ended meanwhile (cancelled): what ended it closed none of these
            return;
        }
        loadViews(topics);
        List<TopicPartition> tps = new ArrayList<>();
        synchronized (this) {
            for (Work w : works.values()) {
                // a topic one cluster does not have: its offsets cannot be read (a look-up would wait out its time-out)
                String missingOn = !sourceView.topicIds().containsKey(w.tp.topic())
                        ? "source"
                        : !destinationView.topicIds().containsKey(w.tp.topic()) ? "destination" : null;
                if (missingOn != null) {
                    w.end(Result.INCOMPLETE, -1, "topic " + w.tp.topic() + " is not on the " + missingOn);
                } else {
                    tps.add(w.tp);
                }
            }
        }
        Map<String, Boolean> sourceCompacted = compacted(clusters.sourceAdmin(), topics);
        Map<String, Boolean> destinationCompacted = compacted(clusters.destinationAdmin(), topics);
        OffsetLookup sourceOffsets = new OffsetLookup(clusters.sourceAdmin(), clusters.timeoutMs());
        OffsetLookup destinationOffsets = new OffsetLookup(clusters.destinationAdmin(), clusters.timeoutMs());
        var sourceStart = sourceOffsets.await(tps, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED);
        var sourceEnd = sourceOffsets.latest(tps);
        var destinationStart = destinationOffsets.await(tps, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED);
        var destinationEnd = destinationOffsets.latest(tps);
        synchronized (this) {
            for (Work w : works.values()) {
                if (w.result != null) {
                    continue;
                }
                var ss = sourceStart.offset(w.tp);
                var se = sourceEnd.offset(w.tp);
                var ds = destinationStart.offset(w.tp);
                var de = destinationEnd.offset(w.tp);
                if (ss.isEmpty() || se.isEmpty() || ds.isEmpty() || de.isEmpty()) {
                    w.end(Result.INCOMPLETE, -1, "its log start and end could not be read on both clusters");
                    continue;
                }
                w.cleaning = new LogComparison.Cleaning(
                        sourceCompacted.getOrDefault(w.tp.topic(), false),
                        destinationCompacted.getOrDefault(w.tp.topic(), false));
                w.from = Math.max(ss.getAsLong(), ds.getAsLong());
                if (w.resumeFrom != null && w.resumeFrom <= de.getAsLong()) {
                    // above the destination's end, the last verification's offset is of a log since truncated or
                    // recreated (a recreated topic's record is forgotten too): from the log start again then
                    w.from = Math.max(w.from, w.resumeFrom);
                }
                w.to = Math.min(se.getAsLong(), de.getAsLong());
                w.next = w.from;
                if (w.next >= w.to) {
                    w.end(Result.IDENTICAL, -1, null); // nothing both logs hold that was not verified
                }
            }
        }
        next(0);
    }

    private void loadViews(Set<String> topics) throws Exception {
        sourceView = ClusterView.load(clusters.sourceAdmin(), topics, clusters.timeoutMs());
        destinationView = ClusterView.load(clusters.destinationAdmin(), topics, clusters.timeoutMs());
    }

    /**
     * Whether each topic's cleaner may remove records (cleanup.policy holds compact), one DescribeConfigs. A topic the
     * cluster does not have is left out: its partitions' offsets cannot be read either, so they end INCOMPLETE saying
     * so, and the other topics are verified.
     */
    private Map<String, Boolean> compacted(Admin admin, Set<String> topics) throws Exception {
        List<ConfigResource> resources = topics.stream()
                .map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t))
                .toList();
        Map<String, Boolean> compacted = new HashMap<>();
        for (var described : admin.describeConfigs(resources).values().entrySet()) {
            Config config;
            try {
                config = described.getValue().get(clusters.timeoutMs(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                    continue;
                }
                throw e;
            }
            var policy = config.get(TopicConfig.CLEANUP_POLICY_CONFIG);
            compacted.put(
                    described.getKey().name(),
                    policy != null && policy.value().contains(TopicConfig.CLEANUP_POLICY_COMPACT));
        }
        return compacted;
    }

    /** One round: every open partition's next answers of both clusters, judged. Worker thread. */
    private void round() throws Exception {
        long started = System.nanoTime();
        Map<TopicPartition, Long> offsets = new LinkedHashMap<>();
        List<Work> turn;
        synchronized (this) {
            turn = nextInTurn();
            turn.forEach(w -> offsets.put(w.tp, w.next));
        }
        var fromSource = VerificationReads.read(source, sourceView, offsets, PARTITION_MAX_BYTES);
        var fromDestination = VerificationReads.read(destination, destinationView, offsets, PARTITION_MAX_BYTES);
        long sourceBytes = fromSource.values().stream()
                .mapToLong(VerificationReads.Answer::bytes)
                .sum();
        // judged outside the lock, which a GET of the report (an event loop) takes: a work's next, to and cleaning
        // change only on the rounds' thread, so they are read here as the last round left them
        Map<Work, LogComparison.Step> steps = new HashMap<>();
        for (Work w : turn) {
            var s = fromSource.get(w.tp);
            var d = fromDestination.get(w.tp);
            if (s.failure() == null && d.failure() == null && s.settles(w.next, w.to) && d.settles(w.next, w.to)) {
                steps.put(w, LogComparison.compare(w.next, w.to, s.batches(), d.batches(), w.cleaning));
            }
        }
        boolean failedReads = false;
        List<MirrorPartition> verified = new ArrayList<>();
        List<MirrorPartition> differed = new ArrayList<>();
        synchronized (this) {
            for (Work w : turn) {
                if (w.result != null) {
                    continue; // ended meanwhile (cancelled)
                }
                var s = fromSource.get(w.tp);
                var d = fromDestination.get(w.tp);
                if (s.failure() != null || d.failure() != null) {
                    failedReads = true;
                    if (++w.idleRounds >= MAX_IDLE_ROUNDS) {
                        w.end(
                                Result.INCOMPLETE,
                                -1,
                                "reads failed: " + (s.failure() != null ? s.failure() : d.failure()).getMessage());
                    }
                    continue;
                }
                if (!s.settles(w.next, w.to) || !d.settles(w.next, w.to)) {
                    // a leader whose high watermark is below the range (a failover under way): ask again
                    if (++w.idleRounds >= MAX_IDLE_ROUNDS) {
                        w.end(
                                Result.INCOMPLETE,
                                -1,
                                "a leader's high watermark stayed below offset " + w.to + " in " + MAX_IDLE_ROUNDS
                                        + " reads");
                    }
                    failedReads = true; // the leaders are looked up again
                    continue;
                }
                LogComparison.Step step = steps.get(w);
                w.batches += step.batches();
                w.records += step.records();
                bytesCompared += step.bytes();
                if (step.different()) {
                    w.next = Math.max(w.next, step.next());
                    w.end(
                            Result.DIFFERENT,
                            step.difference().offset(),
                            step.difference().reason());
                    differed.add(w.partition);
                } else if (step.next() > w.next) {
                    w.next = step.next();
                    w.idleRounds = 0;
                    if (w.next >= w.to) {
                        w.end(Result.IDENTICAL, -1, null);
                        verified.add(w.partition);
                    }
                } else if (++w.idleRounds >= MAX_IDLE_ROUNDS) {
                    w.end(
                            Result.INCOMPLETE,
                            -1,
                            "no progress at offset " + w.next + " in " + MAX_IDLE_ROUNDS + " reads");
                }
            }
        }
        verified.forEach(p -> listener.verified(p, verifiedTo(p)));
        differed.forEach(listener::differed);
        if (failedReads) {
            loadViews(new TreeSet<>(
                    offsets.keySet().stream().map(TopicPartition::topic).toList()));
        }
        long rate = bytesPerSecond.getAsLong();
        long budgetMs = rate <= 0 || rate == Long.MAX_VALUE ? 0 : sourceBytes * 1000 / rate;
        next(Math.max(0, budgetMs - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)));
    }

    /**
     * The next {@link #ROUND_PARTITIONS} open partitions after those the last round read, in partition order, wrapping
     * around: every open partition is read in turn. Under the lock.
     */
    private List<Work> nextInTurn() {
        List<Work> open = works.values().stream().filter(w -> w.result == null).toList();
        int start = 0;
        if (lastRead != null) {
            while (start < open.size() && open.get(start).partition.compareTo(lastRead) <= 0) {
                start++;
            }
        }
        List<Work> turn = new ArrayList<>();
        for (int i = 0; i < Math.min(ROUND_PARTITIONS, open.size()); i++) {
            turn.add(open.get((start + i) % open.size()));
        }
        if (!turn.isEmpty()) {
            lastRead = turn.get(turn.size() - 1).partition;
        }
        return turn;
    }

    private synchronized long verifiedTo(MirrorPartition partition) {
        return works.get(partition).next;
    }

    /** The next round after {@code delayMs}, or the end when no partition is open. */
    private void next(long delayMs) {
        boolean open;
        synchronized (this) {
            open = state == State.RUNNING && works.values().stream().anyMatch(w -> w.result == null);
        }
        if (!open) {
            finish();
            return;
        }
        synchronized (this) {
            dueMillis = clock.millis() + delayMs;
        }
        Runnable round = () -> step(this::round);
        if (delayMs <= 0) {
            workers.execute(round);
            return;
        }
        CompletableFuture.delayedExecutor(delayMs, TimeUnit.MILLISECONDS).execute(() -> {
            try {
                workers.execute(round);
            } catch (RejectedExecutionException e) {
                fail("the mirror's runtime was closed");
            }
        });
    }

    private void finish() {
        VerificationReport report;
        synchronized (this) {
            if (finished) {
                return; // a late round, or the stall rule, reaching an end told already
            }
            finished = true;
            if (state == State.RUNNING) {
                boolean different = works.values().stream().anyMatch(w -> w.result == Result.DIFFERENT);
                boolean incomplete = works.values().stream().anyMatch(w -> w.result == Result.INCOMPLETE);
                if (incomplete && !different) {
                    state = State.FAILED;
                    failure = "some partitions could not be compared to their end (INCOMPLETE)";
                } else {
                    state = State.DONE;
                }
            }
            if (finishedAt == null) {
                finishedAt = clock.instant();
            }
            report = snapshot();
        }
        closeClients();
        listener.finished(report);
    }

    private void fail(String reason) {
        if (failed(reason)) {
            finish();
        }
    }

    /**
     * Ends it FAILED with the reason (its mirror was deleted here or moved to another instance): its clients close and
     * its owner hears of it on another thread, as the caller may be the coordinator's. A round under way meets closed
     * clients and ends there.
     */
    public void cancel(String reason) {
        if (failed(reason)) {
            CompletableFuture.runAsync(this::finish);
        }
    }

    /** Marks it FAILED, its open partitions INCOMPLETE; false when it had ended already. */
    private synchronized boolean failed(String reason) {
        if (state != State.RUNNING) {
            return false;
        }
        state = State.FAILED;
        failure = reason;
        finishedAt = clock.instant();
        works.values().stream().filter(w -> w.result == null).forEach(w -> w.end(Result.INCOMPLETE, -1, reason));
        return true;
    }

    private synchronized boolean ended() {
        return finished;
    }

    /** Whether it still runs (any thread). */
    public synchronized boolean running() {
        return state == State.RUNNING;
    }

    private void closeClients() {
        WireClient[] clients;
        synchronized (this) {
            clients = new WireClient[] {source, destination};
        }
        for (WireClient client : clients) {
            if (client != null) {
                try {
                    client.close();
                } catch (RuntimeException e) {
                    LOGGER.debugf(e, "Closing a client of verification %s", id);
                }
            }
        }
    }

    /** Where it stands now; FAILED once its next round is long overdue (it was dropped). */
    public VerificationReport report() {
        long overdue;
        synchronized (this) {
            overdue = state == State.RUNNING && dueMillis != Long.MAX_VALUE ? clock.millis() - dueMillis : 0;
        }
        if (overdue > STALLED_AFTER_MS
                && failed("its next round did not start within " + overdue / 1000
                        + " s: its tasks were dropped (the mirror's runtime was closed or rebuilt); start it again")) {
            // the reader may be an HTTP event loop: its clients close and its owner hears of it on another thread
            CompletableFuture.runAsync(this::finish);
        }
        return snapshot();
    }

    /**
     * None while it runs; DIFFERENT once it ended with a partition that differs, DONE or not (a difference found stands
     * when the run could not finish); IDENTICAL when it is DONE and none differs. Pure.
     */
    static Verdict verdict(State state, List<VerificationReport.Partition> partitions) {
        if (state == State.RUNNING) {
            return null;
        }
        if (partitions.stream().anyMatch(p -> p.result() == Result.DIFFERENT)) {
            return Verdict.DIFFERENT;
        }
        return state == State.DONE ? Verdict.IDENTICAL : null;
    }

    private synchronized VerificationReport snapshot() {
        List<VerificationReport.Partition> partitions = new ArrayList<>();
        long offsetsTotal = 0;
        long offsetsDone = 0;
        for (Work w : works.values()) {
            partitions.add(new VerificationReport.Partition(
                    w.partition, w.from, w.to, w.next, w.batches, w.records, w.result, w.differenceOffset, w.reason));
            if (w.to > w.from) {
                offsetsTotal += w.to - w.from;
                offsetsDone += w.result != null ? w.to - w.from : Math.min(w.to, w.next) - w.from;
            }
        }
        double seconds = Duration.between(startedAt, finishedAt != null ? finishedAt : clock.instant())
                        .toNanos()
                / 1e9;
        double rate = seconds > 0 ? bytesCompared / seconds : 0;
        long bytesTotal = state != State.RUNNING || offsetsDone == 0
                ? bytesCompared
                : Math.max(bytesCompared, (long) ((double) bytesCompared * offsetsTotal / offsetsDone));
        long eta = state != State.RUNNING ? 0 : rate > 0 ? (long) Math.ceil((bytesTotal - bytesCompared) / rate) : -1;
        Verdict verdict = verdict(state, partitions);
        return new VerificationReport(
                id,
                mirror,
                state,
                verdict,
                failure,
                startedAt,
                finishedAt,
                bytesCompared,
                bytesTotal,
                rate,
                eta,
                partitions);
    }
}
