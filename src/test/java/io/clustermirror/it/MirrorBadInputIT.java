package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.emptyOrNullString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;

import io.restassured.response.ValidatableResponse;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Bad input gets a 4xx problem+json naming the KIP error and the field at fault, and changes nothing:
 * no record is written to {@code __mirror_state} and the mirrors are as before.
 */
class MirrorBadInputIT extends ServiceIT {

    private static String existing;
    private static String existingBefore;

    @BeforeAll
    static void createTheMirrorToPatch() {
        existing = uniqueName("patched");
        existingBefore = createMirror(existing).extract().body().asString();
    }

    static Stream<Arguments> badCreates() {
        String ok = "\"bootstrap.servers\":\"localhost:9092\"";
        return Stream.of(
                bad(
                        "empty name",
                        "{\"name\":\"\",\"config\":{" + ok + "}}",
                        400,
                        "INVALID_CLUSTER_MIRROR_NAME",
                        "name"),
                bad(
                        "name too long",
                        "{\"name\":\"" + "a".repeat(250) + "\",\"config\":{" + ok + "}}",
                        400,
                        "INVALID_CLUSTER_MIRROR_NAME",
                        "name"),
                bad("name '.'", "{\"name\":\".\",\"config\":{" + ok + "}}", 400, "INVALID_CLUSTER_MIRROR_NAME", "name"),
                bad(
                        "name '..'",
                        "{\"name\":\"..\",\"config\":{" + ok + "}}",
                        400,
                        "INVALID_CLUSTER_MIRROR_NAME",
                        "name"),
                bad(
                        "name with space",
                        "{\"name\":\"a b\",\"config\":{" + ok + "}}",
                        400,
                        "INVALID_CLUSTER_MIRROR_NAME",
                        "name"),
                bad(
                        "name with slash",
                        "{\"name\":\"a/b\",\"config\":{" + ok + "}}",
                        400,
                        "INVALID_CLUSTER_MIRROR_NAME",
                        "name"),
                bad(
                        "name not ASCII",
                        "{\"name\":\"mirr\u00f6r\",\"config\":{" + ok + "}}",
                        400,
                        "INVALID_CLUSTER_MIRROR_NAME",
                        "name"),
                bad("name missing", "{\"config\":{" + ok + "}}", 400, "INVALID_CLUSTER_MIRROR_NAME", "name"),
                bad("name is a number", "{\"name\":5,\"config\":{" + ok + "}}", 400, "INVALID_REQUEST", "name"),
                bad("name is an object", "{\"name\":{},\"config\":{" + ok + "}}", 400, "INVALID_REQUEST", "name"),
                bad("config missing", "{\"name\":\"m1\"}", 400, "INVALID_CONFIG", "config"),
                bad("config is an array", "{\"name\":\"m1\",\"config\":[]}", 400, "INVALID_REQUEST", "config"),
                bad(
                        "config value is a number",
                        "{\"name\":\"m1\",\"config\":{\"bootstrap.servers\":9092}}",
                        400,
                        "INVALID_REQUEST",
                        "config.bootstrap.servers"),
                bad(
                        "config value is null",
                        "{\"name\":\"m1\",\"config\":{\"bootstrap.servers\":null}}",
                        400,
                        "INVALID_CONFIG",
                        "config.bootstrap.servers"),
                bad(
                        "unknown config key",
                        "{\"name\":\"m1\",\"config\":{" + ok + ",\"fetch.max.bytes\":\"1\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.fetch.max.bytes"),
                bad(
                        "unknown sasl key",
                        "{\"name\":\"m1\",\"config\":{" + ok + ",\"sasl.nonsense\":\"1\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.sasl.nonsense"),
                bad(
                        "bootstrap missing",
                        "{\"name\":\"m1\",\"config\":{\"mirror.truncation.policy\":\"fail\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.bootstrap.servers"),
                bad(
                        "bootstrap without port",
                        "{\"name\":\"m1\",\"config\":{\"bootstrap.servers\":\"kafka\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.bootstrap.servers"),
                bad(
                        "bootstrap port 0",
                        "{\"name\":\"m1\",\"config\":{\"bootstrap.servers\":\"kafka:0\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.bootstrap.servers"),
                bad(
                        "bootstrap port too big",
                        "{\"name\":\"m1\",\"config\":{\"bootstrap.servers\":\"kafka:70000\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.bootstrap.servers"),
                bad(
                        "bootstrap empty",
                        "{\"name\":\"m1\",\"config\":{\"bootstrap.servers\":\"\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.bootstrap.servers"),
                bad(
                        "security protocol unknown",
                        "{\"name\":\"m1\",\"config\":{" + ok + ",\"security.protocol\":\"TLS\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.security.protocol"),
                bad(
                        "topics include bad regex",
                        "{\"name\":\"m1\",\"config\":{" + ok + ",\"mirror.topics.include\":\"orders(\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.mirror.topics.include"),
                bad(
                        "topics include backreference (RE2 matches in linear time, without them)",
                        "{\"name\":\"m1\",\"config\":{" + ok + ",\"mirror.topics.include\":\"(a)\\\\1\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.mirror.topics.include"),
                bad(
                        "groups exclude lookahead",
                        "{\"name\":\"m1\",\"config\":{" + ok + ",\"mirror.groups.exclude\":\"app(?=-eu)\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.mirror.groups.exclude"),
                bad(
                        "ssl.engine.factory.class=java.lang.Runtime: a class the client would instantiate",
                        "{\"name\":\"m1\",\"config\":{" + ok + ",\"ssl.engine.factory.class\":\"java.lang.Runtime\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.ssl.engine.factory.class"),
                bad(
                        "sasl.login.class=java.lang.ProcessBuilder: a class the client would instantiate",
                        "{\"name\":\"m1\",\"config\":{" + ok + ",\"sasl.login.class\":\"java.lang.ProcessBuilder\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.sasl.login.class"),
                bad(
                        "ssl.enabled.protocols=TLSv9: a TLS protocol this JVM lacks",
                        "{\"name\":\"m1\",\"config\":{" + ok + ",\"ssl.enabled.protocols\":\"TLSv9\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.ssl.enabled.protocols"),
                bad(
                        "ssl.keystore.type=BOGUS: a key store type this JVM lacks",
                        "{\"name\":\"m1\",\"config\":{" + ok + ",\"ssl.keystore.type\":\"BOGUS\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.ssl.keystore.type"),
                bad(
                        "sasl.login.connect.timeout.ms=-5: a negative timeout",
                        "{\"name\":\"m1\",\"config\":{" + ok + ",\"sasl.login.connect.timeout.ms\":\"-5\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.sasl.login.connect.timeout.ms"),
                bad(
                        "groups exclude bad regex",
                        "{\"name\":\"m1\",\"config\":{" + ok + ",\"mirror.groups.exclude\":\"[a\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.mirror.groups.exclude"),
                bad(
                        "acl rule too short",
                        "{\"name\":\"m1\",\"config\":{" + ok + ",\"mirror.acl.include\":\"TOPIC;.*;READ\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.mirror.acl.include"),
                bad(
                        "acl rule bad resource",
                        "{\"name\":\"m1\",\"config\":{" + ok
                                + ",\"mirror.acl.include\":\"TABLE;.*;READ;ALLOW;User:a\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.mirror.acl.include"),
                bad(
                        "acl rule bad principal",
                        "{\"name\":\"m1\",\"config\":{" + ok
                                + ",\"mirror.acl.include\":\"TOPIC;.*;READ;ALLOW;alice\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.mirror.acl.include"),
                bad(
                        "truncation policy unknown",
                        "{\"name\":\"m1\",\"config\":{" + ok + ",\"mirror.truncation.policy\":\"drop\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.mirror.truncation.policy"),
                bad(
                        "properties exclude not a name",
                        "{\"name\":\"m1\",\"config\":{" + ok
                                + ",\"mirror.topic.properties.exclude\":\"Retention Ms\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.mirror.topic.properties.exclude"),
                bad(
                        "unknown field",
                        "{\"name\":\"m1\",\"config\":{" + ok + "},\"replicas\":3}",
                        400,
                        "INVALID_REQUEST",
                        "replicas"),
                bad("malformed JSON", "{\"name\":\"m1\",", 400, "INVALID_REQUEST", null),
                bad("empty body", "", 400, "INVALID_REQUEST", null),
                bad("array body", "[]", 400, "INVALID_REQUEST", null),
                bad("trailing content", "{\"name\":\"m1\",\"config\":{" + ok + "}} {}", 400, "INVALID_REQUEST", null),
                // duplicate keys: which one was meant is a guess (before: a 500 with an empty body, or the last one
                // won)
                bad(
                        "name and config twice",
                        "{\"name\":\"m1\",\"config\":{" + ok + "},\"name\":\"m2\",\"config\":{}}",
                        400,
                        "INVALID_REQUEST",
                        "name"),
                bad(
                        "name twice",
                        "{\"name\":\"m1\",\"name\":\"m2\",\"config\":{" + ok + "}}",
                        400,
                        "INVALID_REQUEST",
                        "name"),
                bad(
                        "config key twice",
                        "{\"name\":\"m1\",\"config\":{" + ok + "," + ok + "}}",
                        400,
                        "INVALID_REQUEST",
                        "config.bootstrap.servers"),
                bad("explicit null config", "{\"name\":\"m1\",\"config\":null}", 400, "INVALID_REQUEST", "config"),
                bad(
                        "bootstrap ending in a newline",
                        "{\"name\":\"m1\",\"config\":{\"bootstrap.servers\":\"localhost:9092\\n\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.bootstrap.servers"),
                bad(
                        "bootstrap with 1000 addresses",
                        "{\"name\":\"m1\",\"config\":{\"bootstrap.servers\":\""
                                + String.join(",", Collections.nCopies(1000, "unresolvable.invalid:9092"))
                                + "\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.bootstrap.servers"),
                bad(
                        "malformed JAAS",
                        "{\"name\":\"m1\",\"config\":{" + ok + ",\"security.protocol\":\"SASL_PLAINTEXT\","
                                + "\"sasl.mechanism\":\"PLAIN\",\"sasl.jaas.config\":\"org.apache.kafka.common.security.plain.PlainLoginModule "
                                + "required username=\\\"u\\\" password=\\\"hunter2\\\"\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.sasl.jaas.config"),
                bad(
                        "client setting of the wrong type",
                        "{\"name\":\"m1\",\"config\":{" + ok + ",\"sasl.login.refresh.window.factor\":\"high\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.sasl.login.refresh.window.factor"),
                bad(
                        "topics include pattern too long",
                        "{\"name\":\"m1\",\"config\":{" + ok + ",\"mirror.topics.include\":\"" + "a".repeat(1001)
                                + "\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.mirror.topics.include"),
                bad(
                        "groups exclude with 101 patterns",
                        "{\"name\":\"m1\",\"config\":{" + ok + ",\"mirror.groups.exclude\":\""
                                + String.join(",", Collections.nCopies(101, "g.*")) + "\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.mirror.groups.exclude"),
                bad(
                        "acl rules 101",
                        "{\"name\":\"m1\",\"config\":{" + ok + ",\"mirror.acl.include\":\""
                                + String.join(",", Collections.nCopies(101, "TOPIC;.*;READ;ALLOW;*"))
                                + "\"}}",
                        400,
                        "INVALID_CONFIG",
                        "config.mirror.acl.include"));
    }

    static Stream<Arguments> badPatches() {
        return Stream.of(
                bad("delete bootstrap", "{\"delete\":[\"bootstrap.servers\"]}", 400, "INVALID_CONFIG", "delete"),
                bad("delete unknown key", "{\"delete\":[\"retention.ms\"]}", 400, "INVALID_CONFIG", "delete"),
                bad("set unknown key", "{\"set\":{\"retention.ms\":\"1\"}}", 400, "INVALID_CONFIG", "set.retention.ms"),
                bad(
                        "set and delete one key",
                        "{\"set\":{\"mirror.truncation.policy\":\"fail\"},\"delete\":[\"mirror.truncation.policy\"]}",
                        400,
                        "INVALID_REQUEST",
                        "delete"),
                bad("nothing to alter", "{}", 400, "INVALID_REQUEST", "set"),
                bad("unknown field", "{\"put\":{}}", 400, "INVALID_REQUEST", "put"),
                bad(
                        "set value is a boolean",
                        "{\"set\":{\"mirror.truncation.policy\":true}}",
                        400,
                        "INVALID_REQUEST",
                        "set.mirror.truncation.policy"),
                bad(
                        "delete is a string",
                        "{\"delete\":\"mirror.truncation.policy\"}",
                        400,
                        "INVALID_REQUEST",
                        "delete"),
                bad("delete holds null", "{\"delete\":[null]}", 400, "INVALID_REQUEST", "delete"),
                bad(
                        "bad regex",
                        "{\"set\":{\"mirror.topics.exclude\":\"*\"}}",
                        400,
                        "INVALID_CONFIG",
                        "set.mirror.topics.exclude"),
                bad(
                        "bad bootstrap",
                        "{\"set\":{\"bootstrap.servers\":\"nope\"}}",
                        400,
                        "INVALID_CONFIG",
                        "set.bootstrap.servers"),
                bad("malformed JSON", "{\"set\":", 400, "INVALID_REQUEST", null),
                bad("empty body", "", 400, "INVALID_REQUEST", null),
                bad(
                        "set twice",
                        "{\"set\":{},\"set\":{\"mirror.truncation.policy\":\"recreate\"}}",
                        400,
                        "INVALID_REQUEST",
                        "set"),
                bad(
                        "one key twice in set",
                        "{\"set\":{\"mirror.truncation.policy\":\"fail\",\"mirror.truncation.policy\":\"recreate\"}}",
                        400,
                        "INVALID_REQUEST",
                        "set.mirror.truncation.policy"),
                bad("set null", "{\"set\":null}", 400, "INVALID_REQUEST", "set"),
                bad(
                        "set null with a delete",
                        "{\"set\":null,\"delete\":[\"mirror.truncation.policy\"]}",
                        400,
                        "INVALID_REQUEST",
                        "set"),
                bad(
                        "delete null",
                        "{\"delete\":null,\"set\":{\"mirror.truncation.policy\":\"recreate\"}}",
                        400,
                        "INVALID_REQUEST",
                        "delete"),
                bad(
                        "groups exclude pattern too long",
                        "{\"set\":{\"mirror.groups.exclude\":\"" + "g".repeat(1001) + "\"}}",
                        400,
                        "INVALID_CONFIG",
                        "set.mirror.groups.exclude"));
    }

    /** Every mirror name a body mentions (any "name" key, at most 249 characters), and m1, the name most cases use. */
    private static Set<String> namesIn(String body) {
        Set<String> names = new TreeSet<>(List.of("m1"));
        var matcher = Pattern.compile("\"name\"\\s*:\\s*\"([^\"]{0,249})\"").matcher(body);
        while (matcher.find()) {
            names.add(matcher.group(1));
        }
        return names;
    }

    private static Arguments bad(String label, String body, int status, String errorCode, String field) {
        return Arguments.of(label, body, status, errorCode, field);
    }

    @ParameterizedTest(name = "POST /v1/mirrors: {0}")
    @MethodSource("badCreates")
    void badCreateShouldBeRefusedAndChangeNothing(String label, String body, int status, String errorCode, String field)
            throws Exception {
        List<String> mirrorsBefore = mirrorNames();
        var mark = stateMark();

        ValidatableResponse response = api().body(body).post("/v1/mirrors").then();

        expectProblem(response, status, errorCode, field);
        response.body("detail", not(org.hamcrest.Matchers.containsString("hunter2")));
        assertThat(mirrorNames()).isEqualTo(mirrorsBefore);
        for (String name : namesIn(body)) {
            assertThat(stateWritesFor(mark, name))
                    .as("state records about mirror '%s'", name)
                    .isZero();
        }
    }

    @ParameterizedTest(name = "PATCH /v1/mirrors/NAME/config: {0}")
    @MethodSource("badPatches")
    void badPatchShouldBeRefusedAndChangeNothing(String label, String body, int status, String errorCode, String field)
            throws Exception {
        var mark = stateMark();

        ValidatableResponse response =
                api().body(body).patch("/v1/mirrors/" + existing + "/config").then();

        expectProblem(response, status, errorCode, field);
        assertThat(stored(api().get("/v1/mirrors/" + existing)
                        .then()
                        .statusCode(200)
                        .extract()
                        .asString()))
                .isEqualTo(stored(existingBefore));
        assertThat(stateWritesFor(mark, existing)).isZero();
    }

    @Test
    void invalidNameInPathShouldBe400() {
        api().get("/v1/mirrors/a%20b")
                .then()
                .statusCode(400)
                .contentType("application/problem+json")
                .body("errorCode", equalTo("INVALID_CLUSTER_MIRROR_NAME"));
        api().delete("/v1/mirrors/a%20b")
                .then()
                .statusCode(400)
                .body("errorCode", equalTo("INVALID_CLUSTER_MIRROR_NAME"));
    }

    @Test
    void wrongContentTypeShouldBe415() {
        api().contentType("text/plain")
                .body("name=x")
                .post("/v1/mirrors")
                .then()
                .statusCode(415)
                .contentType("application/problem+json")
                .body("errorCode", equalTo("INVALID_REQUEST"));
    }

    @Test
    void aBodyWithoutContentTypeShouldBe415AndChangeNothing() throws Exception {
        // a browser may send a cross-site "simple" POST without a preflight only with a form or text type, or none
        String name = uniqueName("no-type");
        var client = HttpClient.newHttpClient();
        for (String path : List.of("/v1/mirrors", "/v1/mirrors/" + existing + "/topics:stop")) {
            String body = path.endsWith("mirrors")
                    ? "{\"name\":\"" + name + "\",\"config\":{\"bootstrap.servers\":\""
                            + bed.source().bootstrapServers() + "\"}}"
                    : "{\"topics\":[\"t\"]}";
            var response = client.send(
                    HttpRequest.newBuilder(bed.service().baseUri().resolve(path))
                            .POST(HttpRequest.BodyPublishers.ofString(body))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(path).isEqualTo(415);
            assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
            assertThat(io.restassured.path.json.JsonPath.from(response.body()).getString("errorCode"))
                    .isEqualTo("INVALID_REQUEST");
        }
        assertThat(mirrorNames()).doesNotContain(name);
    }

    @Test
    void unknownPathShouldBe404ProblemJson() {
        api().get("/v1/nothing-here")
                .then()
                .statusCode(404)
                .contentType("application/problem+json")
                .body("errorCode", equalTo("NOT_FOUND"));
    }

    private static void expectProblem(ValidatableResponse response, int status, String errorCode, String field) {
        response.statusCode(status)
                .contentType("application/problem+json")
                .body("status", equalTo(status))
                .body("errorCode", equalTo(errorCode))
                .body("title", not(emptyOrNullString()))
                .body("detail", not(emptyOrNullString()))
                .body("field", equalTo(field));
    }
}
