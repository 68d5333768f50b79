package io.clustermirror.topics;

import io.clustermirror.mirror.Frozen;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;

/**
 * The one way this service asks a cluster where many partitions start or end (a drain check, describe's lag, the
 * group offset sync, LOG_TRUNCATION and its search for divergent ranges): one Admin ListOffsets for all of them, which
 * kafka-clients sends as one request per partition leader, never a call per partition. Not used where no Admin look-up
 * fits: a pipeline reset's read-back asks raw on the partition's pinned connection from the fetcher's thread
 * ({@code fetch/PipelineReset}), and consumers that read a topic to its end ask their own client. The spec and the isolation level are the caller's (a high
 * watermark is {@code latest} read uncommitted, the last stable offset {@code latest} read committed), and so is what a
 * failure means: every partition gets its own answer (a moved leader, a deleted topic, the call's deadline), and one
 * partition's failure fails no other. {@link Offsets#orThrow} turns them back into one failure for callers that need
 * all or nothing.
 */
public final class OffsetLookup {

    /** How much longer than the call's own deadline an answer is waited for, in case the client itself is stuck. */
    private static final long GRACE_MS = 1_000;

    private final Admin admin;
    private final long timeoutMs;

    /**
     * @param timeoutMs the call's deadline: a partition not answered by then is answered with a timeout
     */
    public OffsetLookup(Admin admin, long timeoutMs) {
        if (timeoutMs <= 0) {
            throw new IllegalArgumentException("timeoutMs must be positive: " + timeoutMs);
        }
        this.admin = admin;
        this.timeoutMs = timeoutMs;
    }

    /**
     * Bounded by the client's own {@code default.api.timeout.ms} (which this service sets to the request timeout): for a
     * caller whose whole flow has its deadline elsewhere.
     */
    public OffsetLookup(Admin admin) {
        this.admin = admin;
        this.timeoutMs = 0;
    }

    /**
     * The partitions' offsets. Never completes exceptionally (each partition carries its own failure) and always
     * completes: a partition the client did not answer within the deadline is answered with a timeout. Completes on
     * the Admin client's network thread: move what follows off it ({@code emitOn} a worker pool, or a blocking wait
     * there), so that no caller's work ever stalls that client's other calls.
     */
    public CompletionStage<Offsets> list(
            Collection<TopicPartition> partitions, OffsetSpec spec, IsolationLevel isolation) {
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        partitions.forEach(tp -> request.put(tp, spec));
        if (request.isEmpty()) {
            return CompletableFuture.completedFuture(new Offsets(Map.of(), Map.of()));
        }
        ListOffsetsOptions options = new ListOffsetsOptions(isolation);
        if (timeoutMs > 0) {
            options.timeoutMs((int) Math.min(Integer.MAX_VALUE, timeoutMs));
        }
        ListOffsetsResult result = admin.listOffsets(request, options);
        Map<TopicPartition, CompletableFuture<Answer>> answers = new HashMap<>();
        for (TopicPartition tp : request.keySet()) {
            CompletableFuture<Answer> answer = new CompletableFuture<>();
            result.partitionResult(tp).whenComplete((info, error) -> answer.complete(new Answer(info, error)));
            answers.put(tp, answer);
        }
        CompletableFuture<Void> all = CompletableFuture.allOf(answers.values().toArray(CompletableFuture[]::new));
        if (timeoutMs > 0) {
            all = all.completeOnTimeout(null, timeoutMs + GRACE_MS, TimeUnit.MILLISECONDS);
        }
        return all.thenApply(done -> collect(answers));
    }

    /** {@link #list}, waited for: blocking, for a worker thread. */
    public Offsets await(Collection<TopicPartition> partitions, OffsetSpec spec, IsolationLevel isolation)
            throws InterruptedException {
        try {
            return list(partitions, spec, isolation).toCompletableFuture().get();
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause()); // list() never fails as a whole
        }
    }

    /** Log ends read uncommitted (the high watermark), the common question; blocking, for a worker thread. */
    public Offsets latest(Collection<TopicPartition> partitions) throws InterruptedException {
        return await(partitions, OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED);
    }

    private static Offsets collect(Map<TopicPartition, CompletableFuture<Answer>> answers) {
        Map<TopicPartition, ListOffsetsResultInfo> found = new HashMap<>();
        Map<TopicPartition, Exception> failed = new HashMap<>();
        answers.forEach((tp, future) -> {
            Answer answer = future.getNow(null);
            if (answer == null) {
                failed.put(tp, new TimeoutException("no offset of " + tp + " was answered in time"));
            } else if (answer.error() == null) {
                found.put(tp, answer.info());
            } else {
                failed.put(tp, answer.error() instanceof Exception e ? e : new IllegalStateException(answer.error()));
            }
        });
        return new Offsets(found, failed);
    }

    private record Answer(ListOffsetsResultInfo info, Throwable error) {}

    /**
     * What a look-up found: for each partition asked about, its offset (with the timestamp and leader epoch the broker
     * gave) or the Kafka error that partition was answered with; never both.
     */
    public record Offsets(Map<TopicPartition, ListOffsetsResultInfo> found, Map<TopicPartition, Exception> failed) {

        private static final Comparator<TopicPartition> ORDER =
                Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition);

        public Offsets {
            found = Frozen.map(found);
            failed = Frozen.map(failed);
        }

        /** The partition's offset, when it was found. */
        public OptionalLong offset(TopicPartition tp) {
            ListOffsetsResultInfo info = found.get(tp);
            return info == null ? OptionalLong.empty() : OptionalLong.of(info.offset());
        }

        /** The partitions that failed, in topic-partition order. */
        public Set<TopicPartition> failedPartitions() {
            Set<TopicPartition> sorted = new TreeSet<>(ORDER);
            sorted.addAll(failed.keySet());
            return sorted;
        }

        /** The error of the first partition that failed (in topic-partition order), if any did. */
        public Optional<Exception> firstFailure() {
            return failedPartitions().stream().findFirst().map(failed::get);
        }

        /**
         * These offsets when every partition was found; otherwise the first failure, as {@code listOffsets(...).all()
         * .get()} throws it (wrapped in an {@link ExecutionException}): for callers that need every partition or none.
         */
        public Offsets orThrow() throws ExecutionException {
            Optional<Exception> failure = firstFailure();
            if (failure.isPresent()) {
                throw new ExecutionException(failure.get());
            }
            return this;
        }
    }
}
