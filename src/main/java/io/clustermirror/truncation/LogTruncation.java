package io.clustermirror.truncation;

import io.clustermirror.batches.RawFetch;
import io.clustermirror.batches.SourceBatch;
import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.WireClient;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.TruncationProgress;
import io.clustermirror.mirror.TruncationProgress.Step;
import io.clustermirror.topics.OffsetLookup;
import io.clustermirror.truncation.PrefixCheck.Answer;
import io.clustermirror.truncation.PrefixCheck.Check;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;

/**
 * LOG_TRUNCATION (DESIGN §4.3): makes the destination partition a prefix of the source, or says why it
 * cannot. An empty destination is aligned to the source log start with filler records and
 * DeleteRecords; a non-empty one is checked by content (its last batch against the source's batch at
 * the same offsets, either side possibly cleaned since: {@link BatchAgreement}; the filling is
 * {@link LogStartAlignment}'s). The partitions that enter
 * LOG_TRUNCATION together are checked together ({@link #check}), with one request per broker for each read. Blocking:
 * runs on a worker thread, with connections of its own that it keeps for the next batch.
 */
public final class LogTruncation implements PrefixCheck {

    /** The result: where mirroring starts, or why it cannot. */
    public sealed interface Outcome {}

    /**
     * The destination is a prefix of the source ending at {@code startOffset}; {@code sourceEpoch} is the source
     * leader epoch of the batch just before it (-1: none or unknown), for the fetches that continue from there;
     * {@code sourceEnd} the source's high watermark the check read (-1: unknown), so the data plane knows from the
     * partition's entry on whether it has records to copy.
     */
    public record Ready(long startOffset, int sourceEpoch, long sourceEnd) implements Outcome {}

    /** The destination cannot be made a prefix without recreating it. */
    public record Diverged(String reason) implements Outcome {}

    /** The partition cannot be mirrored yet for a reason recreating the destination would not change. */
    public record Unsupported(String reason) implements Outcome {}

    private final Admin sourceAdmin;
    private final Admin destinationAdmin;
    /** Where partitions start and end, on each cluster: the service's one offset look-up, over the same Admins. */
    private final OffsetLookup sourceOffsets;

    private final OffsetLookup destinationOffsets;
    /** Makes a network client to the source (or the destination) under the given client id. */
    private final Function<String, WireClient> sourceClients;

    private final Function<String, WireClient> destinationClients;
    private final int timeoutMs;
    private final String expectedSourceClusterId;
    /** LOG_START_ALIGNMENT of the empty destinations of a batch. */
    private final LogStartAlignment alignment;

    /** A source and a destination client for one truncation or divergence read at a time, kept for the next. */
    private record Clients(WireClient source, WireClient destination) {}

    /** The idle clients; a truncation takes one pair (or makes one) and gives it back. */
    private final Deque<Clients> idle = new ArrayDeque<>();

    private boolean closed;

    public LogTruncation(
            String expectedSourceClusterId,
            Admin sourceAdmin,
            Admin destinationAdmin,
            Map<String, ?> sourceConnection,
            Map<String, ?> destinationConnection,
            int timeoutMs) {
        this(
                expectedSourceClusterId,
                sourceAdmin,
                destinationAdmin,
                id -> WireClient.create(id, sourceConnection, timeoutMs),
                id -> WireClient.create(id, destinationConnection, timeoutMs),
                timeoutMs);
    }

    /** With the given makers of network clients (unit tests give clients over kafka-clients' {@code MockClient}). */
    LogTruncation(
            String expectedSourceClusterId,
            Admin sourceAdmin,
            Admin destinationAdmin,
            Function<String, WireClient> sourceClients,
            Function<String, WireClient> destinationClients,
            int timeoutMs) {
        this.expectedSourceClusterId = expectedSourceClusterId;
        this.sourceAdmin = sourceAdmin;
        this.destinationAdmin = destinationAdmin;
        this.sourceOffsets = new OffsetLookup(sourceAdmin, timeoutMs);
        this.destinationOffsets = new OffsetLookup(destinationAdmin, timeoutMs);
        this.sourceClients = sourceClients;
        this.destinationClients = destinationClients;
        this.timeoutMs = timeoutMs;
        this.alignment = new LogStartAlignment(destinationAdmin, timeoutMs);
    }

    /**
     * @param progress receives where the check stands, step by step, for describe
     */
    @Override
    public Outcome run(String mirror, MirrorPartition partition, Consumer<TruncationProgress> progress)
            throws Exception {
        return alone(mirror, Check.full(partition, progress));
    }

    /** A batch of one: its failure is thrown, as before batching. */
    private Outcome alone(String mirror, Check check) throws Exception {
        Answer answer = check(mirror, List.of(check)).get(check.partition());
        if (answer.failure() != null) {
            throw answer.failure();
        }
        return answer.outcome();
    }

    /**
     * The checks of a batch of partitions with one read per cluster and broker for all of them (decisions §36): the
     * four offset look-ups as one {@link OffsetLookup} call per cluster and spec (one ListOffsets per leader each, all
     * four at once), one view per cluster (both at once), the destination's last batches and the source's batches at
     * the same offsets in one Fetch per leader. What needs a partition to itself stays per partition: filling an empty
     * destination and the search for the first divergent offset of a destination that is not a prefix. The rules are
     * {@link #run}'s, partition by partition.
     */
    @Override
    public Map<MirrorPartition, Answer> check(String mirror, List<Check> checks) throws Exception {
        Map<TopicPartition, TruncationWork> works = new LinkedHashMap<>();
        for (Check check : checks) {
            TruncationWork work = new TruncationWork(check);
            if (works.putIfAbsent(work.tp, work) != null) {
                throw new IllegalArgumentException(check.partition() + " is twice in one batch");
            }
        }
        readOffsets(works);
        for (TruncationWork work : open(works)) {
            if (work.destinationEnd == work.destinationStart) {
                work.note(Step.LOG_START_ALIGNMENT, false, 0);
            } else {
                work.note(Step.DIVERGENCE_CHECK, false, -1);
            }
        }
        if (!open(works).isEmpty()) {
            Clients clients = checkOut(mirror);
            try {
                decide(works, clients.source(), clients.destination());
            } finally {
                checkIn(clients);
            }
        }
        Map<MirrorPartition, Answer> answers = new LinkedHashMap<>();
        works.values()
                .forEach(w -> answers.put(
                        w.check.partition(), w.failure != null ? Answer.failed(w.failure) : Answer.of(w.outcome)));
        return answers;
    }

    private static List<TruncationWork> open(Map<TopicPartition, TruncationWork> works) {
        return works.values().stream().filter(TruncationWork::open).toList();
    }

    /**
     * The four offsets of every partition, both clusters' asked for at once. EPOCH_FENCING's check needs only the
     * destination's end to find a destination holding what the source lost: that decides before the other look-ups'
     * failures.
     */
    private void readOffsets(Map<TopicPartition, TruncationWork> works) throws InterruptedException {
        List<OffsetSpec> specs = List.of(OffsetSpec.earliest(), OffsetSpec.latest());
        var askedSource = TruncationReads.askOffsets(sourceOffsets, works.keySet(), specs);
        var askedDestination = TruncationReads.askOffsets(destinationOffsets, works.keySet(), specs);
        var source = TruncationReads.offsets(askedSource, works.keySet());
        var destination = TruncationReads.offsets(askedDestination, works.keySet());
        for (TruncationWork work : works.values()) {
            TruncationReads.Read<Long> end = destination.get(specs.get(1)).get(work.tp);
            long epochEnd = work.check.epochEndOffset();
            if (epochEnd >= 0 && !end.failed() && end.value() > epochEnd) {
                work.outcome = new Diverged("the destination holds offsets [" + epochEnd + ", " + end.value()
                        + ") that the source no " + "longer has");
                continue;
            }
            work.sourceStart = offset(work, source.get(specs.get(0)));
            work.sourceEnd = offset(work, source.get(specs.get(1)));
            work.destinationStart = offset(work, destination.get(specs.get(0)));
            work.destinationEnd = offset(work, end);
        }
    }

    private static long offset(TruncationWork work, Map<TopicPartition, TruncationReads.Read<Long>> reads) {
        return offset(work, reads.get(work.tp));
    }

    private static long offset(TruncationWork work, TruncationReads.Read<Long> read) {
        if (read.failed()) {
            work.fail(read.failure());
            return -1;
        }
        return read.value();
    }

    /**
     * The checks of the partitions whose offsets are in, on one pair of clients. Both clusters' views are asked for at
     * once, when the offsets are in.
     */
    private void decide(Map<TopicPartition, TruncationWork> works, WireClient source, WireClient destination)
            throws Exception {
        Set<String> topics = new TreeSet<>();
        open(works).forEach(w -> topics.add(w.tp.topic()));
        TruncationReads.AskedView askedSource = TruncationReads.askView(sourceAdmin, topics);
        TruncationReads.AskedView askedDestination = TruncationReads.askView(destinationAdmin, topics);
        Map<String, Exception> failedTopics = new HashMap<>();
        ClusterView sourceView = TruncationReads.view(askedSource, timeoutMs, failedTopics);
        if (expectedSourceClusterId != null && !expectedSourceClusterId.equals(sourceView.clusterId())) {
            IllegalStateException wrong = new IllegalStateException("the source answers with cluster id "
                    + sourceView.clusterId() + ", not " + expectedSourceClusterId);
            open(works).forEach(w -> w.fail(wrong));
            return;
        }
        ClusterView destinationView = TruncationReads.view(askedDestination, timeoutMs, failedTopics);
        open(works).stream()
                .filter(w -> failedTopics.containsKey(w.tp.topic()))
                .forEach(w -> w.fail(failedTopics.get(w.tp.topic())));
        // the first step of each, from its offsets: decided, or a batch to read
        Map<TopicPartition, Long> sourceFirst = new LinkedHashMap<>();
        Map<TopicPartition, Long> destinationLast = new LinkedHashMap<>();
        List<TruncationWork> empty = new ArrayList<>();
        for (TruncationWork w : open(works)) {
            try {
                if (w.destinationEnd == w.destinationStart) {
                    if (w.destinationEnd > w.sourceStart) {
                        w.outcome = new Diverged("the destination is empty but its log starts at " + w.destinationEnd
                                + ", after the source log start " + w.sourceStart + "; it cannot be filled backwards");
                    } else if (w.destinationEnd == w.sourceStart) {
                        // nothing to fill: the step is complete at once
                        w.note(Step.LOG_START_ALIGNMENT, true, 0);
                        w.outcome = new Ready(w.destinationEnd, -1, w.sourceEnd);
                    } else {
                        empty.add(w);
                        if (w.sourceStart < w.sourceEnd) {
                            sourceFirst.put(w.tp, w.sourceStart);
                        }
                    }
                } else if (w.destinationEnd > w.sourceEnd) {
                    w.outcome = new Diverged("destination log end " + w.destinationEnd
                            + " is beyond the source high watermark " + w.sourceEnd
                            + tail(
                                    divergence(
                                            w.tp,
                                            Math.max(w.sourceStart, w.destinationStart),
                                            w.sourceEnd,
                                            source,
                                            sourceView,
                                            destination,
                                            destinationView,
                                            w::searched),
                                    w.destinationEnd));
                } else if (w.destinationEnd < w.sourceStart) {
                    w.outcome = new Diverged("source deleted offsets [" + w.destinationEnd + ", " + w.sourceStart
                            + ") before they were mirrored");
                } else {
                    destinationLast.put(w.tp, w.destinationEnd - 1);
                }
            } catch (Exception e) {
                w.fail(e);
            }
        }
        read(works, source, sourceView, sourceFirst);
        read(works, destination, destinationView, destinationLast);
        alignment.align(empty, destination, destinationView);
        // a non-empty destination: its last batch against the source's at the same offsets
        Map<TopicPartition, Long> sourceSame = new LinkedHashMap<>();
        for (TopicPartition tp : destinationLast.keySet()) {
            TruncationWork w = works.get(tp);
            if (!w.open()) {
                continue;
            }
            if (w.batch.isEmpty() || w.batch.get().lastOffset() != w.destinationEnd - 1) {
                w.outcome = new Diverged("cannot read the destination's last batch before offset " + w.destinationEnd);
            } else {
                sourceSame.put(tp, w.batch.get().baseOffset());
            }
        }
        Map<TopicPartition, TruncationReads.Read<Optional<SourceBatch>>> same =
                TruncationReads.batchesAt(source, sourceView, sourceSame);
        for (TopicPartition tp : sourceSame.keySet()) {
            TruncationWork w = works.get(tp);
            if (same.get(tp).failed()) {
                w.fail(same.get(tp).failure());
                continue;
            }
            try {
                w.outcome = compared(
                        w, w.batch.get(), same.get(tp).value(), source, sourceView, destination, destinationView);
            } catch (Exception e) {
                w.fail(e);
            }
        }
    }

    /** The batches at the given offsets, one Fetch per leader, into each partition's work (or its failure). */
    private static void read(
            Map<TopicPartition, TruncationWork> works,
            WireClient client,
            ClusterView view,
            Map<TopicPartition, Long> offsets) {
        TruncationReads.batchesAt(client, view, offsets).forEach((tp, read) -> {
            TruncationWork w = works.get(tp);
            if (read.failed()) {
                w.fail(read.failure());
            } else {
                w.batch = read.value();
            }
        });
    }

    /** The outcome for a destination whose last batch is {@code last}, given the source's batch at its offsets. */
    private Outcome compared(
            TruncationWork w,
            SourceBatch last,
            Optional<SourceBatch> same,
            WireClient source,
            ClusterView sourceView,
            WireClient destination,
            ClusterView destinationView)
            throws IOException {
        if (same.isEmpty() || !BatchAgreement.agrees(last, same.get())) {
            return new Diverged("destination batch [" + last.baseOffset() + ".." + last.lastOffset()
                    + "] differs from the source at the same offsets"
                    + tail(
                            divergence(
                                    w.tp,
                                    Math.max(w.sourceStart, w.destinationStart),
                                    w.destinationEnd,
                                    source,
                                    sourceView,
                                    destination,
                                    destinationView,
                                    w::searched),
                            w.destinationEnd));
        }
        w.note(Step.DIVERGENCE_CHECK, true, -1);
        // the epoch of the source batch that ends where the destination does; unknown when the source's cleaner
        // removed it
        int epoch = same.get().baseOffset() == last.baseOffset() ? same.get().partitionLeaderEpoch() : -1;
        return new Ready(w.destinationEnd, epoch, w.sourceEnd);
    }

    /** The destination's records the source does not have: offsets [from, to). */
    public record DivergentRange(long from, long to) {
        public long records() {
            return to - from;
        }
    }

    /**
     * Where each destination partition stops being a copy of the source: its records from the first offset where the two
     * logs differ to its end. A partition that is a prefix of the source (or holds only offsets the source has deleted,
     * which cannot be compared) is left out. One offset look-up per cluster and one pair of clients for all of them.
     * Blocking.
     */
    public Map<MirrorPartition, DivergentRange> divergentRanges(String mirror, Collection<MirrorPartition> partitions)
            throws Exception {
        Map<MirrorPartition, DivergentRange> ranges = new TreeMap<>();
        if (partitions.isEmpty()) {
            return ranges;
        }
        List<TopicPartition> tps = partitions.stream()
                .map(p -> new TopicPartition(p.topic(), p.partition()))
                .toList();
        Map<TopicPartition, Long> sourceStarts = offsets(sourceOffsets, tps, OffsetSpec.earliest());
        Map<TopicPartition, Long> sourceEnds = offsets(sourceOffsets, tps, OffsetSpec.latest());
        Map<TopicPartition, Long> destinationStarts = offsets(destinationOffsets, tps, OffsetSpec.earliest());
        Map<TopicPartition, Long> destinationEnds = offsets(destinationOffsets, tps, OffsetSpec.latest());
        Set<String> topics = new TreeSet<>();
        tps.forEach(tp -> topics.add(tp.topic()));
        Clients clients = checkOut(mirror);
        try {
            WireClient source = clients.source();
            WireClient destination = clients.destination();
            ClusterView sourceView = view(sourceAdmin, source, topics);
            ClusterView destinationView = view(destinationAdmin, destination, topics);
            for (TopicPartition tp : tps) {
                long sourceStart = sourceStarts.get(tp);
                long destinationStart = destinationStarts.get(tp);
                long destinationEnd = destinationEnds.get(tp);
                if (destinationEnd == destinationStart || destinationEnd <= sourceStart) {
                    continue;
                }
                long from = divergence(
                        tp,
                        Math.max(sourceStart, destinationStart),
                        Math.min(sourceEnds.get(tp), destinationEnd),
                        source,
                        sourceView,
                        destination,
                        destinationView,
                        (done, total) -> {});
                if (from < destinationEnd) {
                    ranges.put(
                            new MirrorPartition(tp.topic(), tp.partition()), new DivergentRange(from, destinationEnd));
                }
            }
        } finally {
            checkIn(clients);
        }
        return ranges;
    }

    /** Runs a read of the source on one of this mirror's pooled source clients ({@link SourceTimestamps}). */
    <T> T withSourceClient(String mirror, TruncationReads.SourceRead<T> read) throws Exception {
        Clients clients = checkOut(mirror);
        try {
            return read.apply(clients.source());
        } finally {
            checkIn(clients);
        }
    }

    /** How far a divergence search is: {@code done} of the searched range's {@code total} offsets settled. */
    @FunctionalInterface
    private interface Settled {
        void of(long done, long total);
    }

    /**
     * The first offset in [from, to] where the destination's batch is not the source's, by binary search over batches:
     * before the point of divergence the logs hold the same batches, from it on they do not; {@code to} when they agree
     * throughout. {@code settled} hears how far the search is before each step.
     */
    private static long divergence(
            TopicPartition tp,
            long from,
            long to,
            WireClient source,
            ClusterView sourceView,
            WireClient destination,
            ClusterView destinationView,
            Settled settled)
            throws IOException {
        long lo = from;
        long hi = to;
        while (lo < hi) {
            settled.of((lo - from) + (to - hi), to - from);
            long mid = lo + (hi - lo) / 2;
            Optional<SourceBatch> ours = RawFetch.batchAt(destination, destinationView, tp, mid);
            if (ours.isEmpty()) {
                hi = mid;
                continue;
            }
            Optional<SourceBatch> theirs =
                    RawFetch.batchAt(source, sourceView, tp, ours.get().baseOffset());
            if (theirs.isPresent() && BatchAgreement.agrees(ours.get(), theirs.get())) {
                lo = ours.get().lastOffset() + 1;
            } else {
                hi = Math.max(lo, Math.min(mid, ours.get().baseOffset()));
            }
        }
        return Math.min(lo, to);
    }

    private static String tail(long divergence, long destinationEnd) {
        return ": the destination holds " + (destinationEnd - divergence) + " record offset(s) [" + divergence + ", "
                + destinationEnd + ") that the source does not have";
    }

    /**
     * A pair of clients for one truncation: an idle one (its connections still open) or a new one, so that a mirror's
     * truncations make as many network clients as run at once (its workers), not one pair each.
     */
    private synchronized Clients checkOut(String mirror) {
        if (closed) {
            throw new IllegalStateException("the mirror's runtime is closed");
        }
        Clients clients = idle.poll();
        return clients != null
                ? clients
                : new Clients(
                        sourceClients.apply("cluster-mirror-" + mirror + "-truncation-src"),
                        destinationClients.apply("cluster-mirror-" + mirror + "-truncation-dst"));
    }

    private synchronized void checkIn(Clients clients) {
        if (closed) {
            close(clients);
        } else {
            idle.push(clients);
        }
    }

    private static void close(Clients clients) {
        clients.source().close();
        clients.destination().close();
    }

    /** Closes the idle clients, and those in use once they are given back. */
    public synchronized void close() {
        closed = true;
        idle.forEach(LogTruncation::close);
        idle.clear();
    }

    private ClusterView view(Admin admin, WireClient client, Set<String> topics) throws Exception {
        return ClusterView.load(admin, topics, timeoutMs);
    }

    /**
     * EPOCH_FENCING's check: the source leader said the epoch last fetched ends at {@code epochEndOffset} on its
     * side. A destination ending beyond that holds records the source lost, whatever they look like (a marker of the
     * same kind at the same offset in the new history proves nothing); else the usual prefix check decides.
     */
    @Override
    public Outcome afterEpochFencing(
            String mirror, MirrorPartition partition, long epochEndOffset, Consumer<TruncationProgress> progress)
            throws Exception {
        return alone(mirror, new Check(partition, epochEndOffset, progress));
    }

    /** Every partition's offset, or the first failure (all or nothing: a divergent range needs all four ends). */
    private static Map<TopicPartition, Long> offsets(OffsetLookup lookup, List<TopicPartition> tps, OffsetSpec spec)
            throws Exception {
        Map<TopicPartition, Long> offsets = new HashMap<>();
        lookup.await(tps, spec, IsolationLevel.READ_UNCOMMITTED)
                .orThrow()
                .found()
                .forEach((tp, info) -> offsets.put(tp, info.offset()));
        return offsets;
    }
}
