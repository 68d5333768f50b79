package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.clustermirror.testbed.ServiceProcess;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.specification.RequestSpecification;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A request forwarded to the instance that owns its mirror carries the caller's credentials: the owner authenticates,
 * authorizes and audits it, once; the instance that forwarded it only routes (decisions §48).
 */
class ForwardingAuthIT extends ServiceIT {

    private static final int STATE_PARTITIONS = 10;
    private static final List<ServiceProcess> instances = new ArrayList<>();

    @BeforeAll
    static void startTwoSecuredInstances() {
        String stateTopic =
                "__mirror_state_auth_" + UUID.randomUUID().toString().substring(0, 8);
        Map<String, String> props = new HashMap<>();
        props.put("mirror.http.auth.disabled", "false");
        props.put("mirror.state.topic.name", stateTopic);
        props.put("mirror.state.topic.num.partitions", String.valueOf(STATE_PARTITIONS));
        props.put("quarkus.security.users.embedded.plain-text", "true");
        props.put("mirror.source.allowlist", "localhost,127.0.0.0/8");
        for (String user : List.of("viewer", "admin")) {
            props.put("quarkus.security.users.embedded.users." + user, user + "-password");
        }
        props.put("quarkus.security.users.embedded.roles.viewer", "mirror-viewer");
        props.put("quarkus.security.users.embedded.roles.admin", "mirror-admin");
        for (String name : List.of("auth-a", "auth-b")) {
            instances.add(bed.newService(name + "-" + stateTopic, props));
        }
        instances.forEach(ServiceProcess::launch);
        instances.forEach(i -> i.awaitReady(Duration.ofSeconds(90)));
        await("two members")
                .atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(500))
                .untilAsserted(() -> {
                    for (ServiceProcess instance : instances) {
                        JsonPath members = instancesOf(instance);
                        assertThat(members.getList("instances")).hasSize(2);
                        assertThat(members.getList("instances.statePartitions.flatten()"))
                                .hasSize(STATE_PARTITIONS);
                    }
                });
    }

    @AfterAll
    static void stopInstances() {
        instances.forEach(ServiceProcess::stop);
    }

    @Test
    void theOwnerShouldAuthenticateAuthorizeAndAuditAForwardedRequestOnce() {
        // Given a mirror name owned by the second instance, asked of the first
        ServiceProcess first = instances.get(0);
        ServiceProcess owner = instances.get(1);
        String name = nameOwnedBy(owner);

        // When an admin creates it and a viewer tries to change it, both through the first instance
        as(first, "admin", "admin-password")
                .body(createBody(name, sourceConfig()))
                .post("/v1/mirrors")
                .then()
                .statusCode(201);
        as(first, "viewer", "viewer-password")
                .body(Map.of("set", Map.of("mirror.truncation.policy", "recreate")))
                .patch("/v1/mirrors/" + name + "/config")
                .then()
                .statusCode(403)
                .body("errorCode", org.hamcrest.Matchers.equalTo("CLUSTER_MIRROR_AUTHORIZATION_FAILED"));
        // and someone with a wrong password asks to delete it
        as(first, "admin", "wrong")
                .delete("/v1/mirrors/" + name)
                .then()
                .statusCode(401)
                .body("errorCode", org.hamcrest.Matchers.equalTo("AUTHENTICATION_FAILED"));

        // Then the owner decided and audited each, naming the instance that forwarded it; that one audited none
        String firstId = instancesOf(first, "admin").getString("answeredBy");
        await("the owner's audit lines")
                .atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(auditLines(owner, name))
                        .anySatisfy(line -> assertThat(line)
                                .contains("principal=admin operation=CREATE")
                                .contains("outcome=succeeded")
                                .contains("forwardedBy=" + firstId))
                        .anySatisfy(line -> assertThat(line)
                                .contains("principal=viewer operation=ALTER")
                                .contains("outcome=denied")
                                .contains("forwardedBy=" + firstId)));
        assertThat(auditLines(first, name)).isEmpty();
        // and the mirror is as the admin created it
        as(first, "viewer", "viewer-password")
                .get("/v1/mirrors/" + name)
                .then()
                .statusCode(200)
                .body("config.'mirror.truncation.policy'", org.hamcrest.Matchers.nullValue());
    }

    private static List<String> auditLines(ServiceProcess instance, String mirror) {
        return instance.log()
                .lines()
                .filter(l -> l.contains("[io.clustermirror.audit]") && l.contains("mirror=" + mirror))
                .toList();
    }

    private static RequestSpecification as(ServiceProcess instance, String user, String password) {
        return RestAssured.given()
                .baseUri(instance.baseUri().toString())
                .auth()
                .preemptive()
                .basic(user, password)
                .contentType(ContentType.JSON);
    }

    private static JsonPath instancesOf(ServiceProcess instance) {
        return instancesOf(instance, "admin");
    }

    private static JsonPath instancesOf(ServiceProcess instance, String user) {
        return as(instance, user, user + "-password")
                .get("/v1/instances")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();
    }

    private static String nameOwnedBy(ServiceProcess instance) {
        return nameOwnedBy(instancesOf(instance), STATE_PARTITIONS, "auth");
    }
}
