package io.clustermirror.api;

import io.clustermirror.mirror.MirrorException;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.concurrent.CompletionException;
import org.jboss.logging.Logger;

/**
 * A failure that arrives after its subscriber went away (an HTTP client that closed the connection before the
 * answer) has nobody to go to. A {@link MirrorException} then is an answer nobody waits for, such as "unknown
 * mirror": DEBUG, not the ERROR with a stack trace that Mutiny's default gives every one of them. Anything else
 * stays visible, at WARN with its stack.
 */
@ApplicationScoped
public class DroppedFailures {

    private static final Logger LOGGER = Logger.getLogger(DroppedFailures.class);

    void install(@Observes StartupEvent event) {
        Infrastructure.setDroppedExceptionHandler(DroppedFailures::dropped);
    }

    static void dropped(Throwable failure) {
        Throwable cause =
                failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        if (cause instanceof MirrorException answer) {
            LOGGER.debugf("Answer for a request whose client is gone: %s %s", answer.error(), answer.getMessage());
        } else {
            LOGGER.warn("A failure arrived after its caller was gone", cause);
        }
    }
}
