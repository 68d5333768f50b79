package io.clustermirror.kafka;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import org.apache.kafka.common.KafkaFuture;

/**
 * Admin futures as Mutiny {@link Uni}s. A future completes on the Admin client's own network thread: what a
 * pipeline does next ({@code map}, {@code chain}: matching names, planning a sync step) is moved to a worker, so no
 * sync work ever runs on, or can stall, that thread (every call of that Admin would wait behind it). The sync cycles
 * name their mirror's share of the instance's worker pool, so that however many mirrors cycle at once, their steps
 * run on the threads {@code mirror.worker.threads} bounds, never on threads that Quarkus' own pool grows for them.
 */
public final class KafkaUni {

    private KafkaUni() {}

    /** Continues on Quarkus' worker pool: for the calls of a request or a probe, one at a time. */
    public static <T> Uni<T> of(KafkaFuture<T> future) {
        return of(Infrastructure.getDefaultWorkerPool(), future);
    }

    /** Continues on {@code continuations}. */
    public static <T> Uni<T> of(Executor continuations, KafkaFuture<T> future) {
        return Uni.createFrom()
                .completionStage(future.toCompletionStage())
                .onFailure(CompletionException.class)
                .transform(Throwable::getCause)
                .emitOn(continuations);
    }
}
