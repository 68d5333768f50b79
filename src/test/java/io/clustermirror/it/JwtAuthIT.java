package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.testbed.Ports;
import io.clustermirror.testbed.ServiceProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.Signature;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 12, bearer JWTs: signed here with an RSA key made for the test, verified by the service against its public key
 * and issuer, roles read from a nested claim (Keycloak's {@code realm_access.roles}); every call over HTTPS, the
 * service's certificate and key given as PEM files through the Quarkus TLS registry.
 */
class JwtAuthIT extends ServiceIT {

    private static final String ISSUER = "https://issuer.cluster-mirror.test";
    private static ServiceProcess service;
    private static AccessMatrix matrix;
    private static KeyPair key;

    @BeforeAll
    static void startAServiceThatTrustsTheTestKey() throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        key = generator.generateKeyPair();
        Path pem = Files.createTempFile("jwt-public", ".pem");
        Files.writeString(
                pem,
                "-----BEGIN PUBLIC KEY-----\n"
                        + Base64.getMimeEncoder().encodeToString(key.getPublic().getEncoded())
                        + "\n-----END PUBLIC KEY-----\n");
        Map<String, String> props = new HashMap<>();
        props.put("mirror.http.auth.disabled", "false");
        props.put("mirror.state.topic.name", "__mirror_state_jwt");
        props.put("mirror.state.topic.num.partitions", "1");
        props.put("mp.jwt.verify.publickey.location", pem.toUri().toString());
        props.put("mp.jwt.verify.issuer", ISSUER);
        props.put("smallrye.jwt.path.groups", "realm_access/roles");
        // served over HTTPS from PEM files, as an operator hands them over (no client certificates: tokens only)
        TestCertificates certs = TestCertificates.withCa();
        certs.signed("server", "CN=localhost", "SAN=dns:localhost,ip:127.0.0.1");
        List<Path> serverPem = certs.pem("server");
        int httpsPort = Ports.free();
        props.put("quarkus.tls.key-store.pem.0.cert", serverPem.get(0).toString());
        props.put("quarkus.tls.key-store.pem.0.key", serverPem.get(1).toString());
        props.put("quarkus.http.ssl-port", String.valueOf(httpsPort));
        service = bed.newService("jwt-auth", props).start();
        matrix = new AccessMatrix(
                HttpClient.newBuilder().sslContext(certs.client(null)).build(),
                URI.create("https://localhost:" + httpsPort));
        matrix.createMirror(
                "jwt-m",
                bed.source().bootstrapServers(),
                Map.of(),
                bearer(token(key.getPrivate(), ISSUER, "ops", List.of("mirror-admin"), 300)));
    }

    @AfterAll
    static void stopIt() {
        service.stop();
    }

    @Test
    void everyRoleShouldReachExactlyItsOperationsOnEveryEndpoint() {
        matrix.assertCaller("viewer", Set.of("DESCRIBE"), "jwt-m", as("v", "mirror-viewer"));
        matrix.assertCaller("operator", Set.of("DESCRIBE", "ALTER"), "jwt-m", as("o", "mirror-operator"));
        matrix.assertCaller("admin", Set.of("CREATE", "DESCRIBE", "ALTER", "DELETE"), "jwt-m", as("a", "mirror-admin"));
        matrix.assertCaller("a token without roles", Set.of(), "jwt-m", as("n"));
    }

    @Test
    void tokensTheServiceCannotTrustShouldBe401() throws Exception {
        matrix.assertUnauthenticated("no token", "jwt-m", r -> r);
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        matrix.assertUnauthenticated(
                "another key",
                "jwt-m",
                bearer(token(generator.generateKeyPair().getPrivate(), ISSUER, "x", List.of("mirror-admin"), 300)));
        matrix.assertUnauthenticated(
                "another issuer",
                "jwt-m",
                bearer(token(key.getPrivate(), "https://elsewhere", "x", List.of("mirror-admin"), 300)));
        matrix.assertUnauthenticated(
                "expired", "jwt-m", bearer(token(key.getPrivate(), ISSUER, "x", List.of("mirror-admin"), -600)));
        matrix.assertUnauthenticated("garbage", "jwt-m", bearer("not.a.jwt"));
        assertThat(matrix.call("GET", "/v1/mirrors", null, r -> r).challenges()).contains("Bearer");
    }

    @Test
    void twoAuthorizationHeadersShouldAuthenticateWithTheFirst() {
        UnaryOperator<HttpRequest.Builder> viewerThenJunk =
                r -> as("jwt-viewer", "mirror-viewer").apply(r).header("Authorization", "Bearer not.a.jwt");

        AccessMatrix.Answer describe = matrix.call("GET", "/v1/mirrors/jwt-m", null, viewerThenJunk);
        assertThat(describe.status()).as(describe.body()).isEqualTo(200);
    }

    @Test
    void aBearerFirstAndABasicSecondShouldAuthenticateWithTheBearer() {
        // Quarkus' Basic mechanism reads a Basic header wherever it is: the second header decided (401 here)
        UnaryOperator<HttpRequest.Builder> viewerThenBasic = r -> as("jwt-viewer", "mirror-viewer")
                .apply(r)
                .header(
                        "Authorization",
                        "Basic " + Base64.getEncoder().encodeToString("nobody:wrong".getBytes(StandardCharsets.UTF_8)));

        AccessMatrix.Answer describe = matrix.call("GET", "/v1/mirrors/jwt-m", null, viewerThenBasic);
        assertThat(describe.status()).as(describe.body()).isEqualTo(200);
        AccessMatrix.Answer delete = matrix.call("DELETE", "/v1/mirrors/jwt-m", null, viewerThenBasic);
        assertThat(delete.status()).as(delete.body()).isEqualTo(403);
    }

    @Test
    void theTokensPrincipalShouldBeAudited() {
        matrix.call(
                "POST",
                "/v1/mirrors/jwt-m/topics:resume",
                "{\"topics\":[\"t\"]}",
                as("jwt-operator", "mirror-operator"));
        assertThat(service.log()).contains("principal=jwt-operator operation=ALTER mirror=jwt-m topics=t outcome=");
    }

    private static UnaryOperator<HttpRequest.Builder> as(String subject, String... roles) {
        return bearer(token(key.getPrivate(), ISSUER, subject, List.of(roles), 300));
    }

    private static UnaryOperator<HttpRequest.Builder> bearer(String token) {
        return r -> r.header("Authorization", "Bearer " + token);
    }

    /** An RS256 JWT: what an OIDC provider issues, signed with the JDK. */
    static String token(PrivateKey signer, String issuer, String subject, List<String> roles, long expiresInSeconds) {
        try {
            long now = System.currentTimeMillis() / 1000;
            Map<String, Object> claims = new HashMap<>();
            claims.put("iss", issuer);
            claims.put("sub", subject);
            claims.put("upn", subject);
            claims.put("iat", now - 5);
            claims.put("exp", now + expiresInSeconds);
            claims.put("realm_access", Map.of("roles", roles));
            Base64.Encoder url = Base64.getUrlEncoder().withoutPadding();
            String signingInput =
                    url.encodeToString("{\"alg\":\"RS256\",\"typ\":\"JWT\"}".getBytes(StandardCharsets.UTF_8)) + "."
                            + url.encodeToString(AccessMatrix.JSON.writeValueAsBytes(claims));
            Signature signature = Signature.getInstance("SHA256withRSA");
            signature.initSign(signer);
            signature.update(signingInput.getBytes(StandardCharsets.US_ASCII));
            return signingInput + "." + url.encodeToString(signature.sign());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
