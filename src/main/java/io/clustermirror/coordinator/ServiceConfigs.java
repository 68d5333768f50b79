package io.clustermirror.coordinator;

import io.clustermirror.config.MirrorServiceConfig;
import io.clustermirror.fetch.ReplicationThrottle;
import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.ServiceConfigEntry;
import io.clustermirror.mirror.ServiceConfigRules;
import io.smallrye.mutiny.Uni;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * The service settings an operator changes while the service runs ({@code /v1/config}; today
 * {@code mirror.replication.throttled.rate}) and what applies them (the instance's {@link ReplicationThrottle}). A
 * value set here is written to {@code __mirror_state} before it applies, on the coordinator thread like every state
 * change, so whichever instance replays the state (this one after a restart, the next to take over) applies it too;
 * deleting it returns to the application config's value, or the default (DYNAMIC over STATIC over DEFAULT, as a Kafka
 * broker's dynamic configs).
 */
public final class ServiceConfigs {

    private static final Logger LOGGER = Logger.getLogger(ServiceConfigs.class);

    private final MirrorCoordinator coordinator;
    /** The application config's values, validated at start. */
    private final Map<String, String> statics;

    private final ReplicationThrottle throttle;
    /** Whether the last read of the settings another instance wrote failed (scheduler thread). */
    private boolean followFailing;

    /** @throws IllegalArgumentException when the application config holds a value the setting does not take */
    ServiceConfigs(MirrorCoordinator coordinator, MirrorServiceConfig config, MirrorMetrics metrics) {
        this.coordinator = coordinator;
        Map<String, String> configured = new HashMap<>();
        config.replication()
                .throttledRate()
                .ifPresent(rate -> configured.put(ServiceConfigRules.REPLICATION_THROTTLED_RATE, Long.toString(rate)));
        configured.replaceAll((key, value) -> {
            try {
                return ServiceConfigRules.validate(key, value);
            } catch (MirrorException e) {
                throw new IllegalArgumentException(e.getMessage(), e);
            }
        });
        this.statics = Map.copyOf(configured);
        this.throttle = new ReplicationThrottle(rate(Map.of()));
        metrics.registerReplicationThrottle(
                throttle, ReplicationThrottle::rate, ReplicationThrottle::throttleTimeSeconds);
    }

    /** The budget every mirror's data plane shares. */
    ReplicationThrottle throttle() {
        return throttle;
    }

    /** Every setting that changes at runtime, with its value and source. */
    public List<ServiceConfigEntry> describe() {
        coordinator.held().requireActive();
        return ServiceConfigRules.describe(dynamic(), statics);
    }

    /** Sets a value at runtime: validated, persisted, then applied; the entry as it now stands. */
    public Uni<ServiceConfigEntry> set(String key, String value) {
        String valid = ServiceConfigRules.validate(key, value);
        return coordinator.held().onCoordinator(() -> {
            coordinator.keeper().putServiceConfig(key, valid);
            apply(dynamic());
            LOGGER.infof("Service config %s set to %s at runtime", key, valid);
            return ServiceConfigRules.resolve(key, dynamic(), statics);
        });
    }

    /** Removes the runtime value (none: nothing is written); the entry as it now stands, at its configured value. */
    public Uni<ServiceConfigEntry> delete(String key) {
        ServiceConfigRules.requireKnown(key);
        return coordinator.held().onCoordinator(() -> {
            if (dynamic().containsKey(key)) {
                coordinator.keeper().putServiceConfig(key, null);
                apply(dynamic());
            }
            ServiceConfigEntry entry = ServiceConfigRules.resolve(key, dynamic(), statics);
            LOGGER.infof("Service config %s back to its %s value %s", key, entry.source(), entry.value());
            return entry;
        });
    }

    /**
     * The settings changed at runtime, every 5 s, on an instance that does not own their state partition: read from it
     * and applied, so every instance of the group follows a change within seconds (the owner applies its own at once).
     * A failed read is reported once per run of failures and tried again at the next turn.
     */
    void follow() {
        Optional<Map<String, String>> read;
        try {
            // no owner now: nothing newer to follow
            read = coordinator
                    .keeper()
                    .readServiceConfigs(
                            p -> coordinator.held().ownership().ownerOf(p).isEmpty()
                                    || coordinator.held().ownsStatePartition(p));
            followFailing = false;
        } catch (RuntimeException e) {
            if (!followFailing) {
                LOGGER.warnf(
                        "Cannot read the service settings from the state topic (%s); trying every 5 s", e.toString());
            }
            followFailing = true;
            return;
        }
        read.ifPresent(configs -> coordinator.thread().run("follow service settings", () -> {
            if (coordinator.keeper().adoptServiceConfigs(configs)) {
                apply(dynamic());
            }
        }));
    }

    /** Applies the values the state holds (after every load of it, and every change). */
    void apply(Map<String, String> dynamic) {
        long rate = rate(dynamic);
        if (rate != throttle.rate()) {
            throttle.rate(rate);
            LOGGER.infof(
                    "%s: %s",
                    ServiceConfigRules.REPLICATION_THROTTLED_RATE,
                    rate == ReplicationThrottle.UNLIMITED ? "unlimited" : rate + " bytes/s");
        }
    }

    private long rate(Map<String, String> dynamic) {
        String key = ServiceConfigRules.REPLICATION_THROTTLED_RATE;
        Map<String, String> valid = dynamic;
        if (dynamic.containsKey(key)) {
            try {
                ServiceConfigRules.validate(key, dynamic.get(key));
            } catch (MirrorException e) { // only this service writes it, validated: a record from elsewhere
                LOGGER.errorf("__mirror_state holds %s; the configured value applies instead", e.getMessage());
                valid = Map.of();
            }
        }
        return Long.parseLong(ServiceConfigRules.resolve(key, valid, statics).value());
    }

    private Map<String, String> dynamic() {
        return coordinator.keeper().state().serviceConfigs();
    }
}
