package io.clustermirror.fetch;

import io.clustermirror.fetch.DestinationTopicPlan.Align;
import io.clustermirror.fetch.DestinationTopicPlan.Answer;
import io.clustermirror.fetch.DestinationTopicPlan.Create;
import io.clustermirror.fetch.DestinationTopicPlan.Settled;
import io.clustermirror.fetch.DestinationTopicPlan.Step;
import io.clustermirror.mirror.OwnedTopicConfigs;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
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

/**
 * Destination topics of a mirror: created like the source's (same partitions, the source's non-default
 * configs, the destination's default replication factor) plus the mirror-owned configs that keep the
 * bytes as they come (DESIGN §4.1); restored to the source's values when the topic is stopped.
 * Blocking: call on a worker thread.
 */
public final class DestinationTopics {

    /** How preparing one topic ended. */
    public sealed interface Outcome {
        String topic();
    }

    /** The destination topic is ready to be mirrored into: what the data plane needs to know of it. */
    public record Prepared(String topic, int partitions) implements Outcome {}

    /** The source has no such topic (any more). */
    public record NotOnSource(String topic) implements Outcome {}

    /** The destination has a topic of that name that this mirror may not adopt; nothing was changed on it. */
    public record Conflict(String topic) implements Outcome {
        public String reason() {
            return conflictReason(topic);
        }
    }

    /** The topic cannot be mirrored as it is (the destination has more partitions than the source). */
    public record Mismatch(String topic, String reason) implements Outcome {}

    /** A request about the topic failed: {@code error} is what a request for that topic alone would have thrown. */
    public record Failed(String topic, Exception error) implements Outcome {}

    /** The topic cannot be mirrored as asked (e.g. the destination has more partitions than the source). */
    public static final class TopicMismatchException extends Exception {
        private static final long serialVersionUID = 1L;

        public TopicMismatchException(String message) {
            super(message);
        }
    }

    /**
     * The destination already has a topic of that name that this mirror did not create (nor adopt): it is left
     * untouched, no guard ACL, no config change, never recreated.
     */
    public static final class TopicConflictException extends Exception {
        private static final long serialVersionUID = 1L;

        public TopicConflictException(String topic) {
            super(conflictReason(topic));
        }
    }

    private static String conflictReason(String topic) {
        return "destination topic " + topic
                + " already exists and was not created by this mirror; it was left untouched. "
                + "To mirror into it (it gets the read-only guard and the mirror-owned configs, and with "
                + "mirror.truncation.policy=recreate it may be deleted and recreated), start it again with \"adoptExisting\": true";
    }

    private final Admin source;
    private final Admin destination;
    private final long timeoutMs;

    public DestinationTopics(Admin source, Admin destination, long timeoutMs) {
        this.source = source;
        this.destination = destination;
        this.timeoutMs = timeoutMs;
    }

    /** Source topic names (internal ones included; callers filter). */
    public Set<String> sourceTopics() throws Exception {
        return source.listTopics(new org.apache.kafka.clients.admin.ListTopicsOptions().listInternal(true))
                .names()
                .get(timeoutMs, TimeUnit.MILLISECONDS);
    }

    /**
     * Creates or aligns the destination topic; empty when the source has no such topic. {@link #prepareAll} of one topic.
     *
     * @param mayAdopt whether an existing destination topic may be aligned and guarded: the mirror created it (or
     *        adopted it before), or the operator said so; otherwise an existing topic is a {@link TopicConflictException}
     *        and nothing is changed on it
     */
    public Optional<Prepared> prepare(String topic, Collection<String> excludedProperties, boolean mayAdopt)
            throws Exception {
        Outcome outcome = prepareAll(Map.of(topic, mayAdopt), excludedProperties, () -> false)
                .get(topic);
        if (outcome instanceof Prepared prepared) {
            return Optional.of(prepared);
        }
        if (outcome instanceof NotOnSource) {
            return Optional.empty();
        }
        if (outcome instanceof Conflict) {
            throw new TopicConflictException(topic);
        }
        if (outcome instanceof Mismatch mismatch) {
            throw new TopicMismatchException(mismatch.reason());
        }
        throw ((Failed) outcome).error();
    }

    /**
     * Creates or aligns the destination topics, in batches of {@link DestinationTopicPlan#MAX_TOPICS_PER_BATCH}: a batch
     * is one request of each kind (the two clusters' topic descriptions and the source's configs at once, then the
     * creations and partition increases, then the owned configs of the topics that existed, then the guard ACLs), not
     * five requests per topic one after the other. Every topic gets its own outcome, as {@link #prepare} would have
     * given it: one topic's failure fails no other.
     *
     * @param mayAdoptByTopic the topics, each with whether an existing destination topic may be aligned and guarded
     * @param cancelled asked before each batch: once true, the batches not begun are left out of the answer
     * @return the outcome of each topic of the batches run, by topic
     */
    public Map<String, Outcome> prepareAll(
            Map<String, Boolean> mayAdoptByTopic, Collection<String> excludedProperties, BooleanSupplier cancelled)
            throws InterruptedException {
        Map<String, Outcome> outcomes = new TreeMap<>();
        List<String> topics = List.copyOf(new TreeSet<>(mayAdoptByTopic.keySet()));
        for (List<String> batch : DestinationTopicPlan.requests(topics, t -> 1)) {
            if (cancelled.getAsBoolean()) {
                break;
            }
            prepareBatch(batch, mayAdoptByTopic, excludedProperties, outcomes);
        }
        return outcomes;
    }

    private void prepareBatch(
            List<String> topics,
            Map<String, Boolean> mayAdopt,
            Collection<String> excludedProperties,
            Map<String, Outcome> outcomes)
            throws InterruptedException {
        List<Create> creates = new ArrayList<>();
        List<Align> aligns = new ArrayList<>();
        for (Step step : describe(topics, mayAdopt, excludedProperties)) {
            if (step instanceof Create create) {
                creates.add(create);
            } else if (step instanceof Align align) {
                aligns.add(align);
            } else {
                Outcome outcome = ((Settled) step).outcome();
                outcomes.put(outcome.topic(), outcome);
            }
        }
        Map<String, Integer> toGuard = new TreeMap<>(); // topic -> partitions
        List<Align> toAlter = createAndGrow(creates, aligns, toGuard, outcomes);
        alterOwned(toAlter, toGuard, outcomes);
        guardAll(toGuard, outcomes);
    }

    /** What each topic needs, from one description of both clusters' topics and one of the source's configs, at once. */
    private List<Step> describe(
            List<String> topics, Map<String, Boolean> mayAdopt, Collection<String> excludedProperties)
            throws InterruptedException {
        Map<String, KafkaFuture<TopicDescription>> sourceTopics =
                source.describeTopics(topics).topicNameValues();
        Map<ConfigResource, KafkaFuture<Config>> sourceConfigs = source.describeConfigs(
                        topics.stream().map(DestinationTopics::resource).toList())
                .values();
        Map<String, KafkaFuture<TopicDescription>> destinationTopics =
                destination.describeTopics(topics).topicNameValues();
        long deadline = deadline();
        List<Step> steps = new ArrayList<>();
        for (String topic : topics) {
            steps.add(DestinationTopicPlan.plan(
                    topic,
                    mayAdopt.get(topic),
                    answer(sourceTopics.get(topic).thenApply(d -> d.partitions().size()), deadline),
                    answer(sourceConfigs.get(resource(topic)), deadline),
                    answer(
                            destinationTopics
                                    .get(topic)
                                    .thenApply(d -> d.partitions().size()),
                            deadline),
                    excludedProperties));
        }
        return steps;
    }

    /**
     * Creates the missing topics and grows the existing ones that have fewer partitions than the source, at once. The
     * created topics go on to their guard; the existing ones that did not fail are returned, to be aligned.
     */
    private List<Align> createAndGrow(
            List<Create> creates, List<Align> aligns, Map<String, Integer> toGuard, Map<String, Outcome> outcomes)
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
            Exception error = answer(created.get(create.topic()), deadline).error();
            Optional<Outcome> failed =
                    error == null ? Optional.empty() : DestinationTopicPlan.createFailed(create, error);
            failed.ifPresentOrElse(
                    f -> outcomes.put(create.topic(), f), () -> toGuard.put(create.topic(), create.partitions()));
        }
        List<Align> toAlter = new ArrayList<>();
        for (Align align : aligns) {
            Exception error =
                    align.grows() ? answer(grown.get(align.topic()), deadline).error() : null;
            if (error == null) {
                toAlter.add(align);
            } else {
                outcomes.put(align.topic(), new Failed(align.topic(), error));
            }
        }
        return toAlter;
    }

    /** Sets the owned configs on the existing topics; those aligned go on to their guard. */
    private void alterOwned(List<Align> toAlter, Map<String, Integer> toGuard, Map<String, Outcome> outcomes)
            throws InterruptedException {
        Map<ConfigResource, KafkaFuture<Void>> altered = new HashMap<>();
        for (List<Align> request :
                DestinationTopicPlan.requests(toAlter, a -> a.owned().size())) {
            Map<ConfigResource, Collection<AlterConfigOp>> ops = new HashMap<>();
            request.forEach(a -> ops.put(resource(a.topic()), ops(a.owned(), Set.of())));
            altered.putAll(destination.incrementalAlterConfigs(ops).values());
        }
        long deadline = deadline();
        for (Align align : toAlter) {
            Exception error =
                    answer(altered.get(resource(align.topic())), deadline).error();
            if (error == null) {
                toGuard.put(align.topic(), align.partitions());
            } else {
                outcomes.put(align.topic(), new Failed(align.topic(), error));
            }
        }
    }

    /** The read-only guard of each topic ({@link #guard}); the topics guarded, or without an authorizer, are prepared. */
    private void guardAll(Map<String, Integer> toGuard, Map<String, Outcome> outcomes) throws InterruptedException {
        Map<AclBinding, KafkaFuture<Void>> guarded = new HashMap<>();
        for (List<String> request : DestinationTopicPlan.requests(List.copyOf(toGuard.keySet()), t -> 1)) {
            guarded.putAll(destination
                    .createAcls(request.stream().map(SourceFence::binding).toList())
                    .values());
        }
        long deadline = deadline();
        for (Map.Entry<String, Integer> topic : toGuard.entrySet()) {
            Exception error = answer(guarded.get(SourceFence.binding(topic.getKey())), deadline)
                    .error();
            outcomes.put(
                    topic.getKey(),
                    error == null
                            ? new Prepared(topic.getKey(), topic.getValue())
                            : DestinationTopicPlan.guardFailed(topic.getKey(), topic.getValue(), error));
        }
    }

    private <T> Answer<T> answer(KafkaFuture<T> future, long deadline) throws InterruptedException {
        try {
            return new Answer<>(
                    future.get(Math.max(0, deadline - System.currentTimeMillis()), TimeUnit.MILLISECONDS), null);
        } catch (ExecutionException e) {
            return new Answer<>(null, e);
        } catch (TimeoutException e) {
            return new Answer<>(null, new TimeoutException("no answer within " + timeoutMs + " ms"));
        }
    }

    /** When the requests sent together now must have answered: one request timeout, as for a single request. */
    private long deadline() {
        return System.currentTimeMillis() + timeoutMs;
    }

    /** Hands the topic back: the mirror-owned configs return to the source's values (or to defaults). */
    public void restore(String topic) throws Exception {
        Optional<TopicDescription> sourceTopic = describe(source, topic);
        Map<String, String> set = new HashMap<>();
        Set<String> delete = new java.util.HashSet<>(OwnedTopicConfigs.NAMES);
        if (sourceTopic.isPresent()) {
            for (ConfigEntry entry : configs(source, topic).entries()) {
                if (OwnedTopicConfigs.NAMES.contains(entry.name())
                        && entry.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG) {
                    set.put(entry.name(), entry.value());
                    delete.remove(entry.name());
                }
            }
        }
        if (describe(destination, topic).isPresent()) {
            alter(topic, set, delete);
        }
        guard(topic, false);
    }

    /**
     * Read-only enforcement (DESIGN §4.4): a DENY WRITE ACL for {@code User:*} on the topic while it is mirrored (the
     * service's principal is a super user, so its own writes pass). Returns false when the destination has no
     * authorizer, where enforcement cannot be had and the offset check is the only guard.
     */
    public boolean guard(String topic, boolean enforce) throws Exception {
        AclBinding binding = SourceFence.binding(topic);
        try {
            if (enforce) {
                destination.createAcls(List.of(binding)).all().get(timeoutMs, TimeUnit.MILLISECONDS);
            } else {
                destination.deleteAcls(List.of(binding.toFilter())).all().get(timeoutMs, TimeUnit.MILLISECONDS);
            }
            return true;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof org.apache.kafka.common.errors.SecurityDisabledException) {
                return false;
            }
            throw e;
        }
    }

    /** Deletes and recreates the destination topic (policy {@code recreate}). */
    public Prepared recreate(String topic, Collection<String> excludedProperties) throws Exception {
        try {
            destination.deleteTopics(List.of(topic)).all().get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                throw e;
            }
        }
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (true) {
            try {
                Optional<Prepared> prepared = prepare(topic, excludedProperties, true);
                if (prepared.isEmpty()) {
                    throw new TopicMismatchException("source topic " + topic + " no longer exists");
                }
                return prepared.get();
            } catch (ExecutionException e) {
                if (System.currentTimeMillis() > deadline) {
                    throw e;
                }
                Thread.sleep(200); // the deletion is still in progress
            }
        }
    }

    private void alter(String topic, Map<String, String> set, Set<String> delete) throws Exception {
        destination
                .incrementalAlterConfigs(Map.of(resource(topic), ops(set, delete)))
                .all()
                .get(timeoutMs, TimeUnit.MILLISECONDS);
    }

    private static List<AlterConfigOp> ops(Map<String, String> set, Set<String> delete) {
        List<AlterConfigOp> ops = new ArrayList<>();
        set.forEach((k, v) -> ops.add(new AlterConfigOp(new ConfigEntry(k, v), AlterConfigOp.OpType.SET)));
        delete.forEach(k -> ops.add(new AlterConfigOp(new ConfigEntry(k, ""), AlterConfigOp.OpType.DELETE)));
        return ops;
    }

    private static ConfigResource resource(String topic) {
        return new ConfigResource(ConfigResource.Type.TOPIC, topic);
    }

    private Optional<TopicDescription> describe(Admin admin, String topic) throws Exception {
        try {
            return Optional.of(admin.describeTopics(List.of(topic))
                    .allTopicNames()
                    .get(timeoutMs, TimeUnit.MILLISECONDS)
                    .get(topic));
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return Optional.empty();
            }
            throw e;
        }
    }

    private Config configs(Admin admin, String topic) throws Exception {
        return admin.describeConfigs(List.of(resource(topic)))
                .all()
                .get(timeoutMs, TimeUnit.MILLISECONDS)
                .get(resource(topic));
    }
}
