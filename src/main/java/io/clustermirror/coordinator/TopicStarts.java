package io.clustermirror.coordinator;

import com.google.re2j.Pattern;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorConfigRules;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionStatus;
import io.clustermirror.mirror.RegexList;
import io.clustermirror.mirror.StartPlan;
import io.clustermirror.mirror.TopicNames;
import io.clustermirror.mirror.TopicSelection;
import io.clustermirror.topics.DestinationTopics;
import io.clustermirror.topics.ForeignStateTopics;
import io.clustermirror.topics.TopicPreparation;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * StartMirrorTopics: the selection is checked (patterns bounded and compiled, the mirror's lists with the new ones
 * valid), planned ({@link StartPlan}), each candidate is reserved (overlapping starts of a topic have one winner), the
 * destination topics of the reserved ones are prepared together on the mirror's workers (in batches, {@link
 * DestinationTopics#prepareAll}), then the new patterns and the partitions' LOG_TRUNCATION are persisted on the
 * coordinator thread, and LOG_TRUNCATION starts.
 */
final class TopicStarts {

    private static final Logger LOGGER = Logger.getLogger(TopicStarts.class);

    /** What a start needs from the coordinator. */
    interface Host {
        /** The mirror, or UNKNOWN_CLUSTER_MIRROR (COORDINATOR_NOT_AVAILABLE while the state is not loaded). */
        Mirror require(String name);

        <T> Uni<T> onCoordinator(Supplier<T> action);

        /** The mirror's runtime once built, off the coordinator thread (asked on it). */
        Uni<MirrorRuntime> runtime(String name);

        Map<String, Map<MirrorPartition, PartitionStatus>> allPartitions();

        /**
         * Every mirror's partitions, also of the mirrors other instances run, as the state holds them committed now:
         * empty while this instance runs every mirror ({@link #allPartitions} is all). Blocking (a read of the state
         * partitions this instance does not hold).
         */
        Optional<Map<String, Map<MirrorPartition, PartitionStatus>>> everyMirrorsPartitions();

        /** Persists the mirror (its patterns grew), then makes it the state (coordinator thread). */
        void persistMirror(Mirror updated);

        void persistPartitions(String mirror, Map<MirrorPartition, PartitionStatus> changed);

        /** Starts LOG_TRUNCATION of a partition just persisted in that state. */
        void truncate(String mirror, MirrorPartition partition);

        /** Topics started again: a promote's fence on their source is lifted (switch back). */
        void restarted(String mirror, Set<String> topics);
    }

    private final Host host;
    private final MirrorConfigRules rules;
    private final String stateTopic;
    private final ForeignStateTopics stateTopics;
    private final Clock clock = Clock.systemUTC();
    /** Topics a start is preparing right now (any mirror): a second start of one of them is refused, not run twice. */
    private final Set<String> starting = ConcurrentHashMap.newKeySet();

    private final FlowDeadlines flows;

    TopicStarts(
            Host host,
            MirrorConfigRules rules,
            String stateTopic,
            ForeignStateTopics stateTopics,
            FlowDeadlines flows) {
        this.host = host;
        this.rules = rules;
        this.stateTopic = stateTopic;
        this.stateTopics = stateTopics;
        this.flows = flows;
    }

    /** One outcome per topic; patterns are compiled and checked on a worker thread, never on the caller's (an HTTP event loop). */
    Uni<List<TopicOutcome>> start(String name, TopicSelection selection) {
        return start(name, selection, true);
    }

    /**
     * @param awaitServed whether the start answers only once the destination serves the topics it created (a REST
     *     start), or once they are created (a sync cycle's start of new topics: {@link DestinationTopics#prepareAll})
     */
    Uni<List<TopicOutcome>> start(String name, TopicSelection selection, boolean awaitServed) {
        Uni<List<TopicOutcome>> start = Uni.createFrom()
                .deferred(() -> {
                    Mirror mirror = host.require(name);
                    List<Pattern> includes = patterns(selection.include(), "include");
                    List<Pattern> excludes = patterns(selection.exclude(), "exclude");
                    if (selection.topics().isEmpty() && includes.isEmpty()) {
                        throw new MirrorException(
                                MirrorError.INVALID_REQUEST, "Name topics and/or give include patterns", "topics");
                    }
                    withPatterns(mirror, selection); // the mirror's lists with these patterns added must be valid too
                    long started = System.nanoTime();
                    Reservations reserved = new Reservations();
                    return host.onCoordinator(() -> host.runtime(name))
                            .chain(built -> built)
                            .chain(runtime -> Uni.createFrom()
                                    .item(() -> {
                                        // its lanes free when the partitions come, after preparation and LOG_TRUNCATION
                                        runtime.dataPlane().joining();
                                        return prepareTopics(
                                                mirror, runtime, selection, includes, excludes, reserved, awaitServed);
                                    })
                                    .runSubscriptionOn(runtime.workers)
                                    .invoke(prepared -> LOGGER.infof(
                                            "Mirror %s: prepared %d destination topic(s) in %d ms",
                                            name,
                                            prepared.ready().size(),
                                            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)))
                                    .chain(prepared -> host.onCoordinator(() ->
                                            startPrepared(name, prepared, selection, awaitServed ? null : runtime))))
                            .onTermination()
                            .invoke(reserved::release);
                })
                .runSubscriptionOn(Infrastructure.getDefaultWorkerPool());
        // cancelled at the deadline: the topics it reserved are released (onTermination), its worker reserves no more
        // and begins no further batch of preparations (the batch under way may leave its topics created on the
        // destination); what it persisted stays
        return flows.bound(
                start,
                "start",
                name,
                MirrorError.COORDINATOR_NOT_AVAILABLE,
                "it was cancelled: the topics it had started show in describe, start the others again");
    }

    /**
     * The topics one start has reserved in {@link #starting}. Released once, when the start ends or is cancelled at its
     * deadline; after that its worker, which cancelling does not stop, reserves no more.
     */
    private final class Reservations {
        private final Set<String> topics = new HashSet<>();
        private boolean released;

        enum Taken {
            FOR_THIS_START,
            BY_ANOTHER,
            /** This start was released (ended or cancelled): it takes no more. */
            RELEASED
        }

        synchronized Taken take(String topic) {
            if (released) {
                return Taken.RELEASED;
            }
            if (!starting.add(topic)) {
                return Taken.BY_ANOTHER;
            }
            topics.add(topic);
            return Taken.FOR_THIS_START;
        }

        synchronized boolean isReleased() {
            return released;
        }

        synchronized void release() {
            released = true;
            starting.removeAll(topics);
            topics.clear();
        }
    }

    private record PreparedTopics(Map<String, TopicPreparation.Prepared> ready, List<TopicOutcome> failed) {}

    private PreparedTopics prepareTopics(
            Mirror mirror,
            MirrorRuntime runtime,
            TopicSelection selection,
            List<Pattern> includes,
            List<Pattern> excludes,
            Reservations reserved,
            boolean awaitServed) {
        Set<String> sourceTopics;
        try {
            sourceTopics = runtime.topics.sourceTopics();
        } catch (Exception e) {
            throw new MirrorException(
                    MirrorError.SOURCE_METADATA_NOT_AVAILABLE, "Could not list the source topics: " + e);
        }
        List<Pattern> allExcludes = new ArrayList<>(excludes);
        allExcludes.addAll(RegexList.compile(
                mirror.config().list(MirrorConfig.TOPICS_EXCLUDE, MirrorConfig.DEFAULT_TOPICS_EXCLUDE)));
        StartPlan plan = StartPlan.plan(
                mirror.name(), selection, includes, allExcludes, sourceTopics, stateTopic, host.allPartitions());
        Set<String> othersUnread = Set.of();
        if (!plan.candidates().isEmpty()) {
            // a destination topic has one writer, whichever instance runs the mirror that writes it
            try {
                Optional<Map<String, Map<MirrorPartition, PartitionStatus>>> every = host.everyMirrorsPartitions();
                if (every.isPresent()) {
                    plan = StartPlan.plan(
                            mirror.name(), selection, includes, allExcludes, sourceTopics, stateTopic, every.get());
                }
            } catch (RuntimeException e) {
                LOGGER.warnf(
                        "Mirror %s: could not read the state of the mirrors other instances run: %s", mirror.name(), e);
                othersUnread = Set.copyOf(plan.candidates().stream()
                        .filter(StartPlan.Candidate::mayAdopt)
                        .map(StartPlan.Candidate::topic)
                        .toList());
            }
        }
        List<String> excludedProps = mirror.config()
                .list(MirrorConfig.TOPIC_PROPERTIES_EXCLUDE, MirrorConfig.DEFAULT_TOPIC_PROPERTIES_EXCLUDE);
        List<TopicOutcome> failed = new ArrayList<>(plan.refusals().stream()
                .map(r -> TopicOutcome.error(r.topic(), r.error(), r.reason()))
                .toList());
        Map<String, ForeignStateTopics.Verdict> verdicts = stateTopicVerdicts(mirror.name(), plan);
        Map<String, Boolean> toPrepare = new TreeMap<>(); // topic -> may adopt an existing destination topic
        for (StartPlan.Candidate candidate : plan.candidates()) {
            String topic = candidate.topic();
            ForeignStateTopics.Verdict verdict =
                    verdicts.getOrDefault(topic, ForeignStateTopics.Verdict.NOT_STATE_TOPIC);
            if (verdict == ForeignStateTopics.Verdict.STATE_TOPIC) {
                failed.add(TopicOutcome.error(
                        topic,
                        MirrorError.INVALID_TOPIC_EXCEPTION,
                        TopicNames.stateTopicReason(topic) + " (its records are state records)"));
                continue;
            }
            if (othersUnread.contains(topic)) {
                // a topic that must not be created is safe without the read (the destination refuses to create it
                // twice); one to adopt is not
                failed.add(TopicOutcome.error(
                        topic,
                        MirrorError.REQUEST_TIMED_OUT,
                        "could not read the state of the mirrors that other instances run, to check that none of them "
                                + "mirrors this topic; nothing was changed, try again"));
                continue;
            }
            if (verdict == ForeignStateTopics.Verdict.UNREAD) {
                failed.add(TopicOutcome.error(
                        topic,
                        MirrorError.REQUEST_TIMED_OUT,
                        "could not read the first records of destination topic " + topic + " within "
                                + stateTopics.timeoutMs()
                                + " ms to check that it is not a cluster mirror state topic; nothing was changed, "
                                + "try again"));
                continue;
            }
            Reservations.Taken taken = reserved.take(topic);
            if (taken == Reservations.Taken.RELEASED) {
                break; // cancelled at its deadline: the caller was answered already
            }
            if (taken == Reservations.Taken.BY_ANOTHER) {
                failed.add(TopicOutcome.error(
                        topic,
                        MirrorError.TOPIC_ALREADY_IN_CLUSTER_MIRROR,
                        "another request is starting this topic right now"));
                continue;
            }
            toPrepare.put(topic, candidate.mayAdopt());
        }
        Map<String, TopicPreparation.Prepared> ready = new TreeMap<>();
        try {
            // a few requests per batch of topics, not five per topic; a cancelled start begins no further batch
            runtime.topics
                    .prepareAll(toPrepare, excludedProps, reserved::isReleased, awaitServed)
                    .values()
                    .forEach(outcome -> {
                        if (outcome instanceof TopicPreparation.Prepared prepared) {
                            ready.put(prepared.topic(), prepared);
                        } else {
                            failed.add(refusal(outcome));
                        }
                    });
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MirrorException(MirrorError.REQUEST_TIMED_OUT, "interrupted while preparing destination topics");
        }
        return new PreparedTopics(ready, failed);
    }

    /**
     * Waits (on the mirror's workers, off the caller's answer) until the destination serves the started partitions'
     * topics, then starts their LOG_TRUNCATION, of those still in it at the epoch they were started with. Past the wait's
     * timeout, or if it cannot run, LOG_TRUNCATION starts all the same and asks again while the partitions are not
     * served ({@code NotServedYet}).
     */
    private void truncateOnceServed(String name, MirrorRuntime runtime, Map<MirrorPartition, PartitionStatus> started) {
        Map<String, Integer> partitionsByTopic = new TreeMap<>();
        started.keySet().forEach(p -> partitionsByTopic.merge(p.topic(), p.partition() + 1, Math::max));
        Uni.createFrom()
                .item(() -> {
                    try {
                        runtime.topics.awaitServed(partitionsByTopic);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return started;
                })
                .runSubscriptionOn(runtime.workers)
                .onFailure()
                .recoverWithItem(started) // the workers are closed: the checks decide
                .chain(due -> host.onCoordinator(() -> {
                    Map<MirrorPartition, PartitionStatus> now =
                            host.allPartitions().getOrDefault(name, Map.of());
                    due.forEach((partition, status) -> {
                        PartitionStatus current = now.get(partition);
                        if (current != null
                                && current.stateEpoch() == status.stateEpoch()
                                && current.state() == MirrorPartitionState.LOG_TRUNCATION) {
                            host.truncate(name, partition);
                        }
                    });
                    return null;
                }))
                .subscribe()
                .with(
                        done -> {},
                        e -> LOGGER.errorf(
                                e,
                                "Mirror %s: could not start LOG_TRUNCATION of %d partition(s)",
                                name,
                                started.size()));
    }

    /** Why a topic whose destination topic could not be prepared is not started. */
    static TopicOutcome refusal(TopicPreparation outcome) {
        String topic = outcome.topic();
        if (outcome instanceof TopicPreparation.NotOnSource) {
            return TopicOutcome.error(
                    topic, MirrorError.UNKNOWN_TOPIC_OR_PARTITION, "topic does not exist on the source cluster");
        }
        if (outcome instanceof TopicPreparation.Conflict conflict) {
            return TopicOutcome.error(topic, MirrorError.TOPIC_ALREADY_EXISTS, conflict.reason());
        }
        String reason = outcome instanceof TopicPreparation.Mismatch mismatch
                ? mismatch.reason()
                : ((TopicPreparation.Failed) outcome).error().getMessage();
        return TopicOutcome.error(
                topic, MirrorError.INVALID_CONFIG, "could not prepare the destination topic: " + reason);
    }

    /**
     * Every candidate that may adopt an existing destination topic, checked by its records: another instance's state
     * topic may have any name (one consumer for all of them; a failed check leaves them all UNREAD).
     */
    private Map<String, ForeignStateTopics.Verdict> stateTopicVerdicts(String mirror, StartPlan plan) {
        List<String> adoptable = plan.candidates().stream()
                .filter(StartPlan.Candidate::mayAdopt)
                .map(StartPlan.Candidate::topic)
                .toList();
        try {
            return stateTopics.check(adoptable);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MirrorException(MirrorError.REQUEST_TIMED_OUT, "interrupted while checking destination topics");
        } catch (Exception e) {
            LOGGER.warnf(
                    "Mirror %s: could not read destination topics %s to check for state topics: %s",
                    mirror, adoptable, e);
            Map<String, ForeignStateTopics.Verdict> unread = new HashMap<>();
            adoptable.forEach(t -> unread.put(t, ForeignStateTopics.Verdict.UNREAD));
            return unread;
        }
    }

    /**
     * Persists the prepared topics' partitions in LOG_TRUNCATION and starts it: at once, or, with {@code notServedYet}
     * (a start that did not wait for the destination to serve the topics it created), once the destination serves them.
     */
    private List<TopicOutcome> startPrepared(
            String name, PreparedTopics prepared, TopicSelection selection, MirrorRuntime notServedYet) {
        Mirror mirror = host.require(name);
        List<TopicOutcome> outcomes = new ArrayList<>(prepared.failed());
        if (!selection.include().isEmpty() || !selection.exclude().isEmpty()) {
            Mirror updated = mirror.withConfig(withPatterns(mirror, selection), clock.instant());
            host.persistMirror(updated);
        }
        Map<MirrorPartition, PartitionStatus> changed = new TreeMap<>();
        Instant now = clock.instant();
        Map<MirrorPartition, PartitionStatus> current = host.allPartitions().getOrDefault(name, Map.of());
        for (TopicPreparation.Prepared topic : prepared.ready().values()) {
            int before = changed.size();
            for (int p = 0; p < topic.partitions(); p++) {
                MirrorPartition partition = new MirrorPartition(topic.topic(), p);
                PartitionStatus status = current.getOrDefault(partition, PartitionStatus.initial(now));
                if (status.state() == MirrorPartitionState.UNKNOWN || status.state() == MirrorPartitionState.STOPPED) {
                    changed.put(partition, status.moveTo(MirrorPartitionState.LOG_TRUNCATION, null, now));
                }
            }
            // decided here, on the coordinator thread: a start that planned before another one persisted its start
            // loses
            outcomes.add(
                    changed.size() > before
                            ? TopicOutcome.ok(topic.topic(), topic.partitions(), "STARTED")
                            : TopicOutcome.error(
                                    topic.topic(),
                                    MirrorError.TOPIC_ALREADY_IN_CLUSTER_MIRROR,
                                    "topic is already mirrored"));
        }
        host.persistPartitions(name, changed);
        if (notServedYet == null) {
            changed.keySet().forEach(p -> host.truncate(name, p));
        } else {
            truncateOnceServed(name, notServedYet, changed);
        }
        Set<String> started = new TreeSet<>();
        changed.keySet().forEach(p -> started.add(p.topic()));
        host.restarted(name, started);
        outcomes.sort(Comparator.comparing(TopicOutcome::topic));
        return outcomes;
    }

    /** The mirror's config with the selection's include/exclude patterns added, validated (INVALID_REQUEST naming the list). */
    private MirrorConfig withPatterns(Mirror mirror, TopicSelection selection) {
        Map<String, String> set = new HashMap<>();
        appendPatterns(mirror, MirrorConfig.TOPICS_INCLUDE, selection.include(), "", set);
        appendPatterns(
                mirror, MirrorConfig.TOPICS_EXCLUDE, selection.exclude(), MirrorConfig.DEFAULT_TOPICS_EXCLUDE, set);
        if (set.isEmpty()) {
            return mirror.config();
        }
        try {
            return rules.alter(mirror.config(), set, Set.of());
        } catch (MirrorException e) {
            String field = e.field() != null && e.field().endsWith(MirrorConfig.TOPICS_EXCLUDE) ? "exclude" : "include";
            throw new MirrorException(
                    MirrorError.INVALID_REQUEST,
                    "The mirror's patterns with this request's added would be invalid: " + e.getMessage(),
                    field);
        }
    }

    private static void appendPatterns(
            Mirror mirror, String key, List<String> added, String defaultValue, Map<String, String> set) {
        if (added.isEmpty()) {
            return;
        }
        Set<String> all = new LinkedHashSet<>(mirror.config().list(key, defaultValue));
        all.addAll(added);
        set.put(key, String.join(",", all));
    }

    /** A request's include or exclude list, compiled (INVALID_REQUEST naming the list). Shared with promote. */
    static List<Pattern> patterns(List<String> regexes, String field) {
        try {
            return RegexList.compile(regexes);
        } catch (IllegalArgumentException e) {
            throw new MirrorException(MirrorError.INVALID_REQUEST, "'" + field + "': " + e.getMessage(), field);
        }
    }
}
