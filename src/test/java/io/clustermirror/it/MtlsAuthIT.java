package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.clustermirror.testbed.Ports;
import io.clustermirror.testbed.ServiceProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 12, mutual TLS over the Quarkus TLS registry, HTTPS only: a CA, the server's certificate and clients'
 * certificates made here with the JDK's keytool; roles from the client certificate's CN.
 */
class MtlsAuthIT extends ServiceIT {

    private static TestCertificates certs;
    private static ServiceProcess service;
    private static URI https;

    @BeforeAll
    static void startAnHttpsOnlyService() throws Exception {
        certs = TestCertificates.withCa();
        certs.signed("server", "CN=localhost", "SAN=dns:localhost,ip:127.0.0.1");
        certs.signed("admin-bot", "CN=admin-bot", null);
        certs.signed("viewer-bot", "CN=viewer-bot", null);
        // no role: a grant by its name (the subject's CN) gives it DESCRIBE on mtls-* mirrors
        certs.signed("grant-bot", "CN=grant-bot,OU=ops,O=Example", null);
        // the same name, but not signed by the CA
        certs.selfSigned("rogue", "CN=admin-bot");
        Path roles = Path.of(certs.path("cert-roles.properties"));
        Files.writeString(roles, "admin-bot=mirror-admin\nviewer-bot=mirror-viewer\n");

        int httpsPort = Ports.free();
        Map<String, String> props = new HashMap<>();
        props.put("mirror.http.auth.disabled", "false");
        props.put("mirror.state.topic.name", "__mirror_state_mtls");
        props.put("mirror.state.topic.num.partitions", "1");
        props.put("quarkus.tls.key-store.p12.path", certs.path("server.p12"));
        props.put("quarkus.tls.key-store.p12.password", TestCertificates.PASSWORD);
        props.put("quarkus.tls.trust-store.p12.path", certs.path("trust.p12"));
        props.put("quarkus.tls.trust-store.p12.password", TestCertificates.PASSWORD);
        props.put("quarkus.http.ssl-port", String.valueOf(httpsPort));
        props.put("quarkus.http.insecure-requests", "disabled");
        props.put("quarkus.http.auth.certificate-role-properties", roles.toString());
        props.put("mirror.http.auth.grants.bots.principals", "grant-bot");
        props.put("mirror.http.auth.grants.bots.operations", "DESCRIBE");
        props.put("mirror.http.auth.grants.bots.mirrors", "mtls-.*");
        service = bed.newService("mtls-auth", props).launch();
        https = URI.create("https://localhost:" + httpsPort);
        AccessMatrix admin = matrix("admin-bot");
        await("HTTPS ready")
                .atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(300))
                .until(() -> {
                    if (!service.isAlive()) {
                        throw new IllegalStateException("exited:\n" + service.log());
                    }
                    try {
                        return admin.call("GET", "/q/health/ready", null, r -> r)
                                        .status()
                                == 200;
                    } catch (AssertionError notYet) {
                        return false;
                    }
                });
        admin.createMirror("mtls-m", bed.source().bootstrapServers(), Map.of(), r -> r);
    }

    @AfterAll
    static void stopIt() {
        service.stop();
    }

    @Test
    void theCertificatesNameShouldGiveItsRoleOnEveryEndpoint() throws Exception {
        matrix("admin-bot")
                .assertCaller("admin-bot", Set.of("CREATE", "DESCRIBE", "ALTER", "DELETE"), "mtls-m", r -> r);
        matrix("viewer-bot").assertCaller("viewer-bot", Set.of("DESCRIBE"), "mtls-m", r -> r);
        matrix("grant-bot").assertCaller("grant-bot", Set.of("DESCRIBE"), "mtls-m", r -> r);
        assertThat(service.log())
                .as("the certificate's CN names the caller")
                .contains("principal=admin-bot operation=DELETE mirror=missing-mirror");
    }

    @Test
    void noCertificateShouldBe401AndAnUntrustedOneShouldNotGetIn() throws Exception {
        matrix(null).assertUnauthenticated("no certificate", "mtls-m", r -> r);
        AccessMatrix.Answer answer;
        try {
            // over TLS 1.2 the server refuses the certificate inside the handshake; TLS 1.3 sends its alert after the
            // client's side of it, which the client may then see as a reset
            answer = new AccessMatrix(
                            HttpClient.newBuilder()
                                    .sslContext(certs.client("rogue"))
                                    .sslParameters(new SSLParameters(null, new String[] {"TLSv1.2"}))
                                    .build(),
                            https)
                    .call("GET", "/v1/mirrors/mtls-m", null, r -> r);
        } catch (AssertionError failed) {
            // the TLS handshake refused the certificate; a refused connection, a reset or a dead service is no refusal
            assertThat(causes(failed.getCause()))
                    .as("why the call with a certificate the CA did not sign failed: %s", failed.getMessage())
                    .anyMatch(MtlsAuthIT::isTlsRefusal);
            assertThat(service.isAlive())
                    .as("the service, after refusing the certificate")
                    .isTrue();
            return;
        }
        // or the server, which only asks for a certificate, went on without it: anonymous
        AccessMatrix.assertProblem(answer, 401, "AUTHENTICATION_FAILED", "a certificate the CA did not sign");
    }

    /**
     * A TLS handshake refusal as the client sees it: an {@link SSLHandshakeException}, or the server's fatal alert
     * (bad_certificate, certificate_unknown...), which TLS 1.3 may deliver after the client's side of the handshake.
     */
    private static boolean isTlsRefusal(Throwable t) {
        return t instanceof SSLHandshakeException
                || (t instanceof SSLException
                        && t.getMessage() != null
                        && t.getMessage().contains("fatal alert"));
    }

    private static List<Throwable> causes(Throwable t) {
        List<Throwable> chain = new ArrayList<>();
        for (Throwable c = t; c != null && !chain.contains(c); c = c.getCause()) {
            chain.add(c);
        }
        return chain;
    }

    @Test
    void plainHttpShouldNotBeServed() {
        HttpClient plain = HttpClient.newHttpClient();
        assertThatThrownBy(() -> plain.send(
                        HttpRequest.newBuilder(service.baseUri().resolve("/v1/mirrors"))
                                .timeout(Duration.ofSeconds(5))
                                .build(),
                        HttpResponse.BodyHandlers.ofString()))
                .as("HTTPS only: nothing answers on the HTTP port")
                .isNotNull();
    }

    /** A client presenting {@code identity}'s certificate (none when null), trusting the test CA. */
    private static AccessMatrix matrix(String identity) throws Exception {
        return new AccessMatrix(
                HttpClient.newBuilder().sslContext(certs.client(identity)).build(), https);
    }
}
