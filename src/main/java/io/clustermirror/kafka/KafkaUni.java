package io.clustermirror.kafka;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import java.util.concurrent.CompletionException;
import org.apache.kafka.common.KafkaFuture;

/**
 * Admin futures as Mutiny {@link Uni}s. A future completes on the Admin client's own network thread: what a
 * pipeline does next ({@code map}, {@code chain}: matching names, planning a sync step) is moved to a worker, so no
 * sync work ever runs on, or can stall, that thread (every call of that Admin would wait behind it).
 */
public final class KafkaUni {

    private KafkaUni() {}

    public static <T> Uni<T> of(KafkaFuture<T> future) {
        return Uni.createFrom()
                .completionStage(future.toCompletionStage())
                .onFailure(CompletionException.class)
                .transform(Throwable::getCause)
                .emitOn(Infrastructure.getDefaultWorkerPool());
    }
}
