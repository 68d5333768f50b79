package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.clustermirror.embedded.KafkaBrokerProcess;
import io.clustermirror.testbed.CorruptingProxy;
import io.clustermirror.testbed.ServiceProcess;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code mirror.num.replica.fetchers} (the KIP's fetcher count): a mirror fetches from each source broker over that many
 * connections, its partitions spread over them by Kafka's replica fetcher rule. Counted from outside, by a proxy in
 * front of the source broker that sees each connection's client id, and in the FetcherStats metrics per fetcher.
 */
class FetcherCountIT extends ServiceIT {

    private static CorruptingProxy proxy;
    private static KafkaBrokerProcess source;
    private static ServiceProcess threeFetchers;

    @BeforeAll
    static void startASourceBehindAProxyAndAServiceWithThreeFetchers() throws Exception {
        proxy = new CorruptingProxy();
        source = bed.newCluster("fetcher-count-source", proxy.port());
        proxy.forwardTo(source.port());
        source.start(Duration.ofSeconds(120));
        threeFetchers = bed.newService(
                        "three-fetchers",
                        Map.of(
                                "mirror.state.topic.name",
                                uniqueName("__mirror_state_fetchers"),
                                "mirror.state.topic.num.partitions",
                                "1",
                                "mirror.num.replica.fetchers",
                                "3"))
                .start();
    }

    @AfterAll
    static void stopThem() throws Exception {
        threeFetchers.stop();
        proxy.close();
        source.close();
    }

    private static String throughProxy() {
        return "localhost:" + proxy.port();
    }

    private static RequestSpecification apiOf(ServiceProcess service) {
        return RestAssured.given().baseUri(service.baseUri().toString()).contentType(ContentType.JSON);
    }

    @Test
    void aMirrorShouldFetchFromEachSourceBrokerOverTheConfiguredNumberOfConnections() throws Exception {
        // Given two topics of 12 partitions on the one source broker, one mirrored by the shared service (default:
        // one fetcher), one by a service with mirror.num.replica.fetchers=3
        String oneTopic = uniqueName("one-fetcher");
        String threeTopic = uniqueName("three-fetchers");
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, throughProxy()))) {
            Kafka.createTopic(admin, oneTopic, 12, Map.of());
            Kafka.createTopic(admin, threeTopic, 12, Map.of());
        }
        Kafka.produce(throughProxy(), oneTopic, 1_200, "lz4", "one");
        Kafka.produce(throughProxy(), threeTopic, 1_200, "lz4", "three");
        String oneMirror = uniqueName("onefetcher");
        String threeMirror = uniqueName("threefetchers");
        mirrorOn(api(), oneMirror, oneTopic);
        mirrorOn(apiOf(threeFetchers), threeMirror, threeTopic);

        // When both have caught up
        awaitConverged(oneMirror, oneTopic);
        await("the three-fetcher mirror converged")
                .atMost(Duration.ofSeconds(120))
                .untilAsserted(() -> assertThat(apiOf(threeFetchers)
                                .get("/v1/mirrors/" + threeMirror + "/topics/" + threeTopic)
                                .then()
                                .statusCode(200)
                                .extract()
                                .jsonPath()
                                .getList("partitions", Map.class))
                        .hasSize(12)
                        .allSatisfy(p ->
                                assertThat(p.get("state") + "/" + p.get("lag")).isEqualTo("MIRRORING/0")));

        // Then the source broker holds exactly one fetcher connection of the first and three of the second
        assertThat(proxy.openConnections("cluster-mirror-" + oneMirror + "-fetcher"))
                .isEqualTo(1);
        assertThat(proxy.openConnections("cluster-mirror-" + threeMirror + "-fetcher"))
                .isEqualTo(3);
        // and FetcherStats count requests and bytes per fetcher of the source broker: 0, 1, 2 all fetched records
        assertThat(fetchersWithBytes(threeFetchers, threeMirror)).containsExactly("0", "1", "2");
        assertThat(fetchersWithBytes(bed.service(), oneMirror)).containsExactly("0");
        assertThat(identicalThroughProxy(oneTopic)).isEqualTo(1_200);
        assertThat(identicalThroughProxy(threeTopic)).isEqualTo(1_200);
    }

    private static void mirrorOn(RequestSpecification api, String mirror, String topic) {
        api.body(createBody(mirror, Map.of("bootstrap.servers", throughProxy())))
                .post("/v1/mirrors")
                .then()
                .statusCode(201);
        RestAssured.given()
                .spec(api)
                .body(Map.of("topics", List.of(topic)))
                .post("/v1/mirrors/" + mirror + "/topics:start")
                .then()
                .statusCode(200);
    }

    /** The fetcher ids of the mirror whose FetcherStats byte counter is above zero. */
    private static List<String> fetchersWithBytes(ServiceProcess service, String mirror) {
        String metrics = apiOf(service).get("/q/metrics").then().extract().asString();
        Pattern line = Pattern.compile("cluster_mirror_fetcher_bytes_total\\{([^}]*)} ([0-9.E]+)");
        Matcher m = line.matcher(metrics);
        TreeSet<String> fetchers = new TreeSet<>();
        while (m.find()) {
            Map<String, String> tags = Pattern.compile(",")
                    .splitAsStream(m.group(1))
                    .map(tag -> tag.split("=", 2))
                    .collect(Collectors.toMap(t -> t[0], t -> t[1].replace("\"", "")));
            if (mirror.equals(tags.get("mirror")) && Double.parseDouble(m.group(2)) > 0) {
                fetchers.add(tags.get("fetcher"));
            }
        }
        return List.copyOf(fetchers);
    }

    /** The destination holds the source topic's records at the same offsets (read through the proxy); the count. */
    private static long identicalThroughProxy(String topic) {
        List<Kafka.Rec> expected = Kafka.readAll(throughProxy(), topic);
        List<Kafka.Rec> actual = Kafka.readAll(bed.destination().bootstrapServers(), topic);
        assertThat(actual).isEqualTo(expected);
        return actual.size();
    }
}
