package io.clustermirror.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A fake broker that answers every request with a wrong correlation id kills a Kafka Admin client's network thread;
 * the self-healing Admin notices on its next call and builds a new client.
 */
class SelfHealingAdminTest {

    private final FakeBroker broker = new FakeBroker();
    private final List<String> replacements = new CopyOnWriteArrayList<>();
    private Admin admin;

    @AfterEach
    void close() throws IOException {
        if (admin != null) {
            admin.close(Duration.ZERO);
        }
        broker.close();
    }

    @Test
    void aPlainAdminWhoseThreadDiedShouldFailEveryCallAfterwards() throws Exception {
        // the defect being mended: kafka-clients never builds the client again
        try (Admin plain = Admin.create(props("plain-admin"))) {
            plain.describeCluster().clusterId();
            await().atMost(Duration.ofSeconds(20)).until(() -> !threadAlive("plain-admin"));

            assertThatThrownBy(() -> plain.describeCluster().clusterId().get(5, TimeUnit.SECONDS))
                    .hasMessageContaining("The AdminClient thread has exited");
        }
    }

    @Test
    void anAdminWhoseThreadDiedShouldBeReplacedOnItsNextCall() throws Exception {
        admin = SelfHealingAdmin.create(
                "healing-admin",
                () -> Admin.create(props("healing-admin")),
                (client, reason) -> replacements.add(client + ": " + reason));
        admin.describeCluster().clusterId();
        await().atMost(Duration.ofSeconds(20)).until(() -> !threadAlive("healing-admin"));
        int connections = broker.connections.get();
        // the first client's thread may have died before the first call already (the fake broker answers its first
        // request wrongly), and that call then replaced it: count from here
        int replaced = replacements.size();

        admin.describeCluster().clusterId(); // a new client, which connects again (and meets the fake broker again)

        assertThat(replacements.subList(replaced, replacements.size()))
                .containsExactly(
                        "healing-admin: its network thread kafka-admin-client-thread | healing-admin has died");
        await().atMost(Duration.ofSeconds(20)).until(() -> broker.connections.get() > connections);
        assertThat(SelfHealingAdmin.of(admin).failure()).isNull();
    }

    @Test
    void anAdminWhoseThreadDiedBeforeItWasSeenShouldStillBeReplaced() throws Exception {
        // the race a loaded machine hit: the client's thread met the fake broker and exited between the client's build
        // and the look for its thread; the factory waits for that here, the first time
        AtomicBoolean first = new AtomicBoolean(true);
        admin = SelfHealingAdmin.create(
                "early-admin",
                () -> {
                    Admin built = Admin.create(props("early-admin"));
                    if (first.getAndSet(false)) {
                        await().atMost(Duration.ofSeconds(20)).until(() -> !threadAlive("early-admin"));
                    }
                    return built;
                },
                (client, reason) -> replacements.add(client + ": " + reason));

        admin.describeCluster();

        assertThat(replacements)
                .containsExactly("early-admin: its network thread kafka-admin-client-thread | early-admin has died");
    }

    @Test
    void anAdminThatCannotBeBuiltAgainShouldSaySoUntilItCan() {
        AtomicBoolean buildable = new AtomicBoolean(true);
        admin = SelfHealingAdmin.create(
                "unbuildable-admin",
                () -> {
                    if (!buildable.get()) {
                        throw new IllegalStateException("no resolvable bootstrap urls");
                    }
                    return Admin.create(props("unbuildable-admin"));
                },
                (client, reason) -> replacements.add(client));
        admin.describeCluster().clusterId();
        await().atMost(Duration.ofSeconds(20)).until(() -> !threadAlive("unbuildable-admin"));
        buildable.set(false);

        assertThatThrownBy(() -> admin.describeCluster()).hasMessageContaining("no resolvable bootstrap urls");
        assertThat(SelfHealingAdmin.of(admin).failure())
                .contains("unbuildable-admin")
                .contains("has died and could not be built again")
                .contains("no resolvable bootstrap urls");

        buildable.set(true);
        admin.describeCluster();
        assertThat(SelfHealingAdmin.of(admin).failure()).isNull();
    }

    @Test
    void closeShouldCloseTheClientAndRefuseFurtherCalls() {
        admin = SelfHealingAdmin.create("closing-admin", () -> Admin.create(props("closing-admin")), (c, r) -> {});

        admin.close(Duration.ZERO);

        await().atMost(Duration.ofSeconds(20)).until(() -> !threadAlive("closing-admin"));
        assertThatThrownBy(() -> admin.describeCluster()).hasMessageContaining("is closed");
        assertThat(replacements).isEmpty();
    }

    private Map<String, Object> props(String clientId) {
        return Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                "localhost:" + broker.port(),
                AdminClientConfig.CLIENT_ID_CONFIG,
                clientId,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG,
                5000,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
                5000);
    }

    private static boolean threadAlive(String clientId) {
        return Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().equals(SelfHealingAdmin.THREAD_PREFIX + clientId) && t.isAlive());
    }

    /** Reads each request and answers it with a correlation id one higher than the request's. */
    private static final class FakeBroker implements AutoCloseable {
        private final ServerSocket server;
        final AtomicInteger connections = new AtomicInteger();

        FakeBroker() {
            try {
                server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            Thread acceptor = new Thread(this::serve, "fake-broker");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        int port() {
            return server.getLocalPort();
        }

        private void serve() {
            while (!server.isClosed()) {
                try {
                    Socket socket = server.accept();
                    connections.incrementAndGet();
                    Thread connection = new Thread(() -> answer(socket), "fake-broker-connection");
                    connection.setDaemon(true);
                    connection.start();
                } catch (IOException e) {
                    return;
                }
            }
        }

        private static void answer(Socket socket) {
            try (socket;
                    DataInputStream in = new DataInputStream(socket.getInputStream());
                    DataOutputStream out = new DataOutputStream(socket.getOutputStream())) {
                while (true) {
                    byte[] request = new byte[in.readInt()];
                    in.readFully(request);
                    int correlationId = ByteBuffer.wrap(request).getInt(4); // after api key and version
                    out.writeInt(8);
                    out.writeInt(correlationId + 1);
                    out.writeInt(0);
                    out.flush();
                }
            } catch (IOException e) {
                // the client hung up
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
    }
}
