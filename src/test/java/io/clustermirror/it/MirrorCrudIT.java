package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.endsWith;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.notNullValue;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.Test;

/** Every CRUD path of DESIGN §6 against the service process and the two real clusters. */
class MirrorCrudIT extends ServiceIT {

    @Test
    void createShouldRecordTheSourceClusterIdAndBeListedAndDescribed() throws Exception {
        // Given
        String name = uniqueName("crud");
        String clusterId = sourceClusterId();

        // When
        api().body(createBody(
                        name,
                        Map.of(
                                "bootstrap.servers",
                                bed.source().bootstrapServers(),
                                "mirror.topics.include",
                                "orders\\..*,payments")))
                .post("/v1/mirrors")
                .then()
                .statusCode(201)
                .header("Location", endsWith("/v1/mirrors/" + name))
                .contentType("application/json")
                .body("name", equalTo(name))
                .body("sourceClusterId", equalTo(clusterId))
                .body("sourceBootstrapServers", equalTo(bed.source().bootstrapServers()))
                .body("config.'mirror.topics.include'", equalTo("orders\\..*,payments"))
                .body("createdAt", notNullValue());

        // Then
        api().get("/v1/mirrors")
                .then()
                .statusCode(200)
                .body("mirrors.find { it.name == '" + name + "' }.sourceClusterId", equalTo(clusterId))
                .body(
                        "mirrors.find { it.name == '" + name + "' }.sourceBootstrapServers",
                        equalTo(bed.source().bootstrapServers()))
                .body("mirrors.find { it.name == '" + name + "' }.topicCount", equalTo(0));
        api().get("/v1/mirrors/" + name)
                .then()
                .statusCode(200)
                .body("name", equalTo(name))
                .body("sourceClusterId", equalTo(clusterId))
                .body("config.'bootstrap.servers'", equalTo(bed.source().bootstrapServers()))
                .body("runningOn", equalTo(thisInstance()));
    }

    @Test
    void theInstancesShouldListThisOneAsTheOwnerOfEveryStatePartitionAndEveryMirror() throws Exception {
        String name = uniqueName("instances");
        api().body(createBody(name, Map.of("bootstrap.servers", bed.source().bootstrapServers())))
                .post("/v1/mirrors")
                .then()
                .statusCode(201);
        int mirrors = api().get("/v1/mirrors").then().statusCode(200).extract().path("mirrors.size()");
        int statePartitions;
        try (Admin admin = bed.destinationAdmin()) {
            statePartitions = admin.describeTopics(List.of("__mirror_state"))
                    .allTopicNames()
                    .get()
                    .get("__mirror_state")
                    .partitions()
                    .size();
        }

        api().get("/v1/instances")
                .then()
                .statusCode(200)
                .contentType("application/json")
                .body("answeredBy", equalTo(thisInstance()))
                .body("instances.size()", equalTo(1))
                .body("instances[0].id", equalTo(thisInstance()))
                .body(
                        "instances[0].url",
                        equalTo("http://" + java.net.InetAddress.getLocalHost().getHostName() + ":"
                                + bed.service().port()))
                .body("instances[0].statePartitions.size()", equalTo(statePartitions))
                .body("instances[0].statePartitions[0]", equalTo(0))
                .body("instances[0].mirrors", equalTo(mirrors));
    }

    /** The shared service's default id: its host name and HTTP port. */
    private static String thisInstance() throws UnknownHostException {
        return InetAddress.getLocalHost().getHostName() + ":" + bed.service().port();
    }

    @Test
    void listShouldBeSortedByName() {
        String suffix = uniqueName("");
        createMirror("zz-sorted" + suffix);
        createMirror("aa-sorted" + suffix);

        List<String> names = mirrorNames();

        assertThat(names).isSorted();
        assertThat(names).contains("aa-sorted" + suffix, "zz-sorted" + suffix);
    }

    @Test
    void duplicateCreateShouldConflictAndChangeNothing() throws Exception {
        String name = uniqueName("dup");
        createMirror(name);
        var mark = stateMark();

        api().body(createBody(
                        name,
                        Map.of(
                                "bootstrap.servers",
                                bed.source().bootstrapServers(),
                                "mirror.truncation.policy",
                                "recreate")))
                .post("/v1/mirrors")
                .then()
                .statusCode(409)
                .contentType("application/problem+json")
                .body("errorCode", equalTo("CLUSTER_MIRROR_ALREADY_EXISTS"))
                .body("status", equalTo(409))
                .body("detail", equalTo("Cluster mirror '" + name + "' already exists"));

        assertThat(stateWritesFor(mark, name)).isZero();
        api().get("/v1/mirrors/" + name).then().statusCode(200).body("config.size()", equalTo(1));
    }

    @Test
    void alterConfigShouldSetAndDeleteKeys() {
        String name = uniqueName("alter");
        api().body(createBody(
                        name,
                        Map.of(
                                "bootstrap.servers",
                                bed.source().bootstrapServers(),
                                "mirror.groups.exclude",
                                "internal-.*")))
                .post("/v1/mirrors")
                .then()
                .statusCode(201);

        api().body(Map.of(
                        "set",
                        Map.of("mirror.truncation.policy", "recreate", "mirror.topics.include", "a.*"),
                        "delete",
                        List.of("mirror.groups.exclude")))
                .patch("/v1/mirrors/" + name + "/config")
                .then()
                .statusCode(200)
                .body("config.'mirror.truncation.policy'", equalTo("recreate"))
                .body("config.'mirror.topics.include'", equalTo("a.*"))
                .body("config.'mirror.groups.exclude'", equalTo(null));

        api().get("/v1/mirrors/" + name)
                .then()
                .statusCode(200)
                .body("config.'mirror.truncation.policy'", equalTo("recreate"))
                .body("config.containsKey('mirror.groups.exclude')", equalTo(false));
    }

    @Test
    void alterConfigShouldRecheckTheSourceWhenTheConnectionChanges() throws Exception {
        String name = uniqueName("repoint");
        createMirror(name);
        var mark = stateMark();

        // the same cluster under another spelling is accepted
        api().body(Map.of(
                        "set",
                        Map.of(
                                "bootstrap.servers",
                                bed.source().bootstrapServers().replace("localhost", "127.0.0.1"))))
                .patch("/v1/mirrors/" + name + "/config")
                .then()
                .statusCode(200);
        // another cluster (the destination) is refused, naming both ids
        api().body(Map.of("set", Map.of("bootstrap.servers", bed.destination().bootstrapServers())))
                .patch("/v1/mirrors/" + name + "/config")
                .then()
                .statusCode(400)
                .body("errorCode", equalTo("INVALID_CONFIG"))
                .body("detail", org.hamcrest.Matchers.containsString(sourceClusterId()));
        // an unreachable source is refused
        api().body(Map.of("set", Map.of("bootstrap.servers", "localhost:1")))
                .patch("/v1/mirrors/" + name + "/config")
                .then()
                .statusCode(422)
                .body("errorCode", equalTo("SOURCE_METADATA_NOT_AVAILABLE"));

        assertThat(stateWritesFor(mark, name)).isEqualTo(1); // only the accepted change
        api().get("/v1/mirrors/" + name)
                .then()
                .body(
                        "config.'bootstrap.servers'",
                        equalTo(bed.source().bootstrapServers().replace("localhost", "127.0.0.1")));
    }

    @Test
    void deleteShouldRemoveTheMirror() {
        String name = uniqueName("del");
        createMirror(name);

        api().delete("/v1/mirrors/" + name).then().statusCode(204);

        api().get("/v1/mirrors/" + name).then().statusCode(404).body("errorCode", equalTo("UNKNOWN_CLUSTER_MIRROR"));
        assertThat(mirrorNames()).doesNotContain(name);
        // the name can be used again
        createMirror(name);
    }

    @Test
    void unknownMirrorShouldBe404ForEveryOperation() throws Exception {
        String name = uniqueName("ghost");
        var mark = stateMark();

        api().get("/v1/mirrors/" + name)
                .then()
                .statusCode(404)
                .contentType("application/problem+json")
                .body("errorCode", equalTo("UNKNOWN_CLUSTER_MIRROR"))
                .body("instance", equalTo("/v1/mirrors/" + name));
        api().delete("/v1/mirrors/" + name).then().statusCode(404).body("errorCode", equalTo("UNKNOWN_CLUSTER_MIRROR"));
        api().body(Map.of("set", Map.of("mirror.truncation.policy", "recreate")))
                .patch("/v1/mirrors/" + name + "/config")
                .then()
                .statusCode(404)
                .body("errorCode", equalTo("UNKNOWN_CLUSTER_MIRROR"));

        assertThat(stateWritesFor(mark, name)).isZero();
    }

    @Test
    void unreachableSourceShouldBeRefusedAndNothingPersisted() throws Exception {
        String name = uniqueName("unreachable");
        var mark = stateMark();

        api().body(createBody(name, Map.of("bootstrap.servers", "localhost:1")))
                .post("/v1/mirrors")
                .then()
                .statusCode(422)
                .contentType("application/problem+json")
                .body("errorCode", equalTo("SOURCE_METADATA_NOT_AVAILABLE"))
                .body("field", equalTo("config.bootstrap.servers"))
                .body("detail", org.hamcrest.Matchers.containsString("localhost:1"));

        assertThat(mirrorNames()).doesNotContain(name);
        assertThat(stateWritesFor(mark, name)).isZero();
    }

    @Test
    void concurrentCreatesOfOneNameShouldYieldExactlyOneMirror() {
        String name = uniqueName("race");
        List<Integer> statuses = IntStream.range(0, 6)
                .parallel()
                .mapToObj(i -> api().body(createBody(name, sourceConfig()))
                        .post("/v1/mirrors")
                        .statusCode())
                .toList();

        assertThat(statuses).filteredOn(s -> s == 201).hasSize(1);
        assertThat(statuses).filteredOn(s -> s == 409).hasSize(5);
    }
}
