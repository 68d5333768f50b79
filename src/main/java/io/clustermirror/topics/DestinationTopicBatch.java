package io.clustermirror.topics;

import io.clustermirror.topics.DestinationTopicPlan.Align;
import io.clustermirror.topics.DestinationTopicPlan.Answer;
import io.clustermirror.topics.DestinationTopicPlan.Create;
import io.clustermirror.topics.DestinationTopicPlan.Restore;
import io.clustermirror.topics.DestinationTopicPlan.Settled;
import io.clustermirror.topics.DestinationTopicPlan.Step;
import io.clustermirror.topics.TopicPreparation.Failed;
import io.clustermirror.topics.TopicPreparation.Prepared;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.utils.ExponentialBackoff;
import org.jboss.logging.Logger;

/**
 * One batch of destination topics prepared together, {@link DestinationTopicPlan}'s rules carried out with one request
 * of each kind instead of five requests per topic one after the other: both clusters' topic descriptions and the source's
 * configs at once, then the creations and the partition increases at once, then the owned configs of the topics that
 * existed, then the guard ACLs; and, once for all batches, one description (or a few) until the destination serves what
 * was written. The topics a stop hands back get their owned configs restored the same way ({@link #restore}). Each
 * request's per-topic answers go back to their topic: one topic's failure fails no other. Blocking: a worker's.
 */
final class DestinationTopicBatch {

    private static final Logger LOGGER = Logger.getLogger(DestinationTopicBatch.class);

    /**
     * The waits of {@link #awaitServed} between two looks at the destination's topics: 10 ms first, doubling (with
     * kafka-clients' jitter) up to 100 ms. A broker shows a topic it has just created led some tens of milliseconds
     * after CreateTopics answers; a first wait of 100 ms held a REST start that long (decisions §13).
     */
    static final ExponentialBackoff SERVED_BACKOFF = new ExponentialBackoff(10, 2, 100, 0.2);

    /** How {@link #awaitServed} waits: {@code Thread::sleep}, a recorder in tests. */
    interface Sleeper {
        void sleep(long millis) throws InterruptedException;
    }

    /** Who did not answer, in a timeout's message. */
    private static final String SOURCE = "source cluster";

    private static final String DESTINATION = "destination cluster";

    private final Admin source;
    private final Admin destination;
    private final long timeoutMs;
    private final Sleeper sleeper;

    DestinationTopicBatch(Admin source, Admin destination, long timeoutMs) {
        this(source, destination, timeoutMs, Thread::sleep);
    }

    DestinationTopicBatch(Admin source, Admin destination, long timeoutMs, Sleeper sleeper) {
        this.source = source;
        this.destination = destination;
        this.timeoutMs = timeoutMs;
        this.sleeper = sleeper;
    }

    /**
     * What a batch did: an outcome per topic, and the partitions of the topics it created or grew, which the destination
     * may not serve yet ({@link #awaitServed}).
     */
    record Result(Map<String, TopicPreparation> outcomes, Map<String, Integer> written) {}

    /** Prepares at most {@link DestinationTopicPlan#MAX_TOPICS_PER_BATCH} topics together: an outcome for each. */
    Result prepare(List<String> topics, Map<String, Boolean> mayAdopt, Collection<String> excludedProperties)
            throws InterruptedException {
        Map<String, TopicPreparation> outcomes = new HashMap<>();
        List<Create> creates = new ArrayList<>();
        List<Align> aligns = new ArrayList<>();
        long started = System.nanoTime();
        for (Step step : describe(topics, mayAdopt, excludedProperties)) {
            if (step instanceof Create create) {
                creates.add(create);
            } else if (step instanceof Align align) {
                aligns.add(align);
            } else {
                TopicPreparation outcome = ((Settled) step).outcome();
                outcomes.put(outcome.topic(), outcome);
            }
        }
        long described = System.nanoTime();
        Map<String, Integer> toGuard = new TreeMap<>(); // topic -> partitions
        List<Align> toAlter = createAndGrow(creates, aligns, toGuard, outcomes);
        long created = System.nanoTime();
        alterOwned(toAlter, toGuard, outcomes);
        long aligned = System.nanoTime();
        guardAll(toGuard, outcomes);
        LOGGER.debugf(
                "Prepared a batch of %d destination topic(s) (%d to create, %d existing) in %d ms: described in %d, "
                        + "created and grown in %d, aligned in %d, guarded in %d",
                topics.size(),
                creates.size(),
                aligns.size(),
                millis(started, System.nanoTime()),
                millis(started, described),
                millis(described, created),
                millis(created, aligned),
                millis(aligned, System.nanoTime()));
        Map<String, Integer> written = new HashMap<>();
        creates.stream()
                .filter(c -> outcomes.get(c.topic()) instanceof Prepared)
                .forEach(c -> written.put(c.topic(), c.partitions()));
        aligns.stream()
                .filter(a -> a.grows() && outcomes.get(a.topic()) instanceof Prepared)
                .forEach(a -> written.put(a.topic(), a.partitions()));
        return new Result(outcomes, written);
    }

    private static long millis(long from, long to) {
        return TimeUnit.NANOSECONDS.toMillis(to - from);
    }

    /** What each topic needs, from one description of both clusters' topics and one of the source's configs, at once. */
    private List<Step> describe(
            List<String> topics, Map<String, Boolean> mayAdopt, Collection<String> excludedProperties)
            throws InterruptedException {
        Map<String, KafkaFuture<TopicDescription>> sourceTopics =
                source.describeTopics(topics).topicNameValues();
        Map<ConfigResource, KafkaFuture<Config>> sourceConfigs = source.describeConfigs(
                        topics.stream().map(DestinationTopicBatch::resource).toList())
                .values();
        Map<String, KafkaFuture<TopicDescription>> destinationTopics =
                destination.describeTopics(topics).topicNameValues();
        long deadline = deadline();
        List<Step> steps = new ArrayList<>();
        for (String topic : topics) {
            steps.add(DestinationTopicPlan.plan(
                    topic,
                    mayAdopt.get(topic),
                    answer(sourceTopics.get(topic).thenApply(d -> d.partitions().size()), deadline, SOURCE),
                    answer(sourceConfigs.get(resource(topic)), deadline, SOURCE),
                    answer(
                            destinationTopics
                                    .get(topic)
                                    .thenApply(d -> d.partitions().size()),
                            deadline,
                            DESTINATION),
                    excludedProperties));
        }
        return steps;
    }

    /**
     * Creates the missing topics and grows the existing ones that have fewer partitions than the source, at once. The
     * created topics go on to their guard; the existing ones that did not fail are returned, to be aligned.
     */
    private List<Align> createAndGrow(
            List<Create> creates,
            List<Align> aligns,
            Map<String, Integer> toGuard,
            Map<String, TopicPreparation> outcomes)
            throws InterruptedException {
        Map<String, KafkaFuture<Void>> created = new HashMap<>();
        for (List<Create> request : DestinationTopicPlan.requests(creates, Create::records)) {
            created.putAll(destination
                    .createTopics(request.stream()
                            .map(c -> new NewTopic(c.topic(), Optional.of(c.partitions()), Optional.empty())
                                    .configs(c.configs()))
                            .toList())
                    .values());
        }
        Map<String, KafkaFuture<Void>> grown = new HashMap<>();
        List<Align> growing = aligns.stream().filter(Align::grows).toList();
        for (List<Align> request : DestinationTopicPlan.requests(growing, Align::newPartitions)) {
            Map<String, NewPartitions> increases = new HashMap<>();
            request.forEach(a -> increases.put(a.topic(), NewPartitions.increaseTo(a.partitions())));
            grown.putAll(destination.createPartitions(increases).values());
        }
        long deadline = deadline();
        for (Create create : creates) {
            Exception error =
                    answer(created.get(create.topic()), deadline, DESTINATION).error();
            Optional<TopicPreparation> failed =
                    error == null ? Optional.empty() : DestinationTopicPlan.createFailed(create, error);
            failed.ifPresentOrElse(
                    f -> outcomes.put(create.topic(), f), () -> toGuard.put(create.topic(), create.partitions()));
        }
        List<Align> toAlter = new ArrayList<>();
        for (Align align : aligns) {
            Exception error = align.grows()
                    ? answer(grown.get(align.topic()), deadline, DESTINATION).error()
                    : null;
            if (error == null) {
                toAlter.add(align);
            } else {
                outcomes.put(align.topic(), new Failed(align.topic(), error));
            }
        }
        return toAlter;
    }

    /** Sets the owned configs on the existing topics; those aligned go on to their guard. */
    private void alterOwned(List<Align> toAlter, Map<String, Integer> toGuard, Map<String, TopicPreparation> outcomes)
            throws InterruptedException {
        Map<String, List<AlterConfigOp>> ops = new LinkedHashMap<>();
        toAlter.forEach(a -> ops.put(a.topic(), ops(a.owned(), Set.of())));
        Map<String, Exception> failed = alter(ops);
        for (Align align : toAlter) {
            Exception error = failed.get(align.topic());
            if (error == null) {
                toGuard.put(align.topic(), align.partitions());
            } else {
                outcomes.put(align.topic(), new Failed(align.topic(), error));
            }
        }
    }

    /**
     * Alters the topics' configs on the destination, one IncrementalAlterConfigs per request's worth ({@link
     * DestinationTopicPlan#requests}), all sent at once and answered under one deadline.
     *
     * @return the error of each topic whose alteration failed
     */
    private Map<String, Exception> alter(Map<String, List<AlterConfigOp>> opsByTopic) throws InterruptedException {
        List<String> topics = List.copyOf(opsByTopic.keySet());
        Map<ConfigResource, KafkaFuture<Void>> altered = new HashMap<>();
        for (List<String> request :
                DestinationTopicPlan.requests(topics, t -> opsByTopic.get(t).size())) {
            Map<ConfigResource, Collection<AlterConfigOp>> ops = new HashMap<>();
            request.forEach(t -> ops.put(resource(t), opsByTopic.get(t)));
            altered.putAll(destination.incrementalAlterConfigs(ops).values());
        }
        long deadline = deadline();
        Map<String, Exception> failed = new HashMap<>();
        for (String topic : topics) {
            Exception error =
                    answer(altered.get(resource(topic)), deadline, DESTINATION).error();
            if (error != null) {
                failed.put(topic, error);
            }
        }
        return failed;
    }

    /**
     * The read-only guard of each topic (a DENY WRITE ACL for {@code User:*}, DESIGN §4.4); the topics guarded, or
     * without an authorizer, are prepared.
     */
    private void guardAll(Map<String, Integer> toGuard, Map<String, TopicPreparation> outcomes)
            throws InterruptedException {
        Map<AclBinding, KafkaFuture<Void>> guarded = new HashMap<>();
        for (List<String> request : DestinationTopicPlan.requests(List.copyOf(toGuard.keySet()), t -> 1)) {
            guarded.putAll(destination
                    .createAcls(request.stream().map(SourceFence::binding).toList())
                    .values());
        }
        long deadline = deadline();
        for (Map.Entry<String, Integer> topic : toGuard.entrySet()) {
            Exception error = answer(guarded.get(SourceFence.binding(topic.getKey())), deadline, DESTINATION)
                    .error();
            outcomes.put(
                    topic.getKey(),
                    error == null
                            ? new Prepared(topic.getKey(), topic.getValue())
                            : DestinationTopicPlan.guardFailed(topic.getKey(), topic.getValue(), error));
        }
    }

    /**
     * Gives topics handed back their owned configs' source values ({@link DestinationTopicPlan#restore}), with one
     * request of each kind per {@link DestinationTopicPlan#MAX_TOPICS_PER_BATCH} topics: both clusters' topic
     * descriptions and the source's configs, all sent at once and answered under one deadline (with the source gone,
     * one timeout whatever the number of topics), then the alterations, one IncrementalAlterConfigs per request's
     * worth.
     *
     * @return the error of each topic whose configs could not be restored; the others were, or needed nothing
     */
    Map<String, Exception> restore(List<String> topics) throws InterruptedException {
        Map<String, KafkaFuture<TopicDescription>> sourceTopics = new HashMap<>();
        Map<ConfigResource, KafkaFuture<Config>> sourceConfigs = new HashMap<>();
        Map<String, KafkaFuture<TopicDescription>> destinationTopics = new HashMap<>();
        for (List<String> request : DestinationTopicPlan.requests(topics, t -> 1)) {
            sourceTopics.putAll(source.describeTopics(request).topicNameValues());
            sourceConfigs.putAll(source.describeConfigs(request.stream()
                            .map(DestinationTopicBatch::resource)
                            .toList())
                    .values());
            destinationTopics.putAll(destination.describeTopics(request).topicNameValues());
        }
        long deadline = deadline();
        Map<String, Exception> failed = new TreeMap<>();
        List<Restore> restores = new ArrayList<>();
        for (String topic : topics) {
            Answer<Optional<Restore>> needed = DestinationTopicPlan.restore(
                    topic,
                    answer(sourceTopics.get(topic), deadline, SOURCE),
                    answer(sourceConfigs.get(resource(topic)), deadline, SOURCE),
                    answer(destinationTopics.get(topic), deadline, DESTINATION));
            if (needed.error() != null) {
                failed.put(topic, needed.error());
            } else {
                needed.value().ifPresent(restores::add);
            }
        }
        Map<String, List<AlterConfigOp>> ops = new LinkedHashMap<>();
        restores.forEach(r -> ops.put(r.topic(), ops(r.set(), r.delete())));
        failed.putAll(alter(ops));
        return failed;
    }

    /**
     * Waits until the destination's metadata shows the created and grown topics with every partition led, as Kafka
     * Streams' InternalTopicManager does after its CreateTopics: the controller answers once the records are committed,
     * a broker serves the topic once it has applied them, and what comes next (the sync cycle's config and offset steps,
     * LOG_TRUNCATION) would otherwise meet UNKNOWN_TOPIC_OR_PARTITION. Past one request timeout the topics are left as
     * prepared (they were created; their first users retry) with a WARN.
     */
    void awaitServed(Map<String, Integer> partitionsByTopic) throws InterruptedException {
        if (partitionsByTopic.isEmpty()) {
            return;
        }
        Map<String, Integer> pending = new TreeMap<>(partitionsByTopic);
        long started = System.nanoTime();
        long deadline = deadline();
        int looks = 0;
        while (!pending.isEmpty() && System.currentTimeMillis() < deadline) {
            Map<String, KafkaFuture<TopicDescription>> described =
                    destination.describeTopics(List.copyOf(pending.keySet())).topicNameValues();
            for (Map.Entry<String, KafkaFuture<TopicDescription>> topic : described.entrySet()) {
                Answer<TopicDescription> answer = answer(topic.getValue(), deadline, DESTINATION);
                boolean unknown = answer.error() != null
                        && DestinationTopicPlan.causedBy(answer.error(), UnknownTopicOrPartitionException.class);
                if (!unknown && (answer.error() != null || led(answer.value(), pending.get(topic.getKey())))) {
                    pending.remove(topic.getKey()); // shown, or not ours to wait for (an error other than unknown)
                }
            }
            if (!pending.isEmpty()) {
                sleeper.sleep(SERVED_BACKOFF.backoff(looks++));
            }
        }
        LOGGER.debugf(
                "%d destination topic(s) created or grown were served after %d ms",
                partitionsByTopic.size() - pending.size(), millis(started, System.nanoTime()));
        if (!pending.isEmpty()) {
            LOGGER.warnf(
                    "%d destination topic(s) created or grown were not shown with every partition led within %d ms, "
                            + "e.g. %s; their first users retry",
                    pending.size(), timeoutMs, pending.keySet().iterator().next());
        }
    }

    private static boolean led(TopicDescription description, int partitions) {
        return description.partitions().size() >= partitions
                && description.partitions().stream().allMatch(p -> p.leader() != null);
    }

    private <T> Answer<T> answer(KafkaFuture<T> future, long deadline, String cluster) throws InterruptedException {
        try {
            return new Answer<>(
                    future.get(Math.max(0, deadline - System.currentTimeMillis()), TimeUnit.MILLISECONDS), null);
        } catch (ExecutionException e) {
            return new Answer<>(null, e);
        } catch (TimeoutException e) {
            return new Answer<>(
                    null, new TimeoutException("the " + cluster + " gave no answer within " + timeoutMs + " ms"));
        }
    }

    /** When the requests sent together now must have answered: one request timeout, as for a single request. */
    private long deadline() {
        return System.currentTimeMillis() + timeoutMs;
    }

    static List<AlterConfigOp> ops(Map<String, String> set, Set<String> delete) {
        List<AlterConfigOp> ops = new ArrayList<>();
        set.forEach((k, v) -> ops.add(new AlterConfigOp(new ConfigEntry(k, v), AlterConfigOp.OpType.SET)));
        delete.forEach(k -> ops.add(new AlterConfigOp(new ConfigEntry(k, ""), AlterConfigOp.OpType.DELETE)));
        return ops;
    }

    static ConfigResource resource(String topic) {
        return new ConfigResource(ConfigResource.Type.TOPIC, topic);
    }
}
