package io.clustermirror.topics;

import io.clustermirror.topics.TopicPreparation.Conflict;
import io.clustermirror.topics.TopicPreparation.Failed;
import io.clustermirror.topics.TopicPreparation.Mismatch;
import io.clustermirror.topics.TopicPreparation.NotOnSource;
import io.clustermirror.topics.TopicPreparation.Prepared;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.common.errors.SecurityDisabledException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * Destination topics of a mirror: created like the source's (same partitions, the source's non-default
 * configs, the destination's default replication factor) plus the mirror-owned configs that keep the
 * bytes as they come (DESIGN §4.1); restored to the source's values when the topic is stopped.
 * Blocking: call on a worker thread.
 */
public final class DestinationTopics {

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

    static String conflictReason(String topic) {
        return "destination topic " + topic
                + " already exists and was not created by this mirror; it was left untouched. "
                + "To mirror into it (it gets the read-only guard and the mirror-owned configs, and with "
                + "mirror.truncation.policy=recreate it may be deleted and recreated), start it again with \"adoptExisting\": true";
    }

    private final Admin source;
    private final Admin destination;
    private final long timeoutMs;
    private final DestinationTopicBatch batches;

    public DestinationTopics(Admin source, Admin destination, long timeoutMs) {
        this.source = source;
        this.destination = destination;
        this.timeoutMs = timeoutMs;
        this.batches = new DestinationTopicBatch(source, destination, timeoutMs);
    }

    /** Source topic names (internal ones included; callers filter). */
    public Set<String> sourceTopics() throws Exception {
        return source.listTopics(new ListTopicsOptions().listInternal(true))
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
        TopicPreparation outcome = prepareAll(Map.of(topic, mayAdopt), excludedProperties, () -> false, true)
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
     * @param awaitServed whether to answer only once the destination serves the topics it created or grew (a REST
     *        start, whose caller may use them at once), or as soon as they are created (the metadata sync cycle: a
     *        broker applies thousands of new partitions in tens of seconds, which no other step of the cycle should
     *        wait for; LOG_TRUNCATION asks again until they are served, {@code NotServedYet})
     * @return the outcome of each topic of the batches run, by topic
     */
    public Map<String, TopicPreparation> prepareAll(
            Map<String, Boolean> mayAdoptByTopic,
            Collection<String> excludedProperties,
            BooleanSupplier cancelled,
            boolean awaitServed)
            throws InterruptedException {
        Map<String, TopicPreparation> outcomes = new TreeMap<>();
        Map<String, Integer> written = new HashMap<>();
        List<String> topics = List.copyOf(new TreeSet<>(mayAdoptByTopic.keySet()));
        for (List<String> batch : DestinationTopicPlan.requests(topics, t -> 1)) {
            if (cancelled.getAsBoolean()) {
                break;
            }
            DestinationTopicBatch.Result result = batches.prepare(batch, mayAdoptByTopic, excludedProperties);
            outcomes.putAll(result.outcomes());
            written.putAll(result.written());
        }
        if (awaitServed) {
            // once for all batches: a broker applies the next batch's creations while this one's requests are under way
            batches.awaitServed(written);
        }
        return outcomes;
    }

    /**
     * Waits until the destination serves the topics with at least these partitions, every one led, up to one request
     * timeout (then a WARN). Blocking.
     */
    public void awaitServed(Map<String, Integer> partitionsByTopic) throws InterruptedException {
        batches.awaitServed(partitionsByTopic);
    }

    /**
     * The mirror-owned configs of the topics handed back return to the source's values (or to defaults), all at once
     * ({@link DestinationTopicBatch#restore}); their guards are lifted apart ({@link #liftGuards(Collection)}), first:
     * this reads the source, which may be gone. Blocking, up to two request timeouts (the reads, then the writes).
     *
     * @return the error of each topic whose configs could not be restored
     */
    public Map<String, Exception> restoreConfigs(Collection<String> topics) throws InterruptedException {
        return batches.restore(List.copyOf(topics));
    }

    /**
     * Lifts the read-only guards of the topics handed back (DESIGN §4.4: a DENY WRITE ACL for {@code User:*} while
     * mirrored; {@link DestinationTopicBatch} puts them on) in one request over this mirror's destination Admin.
     * Blocking, up to one request timeout.
     */
    public void liftGuards(Collection<String> topics) throws Exception {
        liftGuards(destination, topics).toCompletableFuture().get(timeoutMs, TimeUnit.MILLISECONDS);
    }

    /**
     * Lifts the read-only guards of the topics over {@code destination} (any Admin of the destination: the service's
     * own, when a mirror's clients cannot be built); a destination without an authorizer has none to lift.
     */
    public static CompletionStage<Void> liftGuards(Admin destination, Collection<String> topics) {
        return destination
                .deleteAcls(topics.stream()
                        .map(topic -> SourceFence.binding(topic).toFilter())
                        .toList())
                .all()
                .toCompletionStage()
                .handle((deleted, error) -> {
                    Throwable cause = error instanceof CompletionException ? error.getCause() : error;
                    if (cause == null || cause instanceof SecurityDisabledException) {
                        return null;
                    }
                    throw error instanceof CompletionException c ? c : new CompletionException(cause);
                });
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
}
