package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.testbed.ServiceProcess;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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
 * Issue 12, HTTP Basic against the properties realm: every role against every endpoint, a per-mirror grant, the
 * list filtered by DESCRIBE, authorizedOperations, the audit line, the limits and the outbound allowlist, and a
 * secret that never comes back out.
 */
class BasicAuthIT extends ServiceIT {

    private static final String SECRET = "s3cr3t-never-shown";
    private static ServiceProcess service;
    private static AccessMatrix matrix;

    @BeforeAll
    static void startASecuredService() throws Exception {
        Map<String, String> props = new HashMap<>();
        props.put("mirror.http.auth.disabled", "false");
        props.put("mirror.state.topic.name", "__mirror_state_basic");
        props.put("mirror.state.topic.num.partitions", "1");
        props.put("quarkus.security.users.embedded.plain-text", "true");
        for (String user : List.of("viewer", "operator", "admin", "carol")) {
            props.put("quarkus.security.users.embedded.users." + user, user + "-password");
        }
        props.put("quarkus.security.users.embedded.roles.viewer", "mirror-viewer");
        props.put("quarkus.security.users.embedded.roles.operator", "mirror-operator");
        props.put("quarkus.security.users.embedded.roles.admin", "mirror-admin");
        // a user kept in a file of its own, added as a config location
        Path users = Files.createTempFile("users", ".properties");
        Files.writeString(
                users,
                "quarkus.security.users.embedded.users.filed=filed-password\n"
                        + "quarkus.security.users.embedded.roles.filed=mirror-viewer\n");
        props.put("quarkus.config.locations", users.toUri().toString());
        props.put("mirror.http.auth.grants.carol-team.principals", "carol");
        props.put("mirror.http.auth.grants.carol-team.operations", "DESCRIBE,ALTER");
        props.put("mirror.http.auth.grants.carol-team.mirrors", "carol-.*");
        props.put("mirror.http.max.topics.per.request", "3");
        props.put("mirror.source.allowlist", "localhost,127.0.0.0/8");
        props.put("quarkus.http.auth.permission.operations.enabled", "true");
        service = bed.newService("basic-auth", props).start();
        matrix = new AccessMatrix(HttpClient.newHttpClient(), service.baseUri());
        for (String mirror : List.of("basic-m", "carol-m")) {
            matrix.createMirror(
                    mirror,
                    bed.source().bootstrapServers(),
                    Map.of("sasl.jaas.config", "x password=" + SECRET),
                    as("admin"));
        }
    }

    @AfterAll
    static void stopIt() {
        service.stop();
    }

    private static UnaryOperator<HttpRequest.Builder> as(String user) {
        String token =
                Base64.getEncoder().encodeToString((user + ":" + user + "-password").getBytes(StandardCharsets.UTF_8));
        return r -> r.header("Authorization", "Basic " + token);
    }

    private static AccessMatrix.Answer post(String user, String path, String body) {
        return matrix.call("POST", path, body, as(user));
    }

    @Test
    void everyRoleShouldReachExactlyItsOperationsOnEveryEndpoint() {
        matrix.assertCaller("viewer", Set.of("DESCRIBE"), "basic-m", as("viewer"));
        matrix.assertCaller("operator", Set.of("DESCRIBE", "ALTER"), "basic-m", as("operator"));
        matrix.assertCaller("admin", Set.of("CREATE", "DESCRIBE", "ALTER", "DELETE"), "basic-m", as("admin"));
        matrix.assertCaller("filed (from a users file)", Set.of("DESCRIBE"), "basic-m", as("filed"));
    }

    @Test
    void missingOrWrongCredentialsShouldBe401WithAChallenge() {
        matrix.assertUnauthenticated("nobody", "basic-m", r -> r);
        matrix.assertUnauthenticated(
                "a wrong password",
                "basic-m",
                r -> r.header(
                        "Authorization",
                        "Basic " + Base64.getEncoder().encodeToString("admin:wrong".getBytes(StandardCharsets.UTF_8))));
        matrix.assertUnauthenticated("an unknown user", "basic-m", as("mallory"));
        assertThat(matrix.call("GET", "/v1/mirrors", null, r -> r).challenges())
                .containsExactly("Basic realm=\"Quarkus\"");
    }

    @Test
    void twoAuthorizationHeadersShouldAuthenticateWithTheFirst() {
        UnaryOperator<HttpRequest.Builder> viewerThenJunk = r -> as("viewer")
                .apply(r)
                .header(
                        "Authorization",
                        "Basic " + Base64.getEncoder().encodeToString("admin:wrong".getBytes(StandardCharsets.UTF_8)));

        AccessMatrix.Answer describe = matrix.call("GET", "/v1/mirrors/basic-m", null, viewerThenJunk);
        assertThat(describe.status()).as(describe.body()).isEqualTo(200);
        AccessMatrix.assertProblem(
                matrix.call("DELETE", "/v1/mirrors/basic-m", null, viewerThenJunk),
                403,
                "CLUSTER_MIRROR_AUTHORIZATION_FAILED",
                "the first header's caller (a viewer) deleting");
    }

    @Test
    void aGrantShouldReachOnlyTheMirrorsItNamesAndTheListShouldShowOnlyThose() {
        assertThat(matrix.call("GET", "/v1/mirrors/carol-m", null, as("carol")).status())
                .isEqualTo(200);
        AccessMatrix.assertProblem(
                matrix.call("GET", "/v1/mirrors/basic-m", null, as("carol")),
                403,
                "CLUSTER_MIRROR_AUTHORIZATION_FAILED",
                "carol on basic-m");
        assertThat(matrix.call("PATCH", "/v1/mirrors/carol-m/config", "{}", as("carol"))
                        .status())
                .as("ALTER granted: the body is what is wrong")
                .isEqualTo(400);
        AccessMatrix.assertProblem(
                matrix.call("DELETE", "/v1/mirrors/carol-m", null, as("carol")),
                403,
                "CLUSTER_MIRROR_AUTHORIZATION_FAILED",
                "carol may not delete");
        assertThat(names(matrix.call("GET", "/v1/mirrors", null, as("carol")))).containsExactly("carol-m");
        assertThat(names(matrix.call("GET", "/v1/mirrors", null, as("viewer")))).contains("basic-m", "carol-m");
    }

    @Test
    void describeShouldSayWhatTheCallerMayDoWhenAsked() {
        assertThat(operations("viewer", "basic-m")).containsExactly("DESCRIBE");
        assertThat(operations("operator", "basic-m")).containsExactly("DESCRIBE", "ALTER");
        assertThat(operations("admin", "basic-m")).containsExactly("CREATE", "DESCRIBE", "ALTER", "DELETE");
        assertThat(operations("carol", "carol-m")).containsExactly("DESCRIBE", "ALTER");
        assertThat(matrix.call("GET", "/v1/mirrors/basic-m", null, as("admin"))
                        .json()
                        .has("authorizedOperations"))
                .as("only when asked")
                .isFalse();
    }

    @Test
    void mutatingRequestsShouldBeAuditedWithoutSecrets() {
        post("operator", "/v1/mirrors/basic-m/topics:stop", "{\"topics\":[\"audited-topic\"]}");
        post("viewer", "/v1/mirrors/basic-m/topics:pause", "{\"topics\":[\"audited-topic\"]}");
        post("operator", "/v1/mirrors/basic-m/verifications", "{\"topics\":[\"verified-topic\"]}");
        matrix.call("PUT", "/v1/mirrors/basic-m/config", "{}", r -> r);

        assertThat(service.log())
                .contains("[io.clustermirror.audit]")
                .contains("principal=operator operation=ALTER mirror=basic-m topics=audited-topic outcome=")
                .contains("principal=viewer operation=ALTER mirror=basic-m topics=- outcome=denied status=403 "
                        + "client=127.0.0.1 request=\"POST /v1/mirrors/basic-m/topics:pause\"")
                .contains("principal=admin operation=CREATE mirror=basic-m topics=- outcome=succeeded status=201")
                .contains("principal=- operation=- mirror=- topics=- outcome=rejected status=405 client=127.0.0.1 "
                        + "request=\"PUT /v1/mirrors/basic-m/config\"")
                .contains("principal=operator operation=ALTER mirror=basic-m topics=verified-topic outcome=failed "
                        + "status=404 client=127.0.0.1 request=\"POST /v1/mirrors/basic-m/verifications\"");
    }

    @Test
    void aSecretShouldBeAbsentFromEveryResponseAndLogLine() {
        String described =
                matrix.call("GET", "/v1/mirrors/basic-m", null, as("admin")).body();
        assertThat(described).contains("sasl.jaas.config").doesNotContain(SECRET);
        assertThat(matrix.call("GET", "/v1/mirrors", null, as("admin")).body()).doesNotContain(SECRET);
        AccessMatrix.Answer refused = post(
                "admin",
                "/v1/mirrors",
                "{\"name\":\"basic-bad\",\"config\":{\"bootstrap.servers\":\"localhost:1\",\"sasl.jaas.config\":"
                        + "\"not jaas " + SECRET + "\",\"security.protocol\":\"SASL_PLAINTEXT\"}}");
        assertThat(refused.status()).isEqualTo(400);
        assertThat(refused.body()).doesNotContain(SECRET);
        assertThat(service.log()).doesNotContain(SECRET);
    }

    @Test
    void reAddressingAMirrorShouldNotCarryItsStoredSecretsToTheNewAddress() {
        AccessMatrix.Answer moved = matrix.call(
                "PATCH",
                "/v1/mirrors/basic-m/config",
                "{\"set\":{\"bootstrap.servers\":\"127.0.0.1:9\"}}",
                as("operator"));
        AccessMatrix.assertProblem(moved, 400, "INVALID_CONFIG", "re-pointed with a stored secret");
        assertThat(moved.json().path("detail").asText()).contains("[sasl.jaas.config]");
        assertThat(moved.body()).doesNotContain(SECRET);
        assertThat(matrix.call("GET", "/v1/mirrors/basic-m", null, as("viewer"))
                        .json()
                        .path("config")
                        .path("bootstrap.servers")
                        .asText())
                .isEqualTo(bed.source().bootstrapServers());
    }

    @Test
    void requestLimitsAndTheOutboundAllowlistShouldRefuseWithProblems() {
        AccessMatrix.assertProblem(
                post("operator", "/v1/mirrors/basic-m/topics:stop", "{\"topics\":[\"a\",\"b\",\"c\",\"d\"]}"),
                400,
                "INVALID_REQUEST",
                "4 topics, limit 3");
        AccessMatrix.Answer outside = post(
                "admin",
                "/v1/mirrors",
                "{\"name\":\"basic-outside\",\"config\":{\"bootstrap.servers\":\"kafka.elsewhere.example:9092\"}}");
        AccessMatrix.assertProblem(outside, 400, "INVALID_CONFIG", "outside the allowlist");
        assertThat(outside.json().path("field").asText()).isEqualTo("config.bootstrap.servers");
        assertThat(outside.json().path("detail").asText()).contains("mirror.source.allowlist");
        assertThat(matrix.call("GET", "/v1/mirrors/basic-outside", null, as("admin"))
                        .status())
                .as("nothing created")
                .isEqualTo(404);
    }

    @Test
    void healthShouldStayOpenAndSayAuthenticationIsEnforced() throws Exception {
        AccessMatrix.Answer ready = matrix.call("GET", "/q/health/ready", null, r -> r);
        assertThat(ready.status()).isEqualTo(200);
        assertThat(ready.body().replace(" ", ""))
                .contains("\"authentication\":\"enforced\"")
                .contains("\"mechanisms\":\"basic\"");
        assertThat(matrix.call("GET", "/q/health/live", null, r -> r).status()).isEqualTo(200);
    }

    @Test
    void operationsEndpointsShouldNeedACallerWhenSwitchedOn() {
        for (String path : List.of("/q/metrics", "/q/openapi", "/q/swagger-ui/")) {
            assertThat(matrix.call("GET", path, null, r -> r).status()).as(path).isEqualTo(401);
            assertThat(matrix.call("GET", path, null, as("viewer")).status())
                    .as(path)
                    .isEqualTo(200);
        }
        assertThat(matrix.call("GET", "/q/openapi", null, as("viewer")).body())
                .as("Swagger UI can authenticate: the document names both schemes")
                .contains("scheme: basic")
                .contains("scheme: bearer");
    }

    private static List<String> names(AccessMatrix.Answer list) {
        List<String> names = new ArrayList<>();
        list.json().path("mirrors").forEach(m -> names.add(m.path("name").asText()));
        return names;
    }

    private static List<String> operations(String user, String mirror) {
        List<String> ops = new ArrayList<>();
        matrix.call("GET", "/v1/mirrors/" + mirror + "?includeAuthorizedOperations=true", null, as(user))
                .json()
                .path("authorizedOperations")
                .forEach(o -> ops.add(o.asText()));
        return ops;
    }
}
