package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.UnaryOperator;

/**
 * Every endpoint of the control plane with the ClusterMirror operation it needs, called as one caller: each call the
 * caller's operations allow must answer as the endpoint does (its own status, never 401 or 403), each other one 403
 * problem+json CLUSTER_MIRROR_AUTHORIZATION_FAILED, and without credentials every one 401 problem+json.
 */
final class AccessMatrix {

    static final ObjectMapper JSON = new ObjectMapper();

    /** One call: its operation, and the status it answers once allowed (what it does to a mirror that is not there). */
    record Call(String operation, String method, String path, String body, int allowedStatus) {
        @Override
        public String toString() {
            return method + " " + path;
        }
    }

    /** An HTTP answer as a test reads it. */
    record Answer(int status, String contentType, String body, List<String> challenges) {
        JsonNode json() {
            try {
                return JSON.readTree(body);
            } catch (Exception e) {
                throw new AssertionError("not JSON: " + body, e);
            }
        }
    }

    private final HttpClient client;
    private final URI base;

    AccessMatrix(HttpClient client, URI base) {
        this.client = client;
        this.base = base;
    }

    /** The calls, against an existing mirror (reads) and one that is not there (writes: nothing is changed). */
    static List<Call> calls(String existing) {
        String missing = "missing-mirror";
        String topics = "{\"topics\":[\"t1\"]}";
        String verbs = "/v1/mirrors/" + missing + "/topics:";
        return List.of(
                new Call("CREATE", "POST", "/v1/mirrors", "{\"name\":\"never-created\",\"config\":{}}", 400),
                new Call("DESCRIBE", "GET", "/v1/mirrors", null, 200),
                new Call("DESCRIBE", "GET", "/v1/mirrors/" + existing, null, 200),
                new Call("DESCRIBE", "GET", "/v1/mirrors/" + existing + "/topics/t1", null, 404),
                new Call(
                        "ALTER",
                        "PATCH",
                        "/v1/mirrors/" + missing + "/config",
                        "{\"set\":{\"mirror.topics.include\":\"x\"}}",
                        404),
                new Call("ALTER", "POST", verbs + "start", topics, 404),
                new Call("ALTER", "POST", verbs + "stop", topics, 404),
                new Call("ALTER", "POST", verbs + "pause", topics, 404),
                new Call("ALTER", "POST", verbs + "resume", topics, 404),
                new Call("ALTER", "POST", verbs + "recover", topics, 404),
                new Call("ALTER", "POST", verbs + "promote", topics, 404),
                new Call("ALTER", "POST", "/v1/mirrors/" + missing + "/verifications", "{\"include\":[\".*\"]}", 404),
                new Call("DESCRIBE", "GET", "/v1/mirrors/" + existing + "/verifications", null, 200),
                new Call("DESCRIBE", "GET", "/v1/mirrors/" + existing + "/verifications/none", null, 404),
                new Call("DELETE", "DELETE", "/v1/mirrors/" + missing, null, 404));
    }

    Answer call(String method, String path, String body, UnaryOperator<HttpRequest.Builder> credentials) {
        HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve(path))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        try {
            HttpResponse<String> response =
                    client.send(credentials.apply(request).build(), HttpResponse.BodyHandlers.ofString());
            return new Answer(
                    response.statusCode(),
                    response.headers().firstValue("Content-Type").orElse(""),
                    response.body(),
                    response.headers().allValues("WWW-Authenticate"));
        } catch (Exception e) {
            throw new AssertionError(method + " " + path + " failed: " + e, e);
        }
    }

    /** Creates a mirror of {@code bootstrap} with these extra settings, as this caller: 201 expected. */
    void createMirror(String name, String bootstrap, Map<String, String> extra, UnaryOperator<HttpRequest.Builder> as) {
        Map<String, String> config = new TreeMap<>(extra);
        config.put("bootstrap.servers", bootstrap);
        try {
            Answer answer =
                    call("POST", "/v1/mirrors", JSON.writeValueAsString(Map.of("name", name, "config", config)), as);
            assertThat(answer.status())
                    .as("create " + name + ": " + answer.body())
                    .isEqualTo(201);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Every call as this caller: allowed ones answer as the endpoint does, the others 403 problem+json. */
    void assertCaller(String who, Set<String> operations, String existing, UnaryOperator<HttpRequest.Builder> as) {
        for (Call call : calls(existing)) {
            Answer answer = call(call.method(), call.path(), call.body(), as);
            if (call.path().equals("/v1/mirrors") && call.method().equals("GET")) {
                // the list answers everyone authenticated, with the mirrors the caller may DESCRIBE
                assertThat(answer.status()).as(who + " " + call).isEqualTo(200);
                assertThat(answer.json().path("mirrors").isEmpty())
                        .as(who + " sees no mirror without DESCRIBE")
                        .isEqualTo(!operations.contains("DESCRIBE"));
            } else if (operations.contains(call.operation())) {
                assertThat(answer.status())
                        .as(who + " may " + call.operation() + ": " + call + " -> " + answer.body())
                        .isEqualTo(call.allowedStatus());
            } else {
                assertProblem(answer, 403, "CLUSTER_MIRROR_AUTHORIZATION_FAILED", who + " " + call);
            }
        }
    }

    /** Every call with these credentials (none, or not accepted): 401 problem+json. */
    void assertUnauthenticated(String who, String existing, UnaryOperator<HttpRequest.Builder> as) {
        for (Call call : calls(existing)) {
            Answer answer = call(call.method(), call.path(), call.body(), as);
            assertProblem(answer, 401, "AUTHENTICATION_FAILED", who + " " + call);
        }
    }

    static void assertProblem(Answer answer, int status, String errorCode, String what) {
        assertThat(answer.status()).as(what + " -> " + answer.body()).isEqualTo(status);
        assertThat(answer.contentType()).as(what).startsWith("application/problem+json");
        assertThat(answer.json().path("errorCode").asText()).as(what).isEqualTo(errorCode);
        assertThat(answer.json().path("status").asInt()).as(what).isEqualTo(status);
    }
}
