package io.clustermirror.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.KafkaException;
import org.junit.jupiter.api.Test;

/** Mirrors that reach their source the same way share one source Admin, closed with the last of them. */
class SourceAdminsTest {

    private static final Map<String, String> PLAIN = Map.of("bootstrap.servers", "source:9092");
    private static final Map<String, String> ALICE = Map.of(
            "bootstrap.servers", "source:9092",
            "security.protocol", "SASL_PLAINTEXT",
            "sasl.mechanism", "PLAIN",
            "sasl.jaas.config", "... username=\"alice\" password=\"a\";");
    private static final Map<String, String> BOB = Map.of(
            "bootstrap.servers", "source:9092",
            "security.protocol", "SASL_PLAINTEXT",
            "sasl.mechanism", "PLAIN",
            "sasl.jaas.config", "... username=\"bob\" password=\"b\";");

    private final List<FakeAdmin> built = new ArrayList<>();
    private final SourceAdmins admins = new SourceAdmins(
            (clientId, connection) -> {
                FakeAdmin admin = new FakeAdmin(clientId, connection);
                built.add(admin);
                return admin.proxy();
            },
            Duration.ofSeconds(1));

    @Test
    void mirrorsWithEqualConnectionsShouldShareOneAdminWhoseClientIdNamesNoMirror() {
        SourceAdmins.Share a = admins.acquire("a", PLAIN);
        SourceAdmins.Share b = admins.acquire("b", Map.of("bootstrap.servers", "source:9092"));

        assertThat(built).hasSize(1);
        assertThat(b.admin()).isSameAs(a.admin());
        assertThat(a.clientId()).isEqualTo("cluster-mirror-source-1");
        assertThat(built.get(0).connection).isEqualTo(PLAIN);
    }

    @Test
    void anyDifferenceInTheConnectionShouldGetAnAdminOfItsOwn() {
        // credentials only
        SourceAdmins.Share alice = admins.acquire("a", ALICE);
        SourceAdmins.Share bob = admins.acquire("b", BOB);
        SourceAdmins.Share plain = admins.acquire("c", PLAIN);

        assertThat(built).hasSize(3);
        assertThat(List.of(alice.clientId(), bob.clientId(), plain.clientId()))
                .containsExactly("cluster-mirror-source-1", "cluster-mirror-source-2", "cluster-mirror-source-3");
        assertThat(admins.size()).isEqualTo(3);
    }

    @Test
    void theAdminShouldCloseWithTheLastShareGivenBackNotBefore() {
        SourceAdmins.Share a = admins.acquire("a", PLAIN);
        SourceAdmins.Share b = admins.acquire("b", PLAIN);

        a.close();
        a.close(); // a share is given back once
        assertThat(built.get(0).closes.get()).isZero();

        b.close();
        assertThat(built.get(0).closes.get()).isEqualTo(1);
        assertThat(admins.size()).isZero();
    }

    @Test
    void aMirrorWhoseOldRuntimeStillClosesShouldKeepTheAdminOpenThroughTheSwap() {
        SourceAdmins.Share old = admins.acquire("a", PLAIN);
        SourceAdmins.Share next = admins.acquire("a", PLAIN);

        old.close();

        assertThat(built.get(0).closes.get()).isZero();
        assertThat(next.admin()).isSameAs(old.admin());
    }

    @Test
    void aClosedAdminsClientIdShouldBeTakenAgainAndAnOpenOnesNever() {
        SourceAdmins.Share first = admins.acquire("a", PLAIN);
        SourceAdmins.Share second = admins.acquire("b", ALICE);
        first.close();

        SourceAdmins.Share third = admins.acquire("c", BOB);

        assertThat(built).hasSize(3);
        assertThat(third.clientId()).isEqualTo("cluster-mirror-source-1");
        assertThat(second.clientId()).isEqualTo("cluster-mirror-source-2");
    }

    @Test
    void anAdminThatCannotBeBuiltShouldFailTheAcquireAndLeaveNothingBehind() {
        SourceAdmins failing = new SourceAdmins(
                (clientId, connection) -> {
                    throw new KafkaException("No resolvable bootstrap urls given in bootstrap.servers");
                },
                Duration.ofSeconds(1));

        assertThatThrownBy(() -> failing.acquire("a", PLAIN))
                .isInstanceOf(KafkaException.class)
                .hasMessageContaining("bootstrap");
        assertThat(failing.size()).isZero();
    }

    /** An Admin that records its connection and its closes; any other call fails the test. */
    private static final class FakeAdmin {
        final String clientId;
        final Map<String, String> connection;
        final AtomicInteger closes = new AtomicInteger();

        FakeAdmin(String clientId, Map<String, String> connection) {
            this.clientId = clientId;
            this.connection = connection;
        }

        Admin proxy() {
            return (Admin) Proxy.newProxyInstance(
                    Admin.class.getClassLoader(), new Class<?>[] {Admin.class}, (proxy, method, args) -> {
                        switch (method.getName()) {
                            case "close" -> {
                                closes.incrementAndGet();
                                return null;
                            }
                            case "hashCode" -> {
                                return System.identityHashCode(proxy);
                            }
                            case "equals" -> {
                                return proxy == args[0];
                            }
                            case "toString" -> {
                                return "FakeAdmin[" + clientId + "]";
                            }
                            default -> throw new AssertionError("unexpected call " + method.getName());
                        }
                    });
        }
    }
}
