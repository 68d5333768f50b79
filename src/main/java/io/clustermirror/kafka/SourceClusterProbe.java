package io.clustermirror.kafka;

import java.time.Duration;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.jboss.logging.Logger;

import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorConfigRules;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.enterprise.context.ApplicationScoped;

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

    /** The source's cluster id, or {@link MirrorError#SOURCE_METADATA_NOT_AVAILABLE} naming why it could not be had. */
    public Uni<String> clusterId(String mirrorName, MirrorConfig mirrorConfig) {
        int timeoutMs = config.source().requestTimeoutMs();
        return Uni.createFrom().item(() -> clients.sourceAdmin(mirrorName, mirrorConfig))
                .runSubscriptionOn(Infrastructure.getDefaultWorkerPool())
                .onFailure().transform(e -> unavailable(mirrorConfig, e))
                .onItem().transformToUni(admin -> KafkaUni.of(admin.describeCluster(new DescribeClusterOptions().timeoutMs(timeoutMs)).clusterId())
                        .ifNoItem().after(Duration.ofMillis(timeoutMs + 1000L)).fail()
                        .onFailure().transform(e -> unavailable(mirrorConfig, e))
                        .onTermination().invoke(() -> Infrastructure.getDefaultWorkerPool().execute(() -> admin.close(Duration.ZERO))));
    }

    private MirrorException unavailable(MirrorConfig mirrorConfig, Throwable cause) {
        if (cause instanceof MirrorException mirrorException) {
            return mirrorException;
        }
        String reason = rules.redact(cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage(), mirrorConfig);
        LOGGER.debugf("Source cluster at %s not reachable: %s", mirrorConfig.bootstrapServers(), reason);
        return new MirrorException(MirrorError.SOURCE_METADATA_NOT_AVAILABLE, "Could not describe the source cluster at "
                + mirrorConfig.bootstrapServers() + " within " + config.source().requestTimeoutMs() + " ms: " + reason,
                "config.bootstrap.servers", cause);
    }
}
