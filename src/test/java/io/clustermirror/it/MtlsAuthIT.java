package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.clustermirror.testbed.Ports;
import io.clustermirror.testbed.ServiceProcess;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 12, mutual TLS over the Quarkus TLS registry, HTTPS only: a CA, the server's certificate and clients'
 * certificates made here with the JDK's keytool; roles from the client certificate's CN.
 */
class MtlsAuthIT extends ServiceIT {

    private static final String PASSWORD = "test-password";
    private static Path dir;
    private static ServiceProcess service;
    private static URI https;

    @BeforeAll
    static void startAnHttpsOnlyService() throws Exception {
        dir = Files.createTempDirectory("mtls");
        keytool(
                "-genkeypair",
                "-alias",
                "ca",
                "-keyalg",
                "RSA",
                "-keysize",
                "2048",
                "-dname",
                "CN=test-ca",
                "-ext",
                "bc:c",
                "-validity",
                "2",
                "-keystore",
                p("ca.p12"));
        keytool("-exportcert", "-alias", "ca", "-rfc", "-file", p("ca.pem"), "-keystore", p("ca.p12"));
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", p("ca.pem"), "-keystore", p("trust.p12"));
        signed("server", "CN=localhost", "SAN=dns:localhost,ip:127.0.0.1");
        signed("admin-bot", "CN=admin-bot", null);
        signed("viewer-bot", "CN=viewer-bot", null);
        // no role: a grant by its name (the subject's CN) gives it DESCRIBE on mtls-* mirrors
        signed("grant-bot", "CN=grant-bot,OU=ops,O=Example", null);
        // the same name, but not signed by the CA
        keytool(
                "-genkeypair",
                "-alias",
                "rogue",
                "-keyalg",
                "RSA",
                "-keysize",
                "2048",
                "-dname",
                "CN=admin-bot",
                "-validity",
                "2",
                "-keystore",
                p("rogue.p12"));
        Files.writeString(dir.resolve("cert-roles.properties"), "admin-bot=mirror-admin\nviewer-bot=mirror-viewer\n");

        int httpsPort = Ports.free();
        Map<String, String> props = new HashMap<>();
        props.put("mirror.http.auth.disabled", "false");
        props.put("mirror.state.topic.name", "__mirror_state_mtls");
        props.put("mirror.state.topic.num.partitions", "1");
        props.put("quarkus.tls.key-store.p12.path", p("server.p12"));
        props.put("quarkus.tls.key-store.p12.password", PASSWORD);
        props.put("quarkus.tls.trust-store.p12.path", p("trust.p12"));
        props.put("quarkus.tls.trust-store.p12.password", PASSWORD);
        props.put("quarkus.http.ssl-port", String.valueOf(httpsPort));
        props.put("quarkus.http.insecure-requests", "disabled");
        props.put("quarkus.http.auth.certificate-role-properties", p("cert-roles.properties"));
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
            answer = matrix("rogue").call("GET", "/v1/mirrors/mtls-m", null, r -> r);
        } catch (AssertionError handshakeRefused) {
            return; // the TLS handshake refused the certificate
        }
        // or the server, which only asks for a certificate, went on without it: anonymous
        AccessMatrix.assertProblem(answer, 401, "AUTHENTICATION_FAILED", "a certificate the CA did not sign");
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
        KeyStore trust = load("trust.p12");
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(identity == null ? null : load(identity + ".p12"), PASSWORD.toCharArray());
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(identity == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return new AccessMatrix(HttpClient.newBuilder().sslContext(ssl).build(), https);
    }

    private static KeyStore load(String file) throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(dir.resolve(file))) {
            store.load(in, PASSWORD.toCharArray());
        }
        return store;
    }

    /** A key pair named {@code alias} in {@code alias.p12}, its certificate signed by the test CA. */
    private static void signed(String alias, String dname, String san) throws Exception {
        keytool(
                "-genkeypair",
                "-alias",
                alias,
                "-keyalg",
                "RSA",
                "-keysize",
                "2048",
                "-dname",
                dname,
                "-validity",
                "2",
                "-keystore",
                p(alias + ".p12"));
        keytool("-certreq", "-alias", alias, "-file", p(alias + ".csr"), "-keystore", p(alias + ".p12"));
        List<String> gencert = new ArrayList<>(List.of(
                "-gencert",
                "-alias",
                "ca",
                "-infile",
                p(alias + ".csr"),
                "-outfile",
                p(alias + ".pem"),
                "-rfc",
                "-validity",
                "2",
                "-keystore",
                p("ca.p12")));
        if (san != null) {
            gencert.addAll(List.of("-ext", san));
        }
        keytool(gencert.toArray(String[]::new));
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", p("ca.pem"), "-keystore", p(alias + ".p12"));
        keytool(
                "-importcert",
                "-noprompt",
                "-alias",
                alias,
                "-file",
                p(alias + ".pem"),
                "-keystore",
                p(alias + ".p12"));
    }

    private static void keytool(String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        command.addAll(List.of("-storetype", "PKCS12", "-storepass", PASSWORD));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        if (process.waitFor() != 0) {
            throw new IllegalStateException("keytool " + String.join(" ", args) + ": " + output);
        }
    }

    private static String p(String file) {
        return dir.resolve(file).toString();
    }
}
