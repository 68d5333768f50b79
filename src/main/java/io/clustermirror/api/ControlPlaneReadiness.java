package io.clustermirror.api;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.Locale;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * How the control plane treats callers, in the readiness data: {@code authentication} is {@code enforced},
 * {@code disabled} (mirror.http.auth.disabled=true) or {@code dev-open}, with the mechanisms configured.
 */
@Readiness
@ApplicationScoped
public class ControlPlaneReadiness implements HealthCheck {

    private final ControlPlaneSecurity security;

    public ControlPlaneReadiness(ControlPlaneSecurity security) {
        this.security = security;
    }

    @Override
    public HealthCheckResponse call() {
        return HealthCheckResponse.named("control-plane")
                .status(security.mode() != ControlPlaneSecurity.Mode.REFUSED)
                .withData(
                        "authentication",
                        security.mode().name().toLowerCase(Locale.ROOT).replace('_', '-'))
                .withData("mechanisms", String.join(",", security.mechanisms()))
                .build();
    }
}
