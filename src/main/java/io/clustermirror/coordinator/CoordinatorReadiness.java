package io.clustermirror.coordinator;

import io.clustermirror.kafka.KafkaClients;
import io.clustermirror.kafka.KafkaUni;
import io.quarkus.runtime.ShutdownEvent;
import io.smallrye.health.api.AsyncHealthCheck;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/** Ready = mirror state replayed, this instance not fenced, and the destination cluster answering. */
@Readiness
@ApplicationScoped
public class CoordinatorReadiness implements AsyncHealthCheck {

    private static final int PROBE_TIMEOUT_MS = 3000;

    private final MirrorCoordinator coordinator;
    private final KafkaClients clients;
    private volatile Admin admin;

    public CoordinatorReadiness(MirrorCoordinator coordinator, KafkaClients clients) {
        this.coordinator = coordinator;
        this.clients = clients;
    }

    @Override
    public Uni<HealthCheckResponse> call() {
        CoordinatorStatus status = coordinator.status();
        if (!status.isActive()) {
            return Uni.createFrom()
                    .item(HealthCheckResponse.named("mirror-coordinator")
                            .down()
                            .withData("phase", status.phase().name())
                            .withData("reason", status.reason())
                            .build());
        }
        return admin().chain(
                        a -> KafkaUni.of(a.describeCluster(new DescribeClusterOptions().timeoutMs(PROBE_TIMEOUT_MS))
                                .clusterId()))
                .ifNoItem()
                .after(Duration.ofMillis(PROBE_TIMEOUT_MS + 500))
                .fail()
                .map(clusterId -> HealthCheckResponse.named("mirror-coordinator")
                        .up()
                        .withData("phase", status.phase().name())
                        .withData("destinationClusterId", clusterId)
                        .build())
                .onFailure()
                .recoverWithItem(e -> HealthCheckResponse.named("mirror-coordinator")
                        .down()
                        .withData("phase", status.phase().name())
                        .withData("reason", "destination not reachable: " + e)
                        .build());
    }

    /** One long-lived Admin for the probes, created off the event loop on first use. */
    private Uni<Admin> admin() {
        Admin current = admin;
        if (current != null) {
            return Uni.createFrom().item(current);
        }
        return Uni.createFrom()
                .item(() -> {
                    synchronized (this) {
                        if (admin == null) {
                            admin = clients.destinationAdmin();
                        }
                        return admin;
                    }
                })
                .runSubscriptionOn(io.smallrye.mutiny.infrastructure.Infrastructure.getDefaultWorkerPool());
    }

    void onStop(@Observes ShutdownEvent event) {
        Admin current = admin;
        if (current != null) {
            current.close(Duration.ofSeconds(2));
        }
    }
}
