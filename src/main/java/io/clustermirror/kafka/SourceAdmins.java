package io.clustermirror.kafka;

import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.jboss.logging.Logger;

/**
 * The long-lived source Admins: one per distinct source connection (the whole client settings map, config-provider
 * references resolved), shared by every mirror that reaches its source that way, and closed when the last of them gives
 * its share back. Each kafka-clients Admin owns a network thread, so these threads grow with the distinct source
 * connections, not with the mirrors (decisions §32). An Admin's client id names no mirror, {@code
 * cluster-mirror-source-<n>} with the smallest {@code n} free; the log says which mirrors use it.
 */
public final class SourceAdmins {

    private static final Logger LOGGER = Logger.getLogger(SourceAdmins.class);
    static final String CLIENT_ID_PREFIX = "cluster-mirror-source-";
    private static final int NAMED_MIRRORS = 10;

    /** Builds the long-lived Admin for a connection, under the client id given. */
    @FunctionalInterface
    interface Factory {
        Admin build(String clientId, Map<String, String> connection);
    }

    private final Factory factory;
    private final Duration closeTimeout;
    /** Guarded by this, as are {@link Shared#holders}. */
    private final Map<Map<String, String>, Shared> byConnection = new HashMap<>();
    /** The {@code n} of Admins open or closing (a client id is reused only once its Admin is closed). */
    private final BitSet ids = new BitSet();

    SourceAdmins(Factory factory, Duration closeTimeout) {
        this.factory = factory;
        this.closeTimeout = closeTimeout;
    }

    private static final class Shared {
        final int id;
        final String clientId;
        final Admin admin;
        final String bootstrap;
        /** One entry per share given out (a mirror whose old runtime still closes holds two for a moment). */
        final List<String> holders = new ArrayList<>();

        Shared(int id, String clientId, Admin admin, String bootstrap) {
            this.id = id;
            this.clientId = clientId;
            this.admin = admin;
            this.bootstrap = bootstrap;
        }
    }

    /** One mirror's use of a shared source Admin. Closing it gives the share back (once); it never closes the Admin itself. */
    public final class Share implements AutoCloseable {
        private final Shared shared;
        private final String mirror;
        private final AtomicBoolean released = new AtomicBoolean();

        private Share(Shared shared, String mirror) {
            this.shared = shared;
            this.mirror = mirror;
        }

        /** The shared Admin; not to be closed by its users. */
        public Admin admin() {
            return shared.admin;
        }

        public String clientId() {
            return shared.clientId;
        }

        @Override
        public void close() {
            if (released.compareAndSet(false, true)) {
                release(this);
            }
        }
    }

    /**
     * A share of the Admin for this connection, built when no mirror uses one yet (the build resolves the bootstrap
     * addresses and may fail as {@code Admin.create} does).
     */
    public Share acquire(String mirror, Map<String, String> connection) {
        Map<String, String> key = Map.copyOf(connection);
        Share share;
        String others;
        synchronized (this) {
            Shared shared = byConnection.get(key);
            if (shared == null) {
                int id = ids.nextClearBit(1);
                String clientId = CLIENT_ID_PREFIX + id;
                ids.set(id);
                try {
                    shared = new Shared(
                            id,
                            clientId,
                            factory.build(clientId, key),
                            key.getOrDefault(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "?"));
                } catch (RuntimeException e) {
                    ids.clear(id);
                    throw e;
                }
                byConnection.put(key, shared);
            }
            others = describe(shared.holders);
            shared.holders.add(mirror);
            share = new Share(shared, mirror);
        }
        LOGGER.infof(
                "Mirror %s uses source Admin %s (bootstrap.servers %s), %s",
                mirror, share.shared.clientId, share.shared.bootstrap, others.isEmpty() ? "alone" : "with " + others);
        return share;
    }

    private void release(Share share) {
        Shared shared = share.shared;
        boolean last;
        String rest;
        synchronized (this) {
            shared.holders.remove(share.mirror);
            last = shared.holders.isEmpty();
            if (last) {
                byConnection.values().remove(shared);
            }
            rest = describe(shared.holders);
        }
        if (!last) {
            LOGGER.infof(
                    "Mirror %s no longer uses source Admin %s; still used by %s", share.mirror, shared.clientId, rest);
            return;
        }
        LOGGER.infof(
                "Mirror %s no longer uses source Admin %s; no mirror does: closing it", share.mirror, shared.clientId);
        try {
            shared.admin.close(closeTimeout);
        } finally {
            synchronized (this) {
                ids.clear(shared.id);
            }
        }
    }

    /** Distinct source Admins open now. */
    public synchronized int size() {
        return byConnection.size();
    }

    private static String describe(List<String> holders) {
        List<String> distinct = holders.stream().distinct().sorted().toList();
        if (distinct.size() <= NAMED_MIRRORS) {
            return String.join(", ", distinct);
        }
        return String.join(", ", distinct.subList(0, NAMED_MIRRORS)) + " and " + (distinct.size() - NAMED_MIRRORS)
                + " more";
    }
}
