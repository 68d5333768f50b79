package io.clustermirror.api;

import io.clustermirror.config.ControlPlaneMechanisms;
import io.clustermirror.config.MirrorServiceConfig;
import io.clustermirror.mirror.ClusterMirrorOperation;
import io.clustermirror.mirror.MirrorAccessPolicy;
import io.clustermirror.mirror.RegexList;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduler;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.eclipse.microprofile.config.Config;
import org.jboss.logging.Logger;

/**
 * Whether the control plane asks who is calling, and the access policy it applies (README "Security"). Secure by
 * default: in the prod profile a service with no mechanism configured refuses to start unless
 * {@code mirror.http.auth.disabled=true} says so explicitly; dev mode ({@code quarkus:dev}) stays open.
 */
@ApplicationScoped
public class ControlPlaneSecurity {

    private static final Logger LOGGER = Logger.getLogger(ControlPlaneSecurity.class);

    /** How the control plane treats callers. */
    public enum Mode {
        /** Every call authenticated, every operation authorized. */
        ENFORCED,
        /** {@code mirror.http.auth.disabled=true}: open, with a WARN at start and in the readiness data. */
        DISABLED,
        /** {@code quarkus:dev} without a mechanism: open, said in the banner. */
        DEV_OPEN,
        /** Prod with neither a mechanism nor the explicit opt-out: the service exits; until then nothing is served. */
        REFUSED
    }

    private final Mode mode;
    private final List<String> mechanisms;
    private final MirrorAccessPolicy policy;

    public ControlPlaneSecurity(MirrorServiceConfig config, Config properties) {
        this.mechanisms = ControlPlaneMechanisms.configured(properties);
        this.policy = new MirrorAccessPolicy(grants(config.http().auth().grants()));
        if (config.http().auth().disabled()) {
            mode = Mode.DISABLED;
        } else if (!mechanisms.isEmpty()) {
            mode = Mode.ENFORCED;
        } else if (LaunchMode.current() == LaunchMode.DEVELOPMENT) {
            mode = Mode.DEV_OPEN;
        } else {
            mode = Mode.REFUSED;
        }
    }

    void onStart(@Observes @Priority(1) StartupEvent event, Scheduler scheduler) {
        switch (mode) {
            case REFUSED -> {
                // nothing scheduled runs while the refused service goes down: a shutdown slower than the jobs' 5 s
                // (a loaded machine) had them fire into a container already destroyed, each an ERROR of its own
                if (scheduler.isStarted()) { // not when disabled by configuration
                    scheduler.pause();
                }
                LOGGER.error("No authentication is configured for the REST control plane: configure Basic users "
                        + "(quarkus.security.users.embedded.users.<name>), a JWT key (mp.jwt.verify.publickey.location) or "
                        + "client certificates (quarkus.http.auth.certificate-role-properties), or set "
                        + "mirror.http.auth.disabled=true to run it open (README \"Security\")");
                Quarkus.asyncExit(1);
            }
            case DISABLED ->
                LOGGER.warn("The REST control plane runs WITHOUT authentication "
                        + "(mirror.http.auth.disabled=true): anyone who reaches the port can create, alter and delete mirrors"
                        + (mechanisms.isEmpty() ? "" : "; the configured " + mechanisms + " are not used"));
            case ENFORCED ->
                LOGGER.infof(
                        "REST control plane: authentication by %s, roles %s, %s, %s",
                        String.join(", ", mechanisms),
                        MirrorAccessPolicy.VIEWER,
                        MirrorAccessPolicy.OPERATOR,
                        MirrorAccessPolicy.ADMIN);
            case DEV_OPEN -> LOGGER.info("REST control plane open: dev mode, no authentication configured");
        }
    }

    public Mode mode() {
        return mode;
    }

    public List<String> mechanisms() {
        return mechanisms;
    }

    MirrorAccessPolicy policy() {
        return policy;
    }

    /** The challenges a 401 names, one per mechanism that answers one. */
    List<String> challenges() {
        List<String> challenges = new ArrayList<>();
        if (mechanisms.contains("basic")) {
            challenges.add("Basic realm=\"Quarkus\"");
        }
        if (mechanisms.contains("jwt")) {
            challenges.add("Bearer");
        }
        return challenges;
    }

    private static List<MirrorAccessPolicy.Grant> grants(Map<String, MirrorServiceConfig.Http.Auth.Grant> configured) {
        List<MirrorAccessPolicy.Grant> grants = new ArrayList<>();
        configured.forEach((id, grant) -> {
            String prefix = "mirror.http.auth.grants." + id + ".";
            Set<ClusterMirrorOperation> operations = EnumSet.noneOf(ClusterMirrorOperation.class);
            for (String op : grant.operations()) {
                try {
                    operations.add(ClusterMirrorOperation.valueOf(op.trim().toUpperCase(Locale.ROOT)));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(
                            prefix + "operations: '" + op + "' is not one of CREATE, DESCRIBE, ALTER, DELETE");
                }
            }
            com.google.re2j.Pattern mirrors;
            try {
                mirrors = RegexList.compile(List.of(grant.mirrors())).get(0);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(prefix + "mirrors: " + e.getMessage());
            }
            Set<String> principals = new HashSet<>(grant.principals().orElse(List.of()));
            Set<String> roles = new HashSet<>(grant.roles().orElse(List.of()));
            if (principals.isEmpty() && roles.isEmpty()) {
                throw new IllegalArgumentException(prefix + "principals or " + prefix + "roles must be set");
            }
            grants.add(new MirrorAccessPolicy.Grant(principals, roles, operations, mirrors));
        });
        return grants;
    }
}
