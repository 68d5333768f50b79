package io.clustermirror.sync;

import io.clustermirror.config.MirrorServiceConfig;
import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.Mirror;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.Scheduler;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.jboss.logging.Logger;

/**
 * The KIP's MirrorMetadataManager, as a scheduler: every {@code mirror.metadata.refresh.interval.ms}, one
 * {@link SyncCycle} per mirror whose previous cycle has finished (a mirror's cycle never overlaps itself, and a failing
 * cycle never stops the schedule; one that does not finish within {@code mirror.metadata.sync.timeout.ms} is cancelled
 * and reported, so that the next may run). Each cycle's steps (cluster id, topics, configs, group offsets, ACLs) are Admin calls
 * composed as a Mutiny pipeline; its outcome is kept as the mirror's {@link SyncReport} for describe.
 */
@ApplicationScoped
public class MirrorMetadataManager {

    private static final Logger LOGGER = Logger.getLogger(MirrorMetadataManager.class);

    private final SyncHost host;
    private final MirrorMetrics metrics;
    private final Scheduler scheduler;
    private final Duration interval;
    private final Duration deadline;
    private final SyncCycle cycle;
    private final Map<String, AtomicBoolean> running = new ConcurrentHashMap<>();
    private final Map<String, SyncReport> reports = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> cycles = new ConcurrentHashMap<>();

    @Inject
    public MirrorMetadataManager(
            SyncHost host, MirrorServiceConfig config, MirrorMetrics metrics, Scheduler scheduler) {
        this(
                host,
                metrics,
                scheduler,
                config.state().topic().name(),
                Duration.ofMillis(config.metadata().refresh().intervalMs()),
                Duration.ofMillis(config.metadata().sync().timeoutMs()));
    }

    /** @param deadline how long one cycle may take before it is cancelled and reported as such */
    MirrorMetadataManager(
            SyncHost host,
            MirrorMetrics metrics,
            Scheduler scheduler,
            String stateTopic,
            Duration interval,
            Duration deadline) {
        this.host = host;
        this.metrics = metrics;
        this.scheduler = scheduler;
        this.interval = interval;
        this.deadline = deadline;
        this.cycle = new SyncCycle(host, stateTopic, new GroupOffsetStep(), new AclStep(metrics));
    }

    void onStart(@Observes StartupEvent event) {
        scheduler
                .newJob("mirror-metadata-refresh")
                .setInterval(interval.toString())
                .setConcurrentExecution(Scheduled.ConcurrentExecution.SKIP)
                .setTask(execution -> tick())
                .schedule();
    }

    /** The last cycle's outcome for a mirror, or null before the first. */
    public SyncReport status(String mirror) {
        return reports.get(mirror);
    }

    /** Starts a cycle for every mirror whose previous cycle has finished. */
    void tick() {
        if (!host.isActive()) {
            return;
        }
        Set<String> names = new HashSet<>();
        for (Mirror mirror : host.list()) {
            names.add(mirror.name());
            AtomicBoolean busy = running.computeIfAbsent(mirror.name(), n -> new AtomicBoolean());
            if (busy.compareAndSet(false, true)) {
                long started = System.nanoTime();
                CycleLog log = new CycleLog(mirror.name(), metrics, reports.get(mirror.name()));
                cycle.run(mirror, log)
                        .ifNoItem()
                        .after(deadline)
                        .recoverWithItem(() -> timedOut(mirror.name(), log))
                        .subscribe()
                        .with(
                                done -> {
                                    try {
                                        finish(mirror.name(), log, Duration.ofNanos(System.nanoTime() - started));
                                    } finally {
                                        busy.set(false);
                                    }
                                },
                                failure -> {
                                    busy.set(false);
                                    LOGGER.errorf(
                                            failure,
                                            "Mirror %s: metadata sync cycle failed unexpectedly",
                                            mirror.name());
                                });
            }
        }
        running.keySet().retainAll(names);
        reports.keySet().retainAll(names);
        cycles.keySet().retainAll(names);
    }

    /**
     * The cycle did not finish in time (an Admin call that never answers, a task dropped by a closed runtime): its
     * subscription is cancelled, so none of its later steps runs, and the cycle ends with the reason as its error. A
     * call already sent finishes (or times out) on its own; the next cycle may start beside it.
     */
    private Void timedOut(String name, CycleLog log) {
        String reason = "metadata sync cycle did not finish within " + deadline.toMillis()
                + " ms: cancelled; the next cycle starts afresh";
        log.note(reason);
        metrics.flowDeadlineExceeded("sync", name);
        LOGGER.warnf("Mirror %s: %s", name, reason);
        return null;
    }

    private void finish(String name, CycleLog log, Duration took) {
        long count = cycles.computeIfAbsent(name, n -> new AtomicLong()).incrementAndGet();
        SyncReport report = log.report(Instant.now(), took, count);
        reports.put(name, report);
        metrics.syncCycle(name, took);
        LOGGER.debugf(
                "Mirror %s: metadata sync cycle %d in %d ms, %d error(s), %d group(s) skipped",
                name,
                count,
                took.toMillis(),
                report.errors().size(),
                report.groupsSkippedActive().size());
    }
}
