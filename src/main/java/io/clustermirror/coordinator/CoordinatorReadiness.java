package io.clustermirror.coordinator;

import io.clustermirror.kafka.KafkaClients;
import io.clustermirror.kafka.KafkaUni;
import io.quarkus.runtime.ShutdownEvent;
import io.smallrye.health.api.AsyncHealthCheck;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

/**
 * Ready = mirror state replayed, this instance not fenced, the destination cluster answering, and no long-lived Kafka
 * client dead beyond replacement. Its data also counts the data-plane loops that died or were stuck since start.
 */
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
        List<String> deadClients = clients.clientFailures();
        if (status.isActive() && !deadClients.isEmpty()) {
            return Uni.createFrom()
                    .item(withLoops(HealthCheckResponse.named("mirror-coordinator")
                                    .down()
                                    .withData("phase", status.phase().name())
                                    .withData("reason", String.join("; ", deadClients)))
                            .build());
        }
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
                .map(clusterId -> withLoops(HealthCheckResponse.named("mirror-coordinator")
                                .up()
                                .withData("phase", status.phase().name())
                                .withData("destinationClusterId", clusterId))
                        .build())
                .onFailure()
                .recoverWithItem(e -> HealthCheckResponse.named("mirror-coordinator")
                        .down()
                        .withData("phase", status.phase().name())
                        .withData("reason", "destination not reachable: " + e)
                        .build());
    }

    private HealthCheckResponseBuilder withLoops(HealthCheckResponseBuilder response) {
        MirrorRuntimes runtimes = coordinator.runtimes();
        response.withData("deadLoops", runtimes.deadLoops());
        String last = runtimes.lastDeadLoop();
        return last == null ? response : response.withData("lastDeadLoop", last);
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
                            admin = clients.longLivedDestinationAdmin("readiness");
                        }
                        return admin;
                    }
                })
                .runSubscriptionOn(Infrastructure.getDefaultWorkerPool());
    }

    void onStop(@Observes ShutdownEvent event) {
        Admin current = admin;
        if (current != null) {
            current.close(Duration.ofSeconds(2));
        }
    }
}
