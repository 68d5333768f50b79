package io.clustermirror.kafka;

import io.smallrye.mutiny.Uni;
import java.util.concurrent.CompletionException;
import org.apache.kafka.common.KafkaFuture;

/** Admin futures as Mutiny {@link Uni}s; completion arrives on the Admin client's own network thread. */
public final class KafkaUni {

    private KafkaUni() {}

    public static <T> Uni<T> of(KafkaFuture<T> future) {
        return Uni.createFrom()
                .completionStage(future.toCompletionStage())
                .onFailure(CompletionException.class)
                .transform(Throwable::getCause);
    }
}
