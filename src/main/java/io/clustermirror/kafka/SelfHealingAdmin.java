package io.clustermirror.kafka;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.jboss.logging.Logger;

/**
 * An {@link Admin} that replaces its Kafka Admin client once that client's network thread has died. The thread dies on
 * anything kafka-clients does not catch (an {@code OutOfMemoryError}, or a {@code CorrelationIdMismatchException} from
 * a broken or fake peer), and from then on every call fails with "The AdminClient thread has exited" until a restart.
 * Each call here first looks at the thread (a field read); when it has died, the dead client is closed and a new one
 * built before the call goes on. Holders keep the same {@code Admin} reference throughout.
 *
 * <p>When a new client cannot be built, the call fails with the reason, and {@link #failure()} says so (readiness reports
 * it) until a later call succeeds in building one.
 */
public final class SelfHealingAdmin implements InvocationHandler {

    private static final Logger LOGGER = Logger.getLogger(SelfHealingAdmin.class);
    /** The name kafka-clients gives an Admin's network thread, followed by its client id. */
    static final String THREAD_PREFIX = "kafka-admin-client-thread | ";

    /** Told once per replacement, with the client's name and the reason. */
    public interface Replacements {
        void replaced(String client, String reason);
    }

    private final String clientId;
    private final Supplier<Admin> factory;
    private final Replacements replacements;
    private Admin current;
    private Thread thread;
    private volatile String failure;
    private volatile boolean closed;
    private Runnable onClose = () -> {};

    private SelfHealingAdmin(String clientId, Supplier<Admin> factory, Replacements replacements) {
        this.clientId = clientId;
        this.factory = factory;
        this.replacements = replacements;
    }

    /**
     * Builds the first client now (failing as {@code factory} fails) and returns the self-healing view of it.
     *
     * @param clientId the {@code client.id} that {@code factory} gives its clients: it names their network thread
     */
    public static Admin create(String clientId, Supplier<Admin> factory, Replacements replacements) {
        SelfHealingAdmin handler = new SelfHealingAdmin(clientId, factory, replacements);
        handler.build();
        return (Admin) Proxy.newProxyInstance(Admin.class.getClassLoader(), new Class<?>[] {Admin.class}, handler);
    }

    /** The handler behind a self-healing Admin, or null for any other Admin. */
    public static SelfHealingAdmin of(Admin admin) {
        return Proxy.isProxyClass(admin.getClass()) && Proxy.getInvocationHandler(admin) instanceof SelfHealingAdmin h
                ? h
                : null;
    }

    /** Why the last attempt to replace a dead client failed, or null while the client is live. */
    public String failure() {
        return failure;
    }

    /** The live client, replacing a dead one first. */
    synchronized Admin live() {
        if (closed) {
            throw new IllegalStateException("Admin client " + clientId + " is closed");
        }
        if (thread != null && !thread.isAlive()) {
            String reason = "its network thread " + thread.getName() + " has died";
            closeQuietly(current);
            current = null;
            thread = null;
            try {
                build();
            } catch (RuntimeException e) {
                failure = "Admin client " + clientId + " " + reason + " and could not be built again: " + e;
                throw e;
            }
            LOGGER.warnf("Admin client %s: %s; replaced it with a new one", clientId, reason);
            replacements.replaced(clientId, reason);
        } else if (current == null) {
            build(); // an earlier replacement failed: try again
        }
        failure = null;
        return current;
    }

    private void build() {
        Set<Thread> before = adminThreads();
        Admin admin = factory.get();
        Set<Thread> started = adminThreads();
        started.removeAll(before);
        current = admin;
        // kafka-clients starts the thread in the constructor: the one new thread of that name is this client's. None
        // means it has exited already (a peer that answers wrongly at once, seen on a loaded machine between the two
        // looks): a thread never started stands for it, dead, so the next call replaces the client
        thread = started.size() == 1
                ? started.iterator().next()
                : started.isEmpty() ? new Thread(() -> {}, THREAD_PREFIX + clientId) : null;
        if (thread == null) {
            LOGGER.warnf(
                    "Admin client %s: its network thread could not be told apart (%d new threads of that name); a dead"
                            + " one will not be replaced",
                    clientId, started.size());
        }
    }

    private Set<Thread> adminThreads() {
        ThreadGroup root = Thread.currentThread().getThreadGroup();
        while (root.getParent() != null) {
            root = root.getParent();
        }
        Thread[] threads = new Thread[root.activeCount() * 2 + 16];
        int count = root.enumerate(threads, true);
        Set<Thread> named = new HashSet<>();
        for (int i = 0; i < count; i++) {
            if (threads[i].getName().equals(THREAD_PREFIX + clientId)) {
                named.add(threads[i]);
            }
        }
        return named;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        switch (method.getName()) {
            case "close" -> {
                close(args == null || args.length == 0 ? null : (Duration) args[0]);
                return null;
            }
            case "equals" -> {
                return proxy == args[0];
            }
            case "hashCode" -> {
                return System.identityHashCode(proxy);
            }
            case "toString" -> {
                return "SelfHealingAdmin[" + clientId + "]";
            }
            default -> {
                try {
                    return method.invoke(live(), args);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
            }
        }
    }

    /** Runs once the Admin is closed (its builder stops watching it). */
    synchronized void onClose(Runnable action) {
        onClose = action;
    }

    private synchronized void close(Duration timeout) {
        closed = true;
        onClose.run();
        if (current != null) {
            if (timeout == null) {
                current.close();
            } else {
                current.close(timeout);
            }
            current = null;
        }
    }

    private static void closeQuietly(Admin admin) {
        try {
            admin.close(Duration.ZERO);
        } catch (RuntimeException e) {
            LOGGER.debugf("Closing a dead Admin client: %s", e.toString());
        }
    }
}
