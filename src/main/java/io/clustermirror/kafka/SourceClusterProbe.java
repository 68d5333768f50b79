package io.clustermirror.kafka;

import io.clustermirror.config.MirrorServiceConfig;
import io.clustermirror.mirror.Failures;
import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorConfigRules;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.jboss.logging.Logger;

/**
 * Asks a source cluster for its cluster id. Building and closing an Admin client may block (DNS
 * look-ups, joining its network thread), so both run on the worker pool, never on an event loop.
 */
@ApplicationScoped
public class SourceClusterProbe {

    private static final Logger LOGGER = Logger.getLogger(SourceClusterProbe.class);

    private final KafkaClients clients;
    private final MirrorServiceConfig config;
    private final MirrorConfigRules rules;

    public SourceClusterProbe(KafkaClients clients, MirrorServiceConfig config, MirrorConfigRules rules) {
        this.clients = clients;
        this.config = config;
        this.rules = rules;
    }

    /**
     * The source's cluster id, or {@link MirrorError#SOURCE_METADATA_NOT_AVAILABLE} naming why it could not be had.
     * The whole check is bounded by {@code mirror.source.request.timeout.ms}: building the Admin client resolves every
     * bootstrap address (DNS) before it asks anything, and an unresolvable name can take seconds. An Admin that is
     * built after the answer was given is closed as soon as it exists.
     */
    public Uni<String> clusterId(String mirrorName, MirrorConfig mirrorConfig) {
        int timeoutMs = config.source().requestTimeoutMs();
        CompletableFuture<Admin> admin = CompletableFuture.supplyAsync(
                () -> clients.sourceAdmin(mirrorName, mirrorConfig), Infrastructure.getDefaultWorkerPool());
        return Uni.createFrom()
                .completionStage(admin)
                .onItem()
                .transformToUni(a -> KafkaUni.of(a.describeCluster(new DescribeClusterOptions().timeoutMs(timeoutMs))
                        .clusterId()))
                .ifNoItem()
                .after(Duration.ofMillis(timeoutMs))
                .failWith(() -> new TimeoutException("no answer within " + timeoutMs + " ms"))
                .onFailure()
                .transform(e -> unavailable(mirrorConfig, Failures.unwrap(e)))
                .onTermination()
                .invoke(() ->
                        admin.thenAcceptAsync(a -> a.close(Duration.ZERO), Infrastructure.getDefaultWorkerPool()));
    }

    private MirrorException unavailable(MirrorConfig mirrorConfig, Throwable cause) {
        if (cause instanceof MirrorException mirrorException) {
            return mirrorException;
        }
        String reason = rules.redact(
                cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage(), mirrorConfig);
        LOGGER.debugf("Source cluster at %s not reachable: %s", mirrorConfig.bootstrapServers(), reason);
        return new MirrorException(
                MirrorError.SOURCE_METADATA_NOT_AVAILABLE,
                "Could not describe the source cluster at " + mirrorConfig.bootstrapServers() + " within "
                        + config.source().requestTimeoutMs() + " ms: " + reason,
                "config.bootstrap.servers",
                cause);
    }
}
