package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.testbed.Ports;
import io.clustermirror.testbed.ServiceProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The CLI's credentials against a protected service: HTTP Basic (password from a file), a bearer JWT (from a file),
 * a client certificate (mTLS), all over HTTPS with the service's CA given as a PEM trust store; wrong or missing
 * credentials are one line naming the service's errorCode, and an untrusted server certificate one line too.
 */
class KafkaClusterMirrorsAuthIT extends ServiceIT {

    private static final String ISSUER = "https://issuer.cli.cluster-mirror.test";
    private static ServiceProcess service;
    private static TestCertificates certs;
    private static KeyPair key;
    private static String https;
    private static Path dir;

    @BeforeAll
    static void startAProtectedService() throws Exception {
        dir = Files.createTempDirectory("cli-auth");
        certs = TestCertificates.withCa();
        certs.signed("server", "CN=localhost", "SAN=dns:localhost,ip:127.0.0.1");
        certs.signed("admin-bot", "CN=admin-bot", null);
        Path roles = Files.writeString(dir.resolve("cert-roles.properties"), "admin-bot=mirror-admin\n");
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        key = generator.generateKeyPair();
        Path publicKey = Files.writeString(
                dir.resolve("jwt-public.pem"),
                "-----BEGIN PUBLIC KEY-----\n"
                        + Base64.getMimeEncoder().encodeToString(key.getPublic().getEncoded())
                        + "\n-----END PUBLIC KEY-----\n");

        int httpsPort = Ports.free();
        Map<String, String> props = new HashMap<>();
        props.put("mirror.http.auth.disabled", "false");
        props.put("mirror.state.topic.name", "__mirror_state_cli_auth");
        props.put("mirror.state.topic.num.partitions", "1");
        props.put("quarkus.security.users.embedded.plain-text", "true");
        props.put("quarkus.security.users.embedded.users.admin", "admin-password");
        props.put("quarkus.security.users.embedded.roles.admin", "mirror-admin");
        props.put("quarkus.security.users.embedded.users.viewer", "viewer-password");
        props.put("quarkus.security.users.embedded.roles.viewer", "mirror-viewer");
        props.put("mp.jwt.verify.publickey.location", publicKey.toUri().toString());
        props.put("mp.jwt.verify.issuer", ISSUER);
        props.put("smallrye.jwt.path.groups", "realm_access/roles");
        props.put("quarkus.tls.key-store.p12.path", certs.path("server.p12"));
        props.put("quarkus.tls.key-store.p12.password", TestCertificates.PASSWORD);
        props.put("quarkus.tls.trust-store.p12.path", certs.path("trust.p12"));
        props.put("quarkus.tls.trust-store.p12.password", TestCertificates.PASSWORD);
        props.put("quarkus.http.ssl-port", String.valueOf(httpsPort));
        props.put("quarkus.http.auth.certificate-role-properties", roles.toString());
        service = bed.newService("cli-auth", props).start();
        https = "https://localhost:" + httpsPort;
    }

    @AfterAll
    static void stopIt() {
        if (service != null) {
            service.stop();
        }
    }

    private static Path file(String name, String content) throws Exception {
        return Files.writeString(dir.resolve(name), content + "\n");
    }

    /** The CLI in this JVM against the protected service over HTTPS, trusting its CA (a PEM file). */
    private static Cli.Run cli(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--url", https, "--truststore", certs.path("ca.pem")));
        return Cli.inProcess(all.toArray(String[]::new));
    }

    @Test
    void basicCredentialsFromAPasswordFileShouldCreateAndList() throws Exception {
        String mirror = uniqueName("cli-basic");
        Path config =
                file("basic.properties", "bootstrap.servers=" + bed.source().bootstrapServers());
        Path password = file("admin.password", "admin-password");

        Cli.Run created = cli(
                "--create",
                "--mirror",
                mirror,
                "--mirror-config",
                config.toString(),
                "--user",
                "admin",
                "--password-file",
                password.toString());
        // the same connection from a --command-config file, as the KIP's tool takes its client settings
        Path client = file(
                "client.properties",
                "url=" + https + "\ntruststore=" + certs.path("ca.pem") + "\nuser=admin\npassword-file=" + password);
        Cli.Run list = Cli.inProcess("--list", "--command-config", client.toString());

        assertThat(created.exit()).as(created.toString()).isZero();
        assertThat(list.exit()).as(list.toString()).isZero();
        assertThat(list.out()).contains(mirror);
    }

    @Test
    void wrongOrMissingCredentialsShouldBeOneLineNamingTheErrorCode() throws Exception {
        Cli.Run wrong = cli(
                "--list",
                "--user",
                "admin",
                "--password-file",
                file("wrong", "not-it").toString());
        Cli.Run none = cli("--list");
        Cli.Run expired = cli(
                "--list", "--token", JwtAuthIT.token(key.getPrivate(), ISSUER, "ops", List.of("mirror-admin"), -600));

        for (Cli.Run run : List.of(wrong, none, expired)) {
            assertThat(run.exit()).as(run.toString()).isEqualTo(1);
            assertThat(run.err().lines())
                    .as(run.toString())
                    .singleElement()
                    .satisfies(line -> assertThat(line).startsWith("Error: AUTHENTICATION_FAILED (401): "));
            assertThat(run.out()).isEmpty();
        }
    }

    @Test
    void aCallerWithoutTheOperationShouldBeOneLineNamingTheErrorCode() throws Exception {
        Path config =
                file("viewer.properties", "bootstrap.servers=" + bed.source().bootstrapServers());

        Cli.Run run = cli(
                "--create",
                "--mirror",
                uniqueName("cli-viewer"),
                "--mirror-config",
                config.toString(),
                "--user",
                "viewer",
                "--password-file",
                file("viewer.password", "viewer-password").toString());

        assertThat(run.exit()).as(run.toString()).isEqualTo(1);
        assertThat(run.err()).startsWith("Error: CLUSTER_MIRROR_AUTHORIZATION_FAILED (403): ");
    }

    @Test
    void aBearerTokenFromAFileShouldBeAccepted() throws Exception {
        Path token = file("token", JwtAuthIT.token(key.getPrivate(), ISSUER, "ops", List.of("mirror-viewer"), 300));

        Cli.Run run = cli("--list", "--token-file", token.toString());

        assertThat(run.exit()).as(run.toString()).isZero();
        assertThat(run.outLines().get(0)).startsWith("MIRROR ");
    }

    @Test
    void aClientCertificateShouldBeAccepted() throws Exception {
        Cli.Run run = cli(
                "--list",
                "--keystore",
                certs.path("admin-bot.p12"),
                "--keystore-password-file",
                file("keystore.password", TestCertificates.PASSWORD).toString());

        assertThat(run.exit()).as(run.toString()).isZero();
        assertThat(run.outLines().get(0)).startsWith("MIRROR ");
    }

    @Test
    void aServerCertificateTheCliDoesNotTrustShouldBeOneLineAndExit3() throws Exception {
        Cli.Run run = Cli.inProcess(
                "--list",
                "--url",
                https,
                "--user",
                "admin",
                "--password-file",
                file("admin2.password", "admin-password").toString());

        assertThat(run.exit()).as(run.toString()).isEqualTo(3);
        assertThat(run.err()).startsWith("Error: cannot reach " + https + ": TLS failed: ");
        assertThat(run.err().lines()).hasSize(1);
    }
}
