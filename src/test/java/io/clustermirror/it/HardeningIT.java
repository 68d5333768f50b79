package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import io.restassured.path.json.JsonPath;
import java.io.ByteArrayInputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.IntStream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Reproducers of a black-box probe of the packaged service: input that could freeze its event loops, and HTTP
 * edges that answered outside the problem+json contract.
 */
class HardeningIT extends ServiceIT {

    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void hugePatternsShouldBeRefusedNamingTheFieldWithoutBlockingAnEventLoop() throws Exception {
        String mirror = uniqueName("patterns");
        createMirror(mirror);
        int logMark = bed.service().log().length();
        String huge = "a".repeat(200_000);
        String wide = "b".repeat(400_000) + "," + "c".repeat(400_000);
        // the largest lists accepted: 100 patterns of 1,000 characters, whose validation compiles for seconds
        String largest = String.join(",", Collections.nCopies(100, "d".repeat(999) + "x"));

        // While health checks run, the bad inputs arrive
        List<CompletableFuture<Integer>> health = new ArrayList<>();
        IntStream.range(0, 10)
                .forEach(i -> health.add(send("GET", "/q/health/ready", null).thenApply(HttpResponse::statusCode)));
        api().body(createBody(
                        "m1",
                        Map.of("bootstrap.servers", bed.source().bootstrapServers(), "mirror.topics.include", huge)))
                .post("/v1/mirrors")
                .then()
                .statusCode(400)
                .body("errorCode", equalTo("INVALID_CONFIG"))
                .body("field", equalTo("config.mirror.topics.include"))
                .body("detail", containsString("longer than the 1000"));
        api().body(createBody(
                        "m1",
                        Map.of("bootstrap.servers", bed.source().bootstrapServers(), "mirror.groups.exclude", wide)))
                .post("/v1/mirrors")
                .then()
                .statusCode(400)
                .body("field", equalTo("config.mirror.groups.exclude"));
        api().body(Map.of("set", Map.of("mirror.groups.exclude", wide)))
                .patch("/v1/mirrors/" + mirror + "/config")
                .then()
                .statusCode(400)
                .body("field", equalTo("set.mirror.groups.exclude"));
        api().body(Map.of("include", List.of(huge)))
                .post("/v1/mirrors/" + mirror + "/topics:start")
                .then()
                .statusCode(400)
                .body("errorCode", equalTo("INVALID_REQUEST"))
                .body("field", equalTo("include"));
        api().body(Map.of("include", Collections.nCopies(101, "t.*")))
                .post("/v1/mirrors/" + mirror + "/topics:start")
                .then()
                .statusCode(400)
                .body("field", equalTo("include"));
        long started = System.nanoTime();
        CompletableFuture<Integer> slowButAccepted =
                CompletableFuture.supplyAsync(() -> api().body(Map.of("set", Map.of("mirror.groups.exclude", largest)))
                        .patch("/v1/mirrors/" + mirror + "/config")
                        .then()
                        .extract()
                        .statusCode());
        List<Long> healthDuringCompile = new ArrayList<>();
        while (!slowButAccepted.isDone()) {
            long t = System.nanoTime();
            assertThat(send("GET", "/q/health/ready", null).get().statusCode()).isEqualTo(200);
            healthDuringCompile.add((System.nanoTime() - t) / 1_000_000);
        }

        // Then every answer came, health kept answering, and no event loop was held past Vert.x's blocked-thread limit
        assertThat(slowButAccepted.get()).isEqualTo(200);
        assertThat(health).allSatisfy(h -> assertThat(h.get()).isEqualTo(200));
        assertThat(healthDuringCompile)
                .as("health answers (ms) while a %d ms PATCH compiled", (System.nanoTime() - started) / 1_000_000)
                .allSatisfy(ms -> assertThat(ms).isLessThan(2000));
        assertThat(bed.service().log().substring(logMark)).doesNotContain("has been blocked for");
        assertThat(api().get("/v1/mirrors/" + mirror)
                        .then()
                        .statusCode(200)
                        .extract()
                        .jsonPath()
                        .getString("config.'mirror.groups.exclude'"))
                .isEqualTo(largest);
    }

    @Test
    void unresolvableBootstrapServersShouldBeAnsweredWithinTheSourceTimeout() {
        // 50 (the most accepted) names that DNS cannot resolve: the Admin client resolves each before it asks anything
        String hosts = String.join(
                ",",
                IntStream.range(0, 50)
                        .mapToObj(i -> uniqueName("h" + i) + ".invalid:9092")
                        .toList());
        long started = System.nanoTime();
        api().body(createBody("m1", Map.of("bootstrap.servers", hosts)))
                .post("/v1/mirrors")
                .then()
                .statusCode(422)
                .body("errorCode", equalTo("SOURCE_METADATA_NOT_AVAILABLE"));
        // the test bed's service has mirror.source.request.timeout.ms=3000
        assertThat((System.nanoTime() - started) / 1_000_000).isLessThan(3000 + 2000);
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(HttpClient.Version.class)
    void oversizedRequestsShouldBeProblemJson(HttpClient.Version version) throws Exception {
        // HTTP_2: the client upgrades the cleartext connection (h2c), as some SDKs do
        HttpClient http = HttpClient.newBuilder().version(version).build();
        expectProblem(send(http, "GET", "/v1/mirrors/" + "a".repeat(5000), null).get(), 414);
        expectProblem(
                send(http, "GET", "/v1/mirrors", null, "X-Padding", "p".repeat(30_000))
                        .get(),
                431);
        String big = "{\"name\":\"m1\",\"config\":{\"bootstrap.servers\":\"" + "k".repeat(1_100_000) + "\"}}";
        expectProblem(
                send(http, "POST", "/v1/mirrors", big, "Content-Type", "application/json")
                        .get(),
                413);
        // the same body without a Content-Length (chunked) is counted as it is read
        HttpResponse<String> chunked = http.send(
                HttpRequest.newBuilder(uri("/v1/mirrors"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofInputStream(
                                () -> new ByteArrayInputStream(big.getBytes(StandardCharsets.UTF_8))))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        expectProblem(chunked, 413);
        assertThat(mirrorNames()).doesNotContain("m1");
    }

    @Test
    void optionsShouldListEveryMethodOfThePathAndOperationsEndpointsOnlyRead() throws Exception {
        assertThat(send("OPTIONS", "/v1/mirrors/x/config", null).get().headers().firstValue("Allow"))
                .hasValue("OPTIONS, PATCH");
        assertThat(send("OPTIONS", "/v1/mirrors/x", null).get().headers().firstValue("Allow"))
                .hasValue("DELETE, GET, HEAD, OPTIONS");
        assertThat(send("OPTIONS", "/v1/mirrors", null).get().headers().firstValue("Allow"))
                .hasValue("GET, HEAD, OPTIONS, POST");
        assertThat(send("OPTIONS", "/v1/mirrors/x/topics:start", null)
                        .get()
                        .headers()
                        .firstValue("Allow"))
                .hasValue("OPTIONS, POST");
        assertThat(send("OPTIONS", "/v1/mirrors/x/nothing", null).get().statusCode())
                .isEqualTo(404);
        HttpResponse<String> put = send("PUT", "/v1/mirrors/x/config", "{}", "Content-Type", "application/json")
                .get();
        expectProblem(put, 405);
        assertThat(put.headers().firstValue("Allow")).hasValue("OPTIONS, PATCH");

        for (String path : List.of("/q/health", "/q/health/ready", "/q/metrics", "/q/openapi", "/q/swagger-ui/")) {
            for (String method : List.of("DELETE", "TRACE", "FOO", "POST")) {
                HttpResponse<String> response = send(method, path, null).get();
                expectProblem(response, 405);
                assertThat(response.headers().firstValue("Allow"))
                        .as(method + " " + path)
                        .hasValue("GET, HEAD, OPTIONS");
            }
            assertThat(send("GET", path, null).get().statusCode()).as(path).isEqualTo(200);
        }
    }

    @Test
    void illegalTopicNamesShouldBeInvalidTopicException() {
        String mirror = uniqueName("names");
        createMirror(mirror);
        String long100k = "t".repeat(100_000);
        JsonPath outcomes = api().body(Map.of("topics", List.of("..", "a b", long100k)))
                .post("/v1/mirrors/" + mirror + "/topics:start")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();
        assertThat(outcomes.getList("topics.errorCode"))
                .containsExactly("INVALID_TOPIC_EXCEPTION", "INVALID_TOPIC_EXCEPTION", "INVALID_TOPIC_EXCEPTION");
        assertThat(outcomes.getList("topics.error", String.class))
                .allSatisfy(error -> assertThat(error.length()).isLessThan(300));
        for (String verb : List.of("stop", "pause", "resume", "recover")) {
            api().body(Map.of("topics", List.of("a b")))
                    .post("/v1/mirrors/" + mirror + "/topics:" + verb)
                    .then()
                    .statusCode(400)
                    .body("errorCode", equalTo("INVALID_TOPIC_EXCEPTION"))
                    .body("field", equalTo("topics"));
        }
    }

    @Test
    void answersNobodyWaitsForShouldNotBeLoggedAsErrors() throws Exception {
        int logMark = bed.service().log().length();
        // clients that send a request for an unknown mirror and hang up before the answer, some sooner, some later,
        // while
        // the coordinator is busy persisting changes of another mirror (so that their answers queue behind those)
        String busy = uniqueName("busy");
        createMirror(busy);
        ExecutorService clients = Executors.newFixedThreadPool(20);
        List<Future<String>> patches = new ArrayList<>();
        List<Future<?>> hangUps = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            String policy = i % 2 == 0 ? "recreate" : "fail";
            patches.add(clients.submit(() -> {
                var answer = api().body(Map.of("set", Map.of("mirror.truncation.policy", policy)))
                        .patch("/v1/mirrors/" + busy + "/config")
                        .then()
                        .extract();
                return answer.statusCode() == 200
                        ? "200"
                        : answer.statusCode() + " " + answer.jsonPath().getString("errorCode");
            }));
        }
        for (int i = 0; i < 300; i++) {
            int delayMicros = (i % 20) * 250;
            hangUps.add(clients.submit(() -> {
                String body = "{\"topics\":[\"t\"]}";
                try (Socket socket = new Socket(
                        bed.service().baseUri().getHost(), bed.service().port())) {
                    OutputStream out = socket.getOutputStream();
                    out.write(("POST /v1/mirrors/" + uniqueName("gone") + "/topics:stop HTTP/1.1\r\nHost: localhost\r\n"
                                    + "Content-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n"
                                    + body)
                            .getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    LockSupport.parkNanos(delayMicros * 1000L);
                }
                return null;
            }));
        }
        try {
            Awaitility.await("40 PATCHes answered and 300 requests sent and hung up")
                    .atMost(Duration.ofSeconds(90))
                    .until(() -> patches.stream().allMatch(Future::isDone)
                            && hangUps.stream().allMatch(Future::isDone));
        } finally {
            clients.shutdownNow();
        }
        for (var hangUp : hangUps) {
            hangUp.get(); // done: a socket that could not connect or write fails the test here
        }
        List<String> answers = new ArrayList<>();
        for (var patch : patches) {
            answers.add(patch.get());
        }
        // Then the clients that waited got their answers: applied, or refused as changed concurrently by another
        assertThat(answers)
                .as("the 40 concurrent PATCHes of " + busy)
                .hasSize(40)
                .contains("200")
                .allSatisfy(answer -> assertThat(answer).isIn("200", "409 INVALID_CLUSTER_MIRROR_STATE"));
        long applied = answers.stream().filter("200"::equals).count();
        // and ordinary 404s
        api().get("/v1/mirrors/" + uniqueName("unknown")).then().statusCode(404);
        String lastUnknown = uniqueName("unknown");
        api().body(Map.of("topics", List.of("t")))
                .post("/v1/mirrors/" + lastUnknown + "/topics:stop")
                .then()
                .statusCode(404);
        api().get("/v1/mirrors/" + uniqueName("unknown") + "/topics/t").then().statusCode(404);

        // and the log was captured: the lines the service writes for these requests are in it (an audit line for each
        // PATCH and for the last 404, which came after every hung-up request, and each applied change), so whatever
        // the hung-up requests logged is in it too; and it holds none of the errors of answers nobody waited for
        Awaitility.await("the service's log holds the lines of these requests")
                .atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> {
                    String log = bed.service().log().substring(logMark);
                    assertThat(log).containsPattern("operation=ALTER mirror=" + lastUnknown + " .*status=404");
                    assertThat(log.lines().filter(l -> l.contains("operation=ALTER mirror=" + busy + " ")))
                            .as("audit lines of the 40 PATCHes")
                            .hasSize(40);
                    assertThat(log.lines().filter(l -> l.contains("Altered config of mirror " + busy + ":")))
                            .as("changes applied, one per 200")
                            .hasSize((int) applied);
                });
        assertThat(bed.service().log().substring(logMark))
                .doesNotContain("Mutiny had to drop")
                .doesNotContain("MirrorException");
    }

    private static void expectProblem(HttpResponse<String> response, int status) {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        JsonPath problem = JsonPath.from(response.body());
        assertThat(problem.getInt("status")).isEqualTo(status);
        assertThat(problem.getString("errorCode")).isEqualTo("INVALID_REQUEST");
        assertThat(problem.getString("detail")).isNotBlank();
    }

    private static URI uri(String path) {
        return bed.service().baseUri().resolve(path);
    }

    private static CompletableFuture<HttpResponse<String>> send(
            String method, String path, String body, String... headers) {
        return send(HTTP, method, path, body, headers);
    }

    private static CompletableFuture<HttpResponse<String>> send(
            HttpClient http, String method, String path, String body, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri(path))
                .timeout(Duration.ofSeconds(30))
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return http.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
