package io.clustermirror.coordinator;

import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.truncation.PrefixCheck;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jboss.logging.Logger;

/**
 * Collects the prefix checks (LOG_TRUNCATION, a resume's and EPOCH_FENCING's checks) that the coordinator asks for in
 * one task (a start, a sync cycle's new partitions, a resume, a restart) and hands them to the mirror's
 * {@link PrefixCheck} together, in batches of at most {@link #MAX_BATCH} partitions, each a task of the mirror's
 * workers; further batches queue there (decisions §36). Each answer comes back to the coordinator thread, to the
 * callback its check was submitted with, all of a batch's answers in one coordinator task.
 *
 * <p>{@link #submit} queues (on the coordinator thread, where the lifecycle runs; a lock keeps a submit from another
 * thread, as the unit tests make, from being lost), and the first submit after a flush posts the next flush, which runs
 * once the coordinator's current task (and so every submit it makes) is over.
 */
final class TruncationBatches {

    private static final Logger LOGGER = Logger.getLogger(TruncationBatches.class);

    /** Partitions per batch: a batch's requests stay far below a broker's limits, and one failed request fails few. */
    static final int MAX_BATCH = 1_000;

    private final CoordinatorThread thread;
    private final int maxBatch;
    /** The checks submitted since the last flush, per runtime (one mirror each), in order (guarded by this). */
    private Map<MirrorParts, List<Pending>> pending = new IdentityHashMap<>();

    private record Pending(String mirror, PrefixCheck.Check check, Consumer<PrefixCheck.Answer> then) {}

    TruncationBatches(CoordinatorThread thread) {
        this(thread, MAX_BATCH);
    }

    TruncationBatches(CoordinatorThread thread, int maxBatch) {
        this.thread = thread;
        this.maxBatch = maxBatch;
    }

    /** Queues a check of the partition on the runtime's prefix check; {@code then} gets its answer on this thread. */
    void submit(String mirror, MirrorParts runtime, PrefixCheck.Check check, Consumer<PrefixCheck.Answer> then) {
        boolean first;
        synchronized (this) {
            first = pending.isEmpty();
            pending.computeIfAbsent(runtime, r -> new ArrayList<>()).add(new Pending(mirror, check, then));
        }
        if (first) {
            thread.run("LOG_TRUNCATION batches", this::flush);
        }
    }

    private void flush() {
        Map<MirrorParts, List<Pending>> due;
        synchronized (this) {
            due = pending;
            pending = new IdentityHashMap<>();
        }
        due.forEach((runtime, checks) -> batches(checks, maxBatch).forEach(batch -> dispatch(runtime, batch)));
    }

    /**
     * The checks cut into batches of at most {@code size}, in order; a partition asked for twice goes to a later
     * batch, since one batch answers once per partition. Pure.
     */
    static <T> List<List<T>> batches(List<T> checks, int size, Function<T, MirrorPartition> key) {
        List<List<T>> batches = new ArrayList<>();
        List<Set<MirrorPartition>> members = new ArrayList<>();
        int open = 0; // batches before this one are full
        for (T check : checks) {
            MirrorPartition partition = key.apply(check);
            int i = open;
            while (i < batches.size()
                    && (batches.get(i).size() >= size || members.get(i).contains(partition))) {
                i++;
            }
            if (i == batches.size()) {
                batches.add(new ArrayList<>());
                members.add(new HashSet<>());
            }
            batches.get(i).add(check);
            members.get(i).add(partition);
            while (open < batches.size() && batches.get(open).size() >= size) {
                open++;
            }
        }
        return batches;
    }

    private static List<List<Pending>> batches(List<Pending> checks, int size) {
        return batches(checks, size, p -> p.check().partition());
    }

    private void dispatch(MirrorParts runtime, List<Pending> batch) {
        String mirror = batch.get(0).mirror();
        List<PrefixCheck.Check> checks = batch.stream().map(Pending::check).toList();
        try {
            runtime.workers().execute(() -> {
                Map<MirrorPartition, PrefixCheck.Answer> answers;
                try {
                    answers = runtime.prefixCheck().check(mirror, checks);
                } catch (Exception e) {
                    answers = allFailed(checks, e);
                } catch (Error e) { // answered all the same: else the batch's partitions would wait for good
                    answers = allFailed(checks, new IllegalStateException("the check died: " + e, e));
                }
                Map<MirrorPartition, PrefixCheck.Answer> answered = answers;
                thread.run("after LOG_TRUNCATION of " + batch.size() + " partition(s) of " + mirror, () -> {
                    for (Pending p : batch) {
                        PrefixCheck.Answer answer = answered.get(p.check().partition());
                        answer(
                                p,
                                answer != null
                                        ? answer
                                        : PrefixCheck.Answer.failed(
                                                new IllegalStateException("the check gave no answer")));
                    }
                });
            });
        } catch (RejectedExecutionException e) {
            // the mirror's runtime was dropped meanwhile (its partitions moved on, or are checked by the new one)
            Map<MirrorPartition, PrefixCheck.Answer> refused = allFailed(checks, e);
            batch.forEach(p -> answer(p, refused.get(p.check().partition())));
        }
    }

    /**
     * One partition's answer: what its handler throws is its own (the handler failed it where it could), never the
     * loss of the batch's other answers.
     */
    private static void answer(Pending p, PrefixCheck.Answer answer) {
        try {
            p.then().accept(answer);
        } catch (RuntimeException e) {
            LOGGER.errorf(
                    e,
                    "Mirror %s: the outcome of LOG_TRUNCATION of %s could not be applied",
                    p.mirror(),
                    p.check().partition());
        }
    }

    private static Map<MirrorPartition, PrefixCheck.Answer> allFailed(List<PrefixCheck.Check> checks, Exception e) {
        Map<MirrorPartition, PrefixCheck.Answer> answers = new LinkedHashMap<>();
        checks.forEach(c -> answers.put(c.partition(), PrefixCheck.Answer.failed(e)));
        return answers;
    }
}
