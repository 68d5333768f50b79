package io.clustermirror.metrics;

import io.clustermirror.config.MirrorServiceConfig;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.RegexList;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.Scheduler;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;

/** Every meter of the service, declared once. Tags are bounded: no partition-level tags except on lag. */
@ApplicationScoped
public class MirrorMetrics {

    public static final String MIRRORS = "cluster.mirror.mirrors";
    public static final String STATE_WRITES = "cluster.mirror.state.writes";
    public static final String API_ERRORS = "cluster.mirror.api.errors";

    private final MeterRegistry registry;
    private final Counter stateWritesOk;
    private final Counter stateWritesFailed;
    private final Map<FetcherKey, FetcherMeters> fetcherMeters = new ConcurrentHashMap<>();
    private final Map<String, DataPlaneMeters> dataPlaneMeters = new ConcurrentHashMap<>();
    private final Map<String, MirrorGaugeSources> gaugeSources = new ConcurrentHashMap<>();
    private final MultiGauge partitionLag;
    private final MultiGauge partitionRpo;
    /** The verified-offset gauges' values, by mirror, topic and partition. */
    private final Map<List<String>, AtomicLong> verifiedOffsets = new ConcurrentHashMap<>();

    public MirrorMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.stateWritesOk = Counter.builder(STATE_WRITES)
                .description("Writes to __mirror_state")
                .tag("result", "ok")
                .register(registry);
        this.stateWritesFailed = Counter.builder(STATE_WRITES)
                .description("Writes to __mirror_state")
                .tag("result", "failed")
                .register(registry);
        this.partitionLag = MultiGauge.builder("cluster.mirror.partition.lag")
                .description(
                        "Lag of each partition in a data plane, in records (source high watermark minus destination end)")
                .register(registry);
        this.partitionRpo = MultiGauge.builder("cluster.mirror.partition.rpo")
                .baseUnit("seconds")
                .description(
                        "Recovery point of each partition that is not STOPPED: the age of the oldest source record "
                                + "not on the destination yet (0 when caught up, also while idle), or its upper bound while the "
                                + "source cannot be read; absent while unknown")
                .register(registry);
        FunctionCounter.builder("cluster.mirror.pattern.compilations", this, ignored -> RegexList.compilations())
                .description(
                        "Pattern lists (include/exclude regexes, ACL rules) compiled; unchanged lists are served compiled")
                .register(registry);
    }

    public void registerMirrorCount(Supplier<Number> count) {
        Gauge.builder(MIRRORS, count)
                .description("Cluster mirrors this instance coordinates")
                .register(registry);
    }

    /**
     * The instance's replication budget: {@code cluster_mirror_replication_throttled_rate} (bytes per second,
     * 9223372036854775807 when unlimited, as Kafka shows an unthrottled rate) and
     * {@code cluster_mirror_replication_throttle_time_seconds_total}, the time Fetches waited for the budget. Micrometer
     * holds {@code throttle} weakly: its owner keeps it.
     */
    public <T> void registerReplicationThrottle(
            T throttle, ToDoubleFunction<T> rate, ToDoubleFunction<T> throttleTimeSeconds) {
        Gauge.builder("cluster.mirror.replication.throttled.rate", throttle, rate)
                .description("mirror.replication.throttled.rate in force: bytes per second fetched by all mirrors of "
                        + "this instance together (9223372036854775807: unlimited)")
                .register(registry);
        FunctionCounter.builder("cluster.mirror.replication.throttle.time", throttle, throttleTimeSeconds)
                .baseUnit("seconds")
                .description("Time Fetches to the sources waited for the replication budget (overlapping waits once)")
                .register(registry);
    }

    public void stateWrite(boolean ok) {
        (ok ? stateWritesOk : stateWritesFailed).increment();
    }

    /**
     * What the gauges of one mirror read: partitions per KIP state, the largest lag of its mirroring partitions
     * (records), each partition's lag, the destination transactions it holds open and the age of the oldest (a
     * hanging source transaction shows there), and its fetcher lanes whose data-plane shard died or was stuck and has not
     * been replaced (the KIP's DeadThreadCount, per mirror). Replaced whenever the mirror's data plane is rebuilt; the gauges stay.
     */
    public record MirrorGaugeSources(
            ToLongFunction<MirrorPartitionState> partitionsIn,
            Supplier<Number> maxLag,
            Supplier<Map<MirrorPartition, Long>> partitionLags,
            Supplier<Number> openTransactions,
            Supplier<Number> oldestOpenTransactionSeconds,
            Supplier<Number> deadLanes,
            Supplier<Map<MirrorPartition, Double>> partitionRpoSeconds,
            Supplier<Number> maxRpoSeconds) {}

    /** Registers the mirror's gauges on first use; later calls point them at the new sources (a rebuilt data plane). */
    public void registerMirror(String mirror, MirrorGaugeSources sources) {
        if (gaugeSources.put(mirror, sources) != null) {
            return;
        }
        Gauge.builder(
                        "cluster.mirror.transactions.open",
                        () -> read(mirror, s -> s.openTransactions().get()))
                .description("Destination transactions held open because the source's are still open")
                .tag("mirror", mirror)
                .register(registry);
        Gauge.builder(
                        "cluster.mirror.transactions.oldest.open",
                        () -> read(mirror, s -> s.oldestOpenTransactionSeconds().get()))
                .baseUnit("seconds")
                .description("Age of the oldest destination transaction held open (0 when none)")
                .tag("mirror", mirror)
                .register(registry);
        for (MirrorPartitionState state : MirrorPartitionState.values()) {
            Gauge.builder(
                            "cluster.mirror.partitions",
                            () -> read(mirror, s -> s.partitionsIn().applyAsLong(state)))
                    .description("Partitions per state")
                    .tag("mirror", mirror)
                    .tag("state", state.name())
                    .register(registry);
        }
        Gauge.builder(
                        "cluster.mirror.fetcher.dead.lanes",
                        () -> read(mirror, s -> s.deadLanes().get()))
                .description("Fetcher lanes of the mirror whose data-plane shard died or was stuck and has not been "
                        + "replaced yet (the KIP's DeadThreadCount)")
                .tag("mirror", mirror)
                .register(registry);
        Gauge.builder(
                        "cluster.mirror.rpo.max",
                        () -> read(mirror, s -> s.maxRpoSeconds().get()))
                .baseUnit("seconds")
                .description("Largest recovery point of the mirror's partitions that are not STOPPED: the age of the "
                        + "oldest source record not on the destination yet (0 when caught up), or its upper bound while "
                        + "the source cannot be read")
                .tag("mirror", mirror)
                .register(registry);
        Gauge.builder(
                        "cluster.mirror.lag.max",
                        () -> read(mirror, s -> s.maxLag().get()))
                .description("Largest lag of a mirroring partition, in records")
                .tag("mirror", mirror)
                .register(registry);
    }

    private Number read(String mirror, Function<MirrorGaugeSources, Number> value) {
        MirrorGaugeSources sources = gaugeSources.get(mirror);
        return sources == null ? Double.NaN : value.apply(sources);
    }

    /**
     * The KIP's per-partition lag (ConsumerLag): one row per partition in a data plane, source high watermark minus
     * destination end, in records; and each active partition's recovery point in seconds. Refreshed every few seconds
     * (rows of partitions that left are dropped).
     */
    void refreshPartitionLags() {
        partitionLag.register(rows(MirrorGaugeSources::partitionLags), true);
        partitionRpo.register(rows(MirrorGaugeSources::partitionRpoSeconds), true);
    }

    /** One row per partition of every mirror, tagged mirror, topic and partition. */
    private List<MultiGauge.Row<?>> rows(
            Function<MirrorGaugeSources, Supplier<? extends Map<MirrorPartition, ? extends Number>>> values) {
        List<MultiGauge.Row<?>> rows = new ArrayList<>();
        gaugeSources.forEach((mirror, sources) -> values.apply(sources)
                .get()
                .forEach((partition, value) -> rows.add(MultiGauge.Row.of(
                        Tags.of(
                                "mirror",
                                mirror,
                                "topic",
                                partition.topic(),
                                "partition",
                                Integer.toString(partition.partition())),
                        value))));
        return rows;
    }

    /** Schedules {@link #refreshPartitionLags()} every {@code mirror.metrics.partition-lag.refresh} (the mapping's default). */
    void schedulePartitionLags(@Observes StartupEvent event, Scheduler scheduler, MirrorServiceConfig config) {
        scheduler
                .newJob("partition-lag-gauges")
                .setInterval(config.metrics().partitionLagRefresh())
                .setConcurrentExecution(Scheduled.ConcurrentExecution.SKIP)
                .setTask(execution -> refreshPartitionLags())
                .schedule();
    }

    /** Fetch requests to the source and produce requests to the destination, and those that failed as a whole. */
    public void request(String mirror, String api, boolean failed) {
        DataPlaneMeters meters = dataPlane(mirror);
        boolean fetch = "fetch".equals(api);
        (failed
                        ? (fetch ? meters.fetchErrors() : meters.produceErrors())
                        : (fetch ? meters.fetches() : meters.produces()))
                .increment();
    }

    /** The fetcher pool's queued bytes against its budget ({@code mirror.fetcher.buffer.bytes}). */
    public void registerFetchBudget(Supplier<Number> queued, long limit) {
        Gauge.builder("cluster.mirror.fetcher.queued", queued)
                .description("Fetched bytes waiting to be appended, over every mirror")
                .baseUnit("bytes")
                .register(registry);
        Gauge.builder("cluster.mirror.fetcher.queued.budget", () -> limit)
                .description("The budget for fetched bytes waiting to be appended (mirror.fetcher.buffer.bytes)")
                .baseUnit("bytes")
                .register(registry);
    }

    /**
     * A Fetch answer of one fetcher lane (the KIP's FetcherStats, per source broker and fetcher id): the bytes it
     * carried and one request.
     */
    public void fetched(String mirror, int sourceBroker, int fetcher, long bytes) {
        FetcherMeters meters = fetcher(mirror, sourceBroker, fetcher);
        meters.bytes().increment(bytes);
        meters.requests().increment();
    }

    /**
     * A fetcher lane waited {@code millis} for the instance's replication budget ({@code
     * mirror.replication.throttled.rate}): {@code cluster_mirror_fetcher_throttle_time_seconds_total}, per lane. The
     * instance's {@code cluster_mirror_replication_throttle_time_seconds_total} counts overlapping waits once; this one
     * counts each lane's, so their sum can exceed it.
     */
    public void throttled(String mirror, int sourceBroker, int fetcher, long millis) {
        fetcher(mirror, sourceBroker, fetcher).throttleTime().increment(millis / 1000.0);
    }

    private FetcherMeters fetcher(String mirror, int sourceBroker, int fetcher) {
        return fetcherMeters.computeIfAbsent(
                new FetcherKey(mirror, sourceBroker, fetcher),
                k -> new FetcherMeters(
                        Counter.builder("cluster.mirror.fetcher.bytes")
                                .description("Record bytes fetched by a fetcher lane (FetcherStats BytesPerSec)")
                                .baseUnit("bytes")
                                .tags(fetcherTags(k))
                                .register(registry),
                        Counter.builder("cluster.mirror.fetcher.requests")
                                .description("Fetch responses of a fetcher lane (FetcherStats RequestsPerSec)")
                                .tags(fetcherTags(k))
                                .register(registry),
                        Counter.builder("cluster.mirror.fetcher.throttle.time")
                                .description("Time a fetcher lane's Fetch waited for the replication budget "
                                        + "(mirror.replication.throttled.rate)")
                                .baseUnit("seconds")
                                .tags(fetcherTags(k))
                                .register(registry)));
    }

    private record FetcherKey(String mirror, int sourceBroker, int fetcher) {}

    private record FetcherMeters(Counter bytes, Counter requests, Counter throttleTime) {}

    private static Tags fetcherTags(FetcherKey key) {
        return Tags.of(
                "mirror",
                key.mirror(),
                "source_broker",
                Integer.toString(key.sourceBroker()),
                "fetcher",
                Integer.toString(key.fetcher()));
    }

    /** The data plane's counters of one mirror, registered once: the fetch/append loop must not look meters up. */
    private record DataPlaneMeters(
            Counter records,
            Counter bytes,
            Counter fetches,
            Counter produces,
            Counter fetchErrors,
            Counter produceErrors) {}

    private DataPlaneMeters dataPlane(String mirror) {
        return dataPlaneMeters.computeIfAbsent(
                mirror,
                m -> new DataPlaneMeters(
                        Counter.builder("cluster.mirror.records")
                                .description("Records mirrored")
                                .tag("mirror", m)
                                .register(registry),
                        Counter.builder("cluster.mirror.bytes")
                                .description("Log bytes mirrored")
                                .baseUnit("bytes")
                                .tag("mirror", m)
                                .register(registry),
                        requestCounter("cluster.mirror.requests", m, "fetch"),
                        requestCounter("cluster.mirror.requests", m, "produce"),
                        requestCounter("cluster.mirror.request.errors", m, "fetch"),
                        requestCounter("cluster.mirror.request.errors", m, "produce")));
    }

    private Counter requestCounter(String name, String mirror, String api) {
        return Counter.builder(name)
                .description("Data-plane requests by API")
                .tag("mirror", mirror)
                .tag("api", api)
                .register(registry);
    }

    /** Drops every meter of a deleted mirror. */
    public void removeMirror(String mirror) {
        dataPlaneMeters.remove(mirror);
        fetcherMeters.keySet().removeIf(key -> key.mirror().equals(mirror));
        gaugeSources.remove(mirror);
        verifiedOffsets.keySet().removeIf(key -> key.get(0).equals(mirror));
        registry.getMeters().stream()
                .filter(m -> mirror.equals(m.getId().getTag("mirror")))
                .toList()
                .forEach(registry::remove);
    }

    public void mirrorHalted(String mirror) {
        Counter.builder("cluster.mirror.halts")
                .description("Mirrors halted because the source cluster id changed")
                .tag("mirror", mirror)
                .register(registry)
                .increment();
    }

    /** A metadata-sync error of one kind (the KIP's MetadataRefreshError, TopicConfigMetadataSyncError, ConsumerGroupOffsetSyncError, ...). */
    public void syncError(String mirror, String kind) {
        Counter.builder("cluster.mirror.sync.errors")
                .description("Metadata sync errors by kind")
                .tag("mirror", mirror)
                .tag("kind", kind)
                .register(registry)
                .increment();
    }

    /** An attempt to lift a promote's write fence on the source failed (it is retried until it succeeds). */
    public void fenceLiftFailed(String mirror) {
        Counter.builder("cluster.mirror.promotion.fence.lift.errors")
                .description("Failed attempts to lift a promote's write fence on a source topic (each is retried)")
                .tag("mirror", mirror)
                .register(registry)
                .increment();
    }

    /** Group offsets not synced because the group has active members on the destination. */
    public void groupSkippedActive(String mirror) {
        Counter.builder("cluster.mirror.groups.skipped.active")
                .description("Group offset syncs skipped: group active on the destination")
                .tag("mirror", mirror)
                .register(registry)
                .increment();
    }

    public void syncCycle(String mirror, Duration duration) {
        Timer.builder("cluster.mirror.sync.cycle")
                .description("Metadata sync cycle duration")
                .tag("mirror", mirror)
                .register(registry)
                .record(duration);
    }

    /**
     * A data-plane loop of the mirror died or was stuck ({@code loop}: fetcher or appender), the KIP's DeadThreadCount:
     * {@code cluster_mirror_dead_loops_total}.
     */
    public void deadLoop(String mirror, String loop) {
        Counter.builder("cluster.mirror.dead.loops")
                .description(
                        "Data-plane loops that died or were stuck (their partitions failed; a new data plane is built)")
                .tag("mirror", mirror)
                .tag("loop", loop)
                .register(registry)
                .increment();
    }

    /** A long-lived Kafka client whose network thread had died was replaced: {@code cluster_mirror_client_replacements_total}. */
    public void clientReplaced(String client) {
        Counter.builder("cluster.mirror.client.replacements")
                .description("Long-lived Kafka clients replaced because their network thread had died")
                .tag("client", client)
                .register(registry)
                .increment();
    }

    /**
     * An asynchronous flow of a mirror ({@code sync}, {@code start}, {@code stop}, {@code promote}) did not finish within
     * its deadline: it was cancelled (or is tried again) and the reason is shown in describe or in the answer.
     */
    public void flowDeadlineExceeded(String flow, String mirror) {
        Counter.builder("cluster.mirror.flow.deadline.exceeded")
                .description("Flows (sync cycle, start, stop, promote) that did not finish within their deadline")
                .tag("flow", flow)
                .tag("mirror", mirror)
                .register(registry)
                .increment();
    }

    public void partitionFailed(String mirror) {
        Counter.builder("cluster.mirror.partition.failures")
                .description("Partitions moved to FAILED")
                .tag("mirror", mirror)
                .register(registry)
                .increment();
    }

    /** A source leader answered that its log no longer holds what was fetched (EPOCH_FENCING entered). */
    public void epochFenced(String mirror) {
        Counter.builder("cluster.mirror.partition.epoch.fencings")
                .description("Partitions moved to EPOCH_FENCING: the source lost "
                        + "fetched records (unclean leader election)")
                .tag("mirror", mirror)
                .register(registry)
                .increment();
    }

    /** Records only the destination held, preserved before a diverged topic was recreated (failback). */
    public void divergedRecords(String mirror, long records) {
        Counter.builder("cluster.mirror.diverged.records")
                .description(
                        "Records only the destination held, preserved into __diverged.<topic> before recreating it")
                .tag("mirror", mirror)
                .register(registry)
                .increment(records);
    }

    /** A promote of topics ended: {@code promoted}, or {@code rolled_back} (timeout, refusal or failure before the stop). */
    public void promote(String mirror, String outcome) {
        Counter.builder("cluster.mirror.promotes")
                .description("Promotes (planned switchovers) by outcome")
                .tag("mirror", mirror)
                .tag("outcome", outcome)
                .register(registry)
                .increment();
    }

    /** Records and log bytes appended to the destination by a mirror's data plane (per batch: the counters are cached). */
    public void mirrored(String mirror, int records, int bytes) {
        DataPlaneMeters meters = dataPlane(mirror);
        meters.records().increment(records);
        meters.bytes().increment(bytes);
    }

    /**
     * A consistency verification ended, by verdict (IDENTICAL, DIFFERENT) or FAILED:
     * {@code cluster_mirror_verifications_total}.
     */
    public void verification(String mirror, String verdict) {
        Counter.builder("cluster.mirror.verifications")
                .description("Consistency verifications ended, by verdict (IDENTICAL, DIFFERENT) or FAILED")
                .tag("mirror", mirror)
                .tag("verdict", verdict)
                .register(registry)
                .increment();
    }

    /** A verification found a partition different: {@code cluster_mirror_verification_differences_total}. */
    public void verificationDifference(String mirror) {
        Counter.builder("cluster.mirror.verification.differences")
                .description("Partitions a consistency verification found different from the source")
                .tag("mirror", mirror)
                .register(registry)
                .increment();
    }

    /**
     * How far a verification confirmed the partition identical (exclusive):
     * {@code cluster_mirror_partition_verified_offset}.
     */
    public void verifiedOffset(String mirror, MirrorPartition partition, long offset) {
        verifiedOffsets
                .computeIfAbsent(List.of(mirror, partition.topic(), Integer.toString(partition.partition())), key -> {
                    AtomicLong value = new AtomicLong();
                    Gauge.builder("cluster.mirror.partition.verified.offset", value, AtomicLong::get)
                            .description("Offset up to which a consistency verification last found the partition "
                                    + "identical on both clusters")
                            .tag("mirror", mirror)
                            .tag("topic", partition.topic())
                            .tag("partition", Integer.toString(partition.partition()))
                            .register(registry);
                    return value;
                })
                .set(offset);
    }

    /** Requests refused, by KIP error name (a bounded set). */
    public void apiError(MirrorError error) {
        Counter.builder(API_ERRORS)
                .description("Requests refused, by KIP error name")
                .tag("errorCode", error.name())
                .register(registry)
                .increment();
    }

    /** A request forwarded to the instance that owns its mirror. */
    public void forwarded() {
        Counter.builder("cluster.mirror.requests.forwarded")
                .description("Requests forwarded to the instance that owns their mirror")
                .register(registry)
                .increment();
    }

    /**
     * State partitions that changed hands on this instance: taken over (fenced, replayed, mirrors started) or given up
     * (mirrors stopped), and how long that took: the handover time a rebalance costs.
     */
    public void statePartitionsMoved(String direction, int partitions, long durationMs) {
        Counter.builder("cluster.mirror.state.group.rebalances")
                .description("Rebalances of the state group that moved partitions to or from this instance")
                .tag("direction", direction)
                .register(registry)
                .increment();
        Timer.builder("cluster.mirror.state.group.handover")
                .description("Time to take over (fence, replay, start) or give up (stop) state partitions")
                .tag("direction", direction)
                .register(registry)
                .record(Duration.ofMillis(durationMs));
        Counter.builder("cluster.mirror.state.group.partitions.moved")
                .description("State partitions taken over or given up by this instance")
                .tag("direction", direction)
                .register(registry)
                .increment(partitions);
    }

    /**
     * {@code cluster_mirror_coordinator_queued_tasks{when}}: tasks waiting for the coordinator's one thread, those due
     * now ({@code when="due"}: it stays near 0; one that keeps growing means every state change of the instance waits)
     * and those scheduled for later ({@code when="later"}: back-off retries, one per FAILED partition).
     */
    public void registerCoordinatorQueue(Function<Boolean, Number> queued) {
        for (boolean due : new boolean[] {true, false}) {
            Gauge.builder("cluster.mirror.coordinator.queued.tasks", () -> queued.apply(due))
                    .description("Tasks waiting for the coordinator thread (every state change of the instance goes "
                            + "through it): due now, or scheduled for later (back-off retries)")
                    .tag("when", due ? "due" : "later")
                    .register(registry);
        }
    }

    /**
     * {@code cluster_mirror_state_group_lease_valid}: 1 while this instance's append lease holds, 0 while it does not
     * (its data planes append nothing: it was paused, or its commits to the state group are refused or unanswered).
     */
    public void registerAppendLease(Supplier<Number> valid) {
        Gauge.builder("cluster.mirror.state.group.lease.valid", valid)
                .description(
                        "1 while this instance's append lease holds, 0 while it appends nothing (its commits to the"
                                + " state group are not accepted)")
                .register(registry);
    }

    /**
     * The instance's append lease lapsed and was renewed later: for that while its data planes sent nothing (a pause
     * of the process, or the group coordinator out of reach).
     */
    public void appendLeaseLapsed() {
        Counter.builder("cluster.mirror.state.group.lease.lapses")
                .description("Times this instance's append lease lapsed before it was renewed (nothing was appended"
                        + " meanwhile)")
                .register(registry)
                .increment();
    }
}
