package io.clustermirror.helm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Helm chart (helm/cluster-mirror) linted and rendered with Helm's own code (helm-java, no helm binary, no cluster)
 * for each documented values profile (helm/cluster-mirror/profiles), with assertions on the rendered manifests. Only the
 * linux-amd64 natives are on the test classpath: elsewhere the test is skipped (reported as such).
 */
@EnabledOnOs(value = OS.LINUX, architectures = "amd64")
class HelmChartTest {

    private static final Path CHART = Path.of("helm", "cluster-mirror");
    private static final Path PROFILES = CHART.resolve("profiles");
    private static final Path KIT = Path.of("observability");
    private static final ObjectMapper YAML = new YAMLMapper();

    @Test
    void defaultsRefuseToRenderAndNameTheValuesToSet() {
        assertThatThrownBy(() -> template().call())
                .hasMessageContaining("choose how the REST control plane authenticates callers")
                .hasMessageContaining("auth.basic.usersSecret")
                .hasMessageContaining("auth.jwt.publicKeyLocation")
                .hasMessageContaining("auth.mtls.clientCaSecret")
                .hasMessageContaining("auth.disabled=true");
    }

    @Test
    void defaultsLintStrictly() {
        // helm lint (Helm 3.21 in helm-java) does not report a template's fail: the refusal is asserted on template
        LintResult result = new Helm(CHART).lint().strict().call();
        assertThat(result.isFailed()).as("%s", result.getMessages()).isFalse();
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "basic.yaml",
                "jwt.yaml",
                "mtls.yaml",
                "auth-disabled.yaml",
                "basic.yaml,state-encryption.yaml",
                "jwt.yaml,source-allowlist.yaml"
            })
    void eachProfileLintsStrictly(String profiles, @TempDir Path dir) throws IOException {
        Path chart = chartWithValues(dir, profiles.split(","));
        LintResult result = new Helm(chart).lint().strict().call();
        assertThat(result.isFailed()).as("%s", result.getMessages()).isFalse();
    }

    @Test
    void basicUsersComeFromTheirSecretAsAConfigLocation() throws IOException {
        JsonNode pod = podSpec(render("basic.yaml"));
        Map<String, String> env = env(pod);
        assertThat(env).containsEntry("QUARKUS_CONFIG_LOCATIONS", "/etc/cluster-mirror/users/users.properties");
        assertThat(env).doesNotContainKeys("MIRROR_HTTP_AUTH_DISABLED", "MP_JWT_VERIFY_PUBLICKEY_LOCATION");
        assertThat(volume(pod, "users").at("/secret/secretName").asText()).isEqualTo("cluster-mirror-users");
        assertThat(mount(pod, "users").at("/mountPath").asText()).isEqualTo("/etc/cluster-mirror/users");
        assertThat(probe(pod, "readinessProbe").at("/httpGet/port").asText()).isEqualTo("http");
        // the instance is named and reached by its pod (GET /v1/instances)
        assertThat(env).containsEntry("MIRROR_INSTANCE_ADVERTISED_URL", "http://$(POD_IP):8080");
        assertThat(fieldRef(pod, "POD_IP")).isEqualTo("status.podIP");
        assertThat(fieldRef(pod, "MIRROR_INSTANCE_ID")).isEqualTo("metadata.name");
        assertHardened(pod);
    }

    @Test
    void threeReplicasByDefaultRollOneAtATimeOnDifferentNodesUnderADisruptionBudget() throws IOException {
        List<JsonNode> one =
                render(template().withValuesFile(PROFILES.resolve("basic.yaml")).set("replicaCount", "1"));
        assertThat(one.stream().map(m -> m.path("kind").asText())).doesNotContain("PodDisruptionBudget");

        List<JsonNode> three = render("basic.yaml");

        JsonNode deployment = kind(three, "Deployment");
        assertThat(deployment.at("/spec/replicas").asInt()).isEqualTo(3);
        assertThat(deployment.at("/spec/strategy/type").asText()).isEqualTo("RollingUpdate");
        assertThat(deployment.at("/spec/strategy/rollingUpdate/maxUnavailable").asInt())
                .isZero();
        JsonNode pod = podSpec(three);
        assertThat(pod.at("/terminationGracePeriodSeconds").asInt()).isGreaterThanOrEqualTo(30);
        JsonNode term =
                pod.at("/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/0/podAffinityTerm");
        assertThat(term.at("/topologyKey").asText()).isEqualTo("kubernetes.io/hostname");
        assertThat(term.at("/labelSelector/matchLabels/app.kubernetes.io~1instance")
                        .asText())
                .isEqualTo("mirror");
        JsonNode budget = kind(three, "PodDisruptionBudget");
        assertThat(budget.at("/spec/maxUnavailable").asInt()).isEqualTo(1);
        assertThat(budget.at("/spec/selector/matchLabels")).isEqualTo(deployment.at("/spec/selector/matchLabels"));
    }

    @Test
    void jwtGivesKeyIssuerAndRolesClaim() throws IOException {
        JsonNode pod = podSpec(render("jwt.yaml"));
        assertThat(env(pod))
                .containsEntry(
                        "MP_JWT_VERIFY_PUBLICKEY_LOCATION",
                        "https://keycloak.example.com/realms/kafka/protocol/openid-connect/certs")
                .containsEntry("MP_JWT_VERIFY_ISSUER", "https://keycloak.example.com/realms/kafka")
                .containsEntry("SMALLRYE_JWT_PATH_GROUPS", "realm_access/roles")
                .doesNotContainKey("QUARKUS_CONFIG_LOCATIONS");
        assertHardened(pod);
    }

    @Test
    void jwtWithoutIssuerIsRefused() {
        assertThatThrownBy(() -> template()
                        .set("auth.jwt.publicKeyLocation", "https://idp/certs")
                        .call())
                .hasMessageContaining("auth.jwt.issuer is required");
    }

    @Test
    void mtlsServesHttpsOnlyWithTheClientCaAndCertificateRoles() throws IOException {
        List<JsonNode> manifests = render("mtls.yaml");
        JsonNode pod = podSpec(manifests);
        assertThat(env(pod)).containsEntry("QUARKUS_CONFIG_LOCATIONS", "/etc/cluster-mirror/config/tls.properties");
        assertThat(volume(pod, "tls").at("/secret/secretName").asText()).isEqualTo("cluster-mirror-tls");
        assertThat(volume(pod, "client-ca").at("/secret/secretName").asText()).isEqualTo("cluster-mirror-client-ca");
        assertThat(volume(pod, "config").at("/configMap/name").asText()).isEqualTo("mirror-config");
        JsonNode container = pod.at("/containers/0");
        assertThat(container.at("/ports").findValuesAsText("name")).containsExactly("https");
        assertThat(env(pod)).containsEntry("MIRROR_INSTANCE_ADVERTISED_URL", "https://$(POD_IP):8443");
        for (String probe : List.of("startupProbe", "livenessProbe", "readinessProbe")) {
            assertThat(probe(pod, probe).at("/httpGet/scheme").asText()).isEqualTo("HTTPS");
            assertThat(probe(pod, probe).at("/httpGet/port").asText()).isEqualTo("https");
        }
        String tls = kind(manifests, "ConfigMap").at("/data/tls.properties").asText();
        assertThat(tls.lines())
                .contains(
                        "quarkus.tls.key-store.pem.0.cert=/etc/cluster-mirror/tls/tls.crt",
                        "quarkus.tls.key-store.pem.0.key=/etc/cluster-mirror/tls/tls.key",
                        "quarkus.tls.trust-store.pem.certs=/etc/cluster-mirror/client-ca/ca.crt",
                        "quarkus.http.ssl-port=8443",
                        "quarkus.http.insecure-requests=disabled",
                        "quarkus.http.auth.certificate-role-properties=/etc/cluster-mirror/config/cert-roles.properties");
        String roles =
                kind(manifests, "ConfigMap").at("/data/cert-roles.properties").asText();
        assertThat(roles.lines()).containsExactlyInAnyOrder("ops-bot=mirror-operator", "dr-runbook=mirror-admin");
        JsonNode service = kind(manifests, "Service");
        assertThat(service.at("/spec/ports").findValuesAsText("name")).containsExactly("https");
        assertHardened(pod);
    }

    @Test
    void mtlsWithoutServerCertificateIsRefused() {
        assertThatThrownBy(() -> template()
                        .set("auth.mtls.clientCaSecret", "ca")
                        .set("auth.mtls.certRoles.bot", "mirror-viewer")
                        .call())
                .hasMessageContaining("auth.mtls.clientCaSecret needs tls.secret");
    }

    @Test
    void stateEncryptionKeysComeFromTheirSecret() throws IOException {
        JsonNode pod = podSpec(render("basic.yaml", "state-encryption.yaml"));
        assertThat(env(pod)).containsEntry("MIRROR_STATE_ENCRYPTION_KEY_FILE", "/etc/cluster-mirror/state-keys/keys");
        assertThat(volume(pod, "state-keys").at("/secret/secretName").asText()).isEqualTo("cluster-mirror-state-keys");
        assertThat(mount(pod, "state-keys").at("/readOnly").asBoolean()).isTrue();
    }

    @Test
    void sourceAllowlistIsJoined() throws IOException {
        JsonNode pod = podSpec(render("jwt.yaml", "source-allowlist.yaml"));
        assertThat(env(pod)).containsEntry("MIRROR_SOURCE_ALLOWLIST", "kafka-*.prod.example.com:9093,10.20.0.0/16");
    }

    @Test
    void authDisabledMapsToTheServicesOwnOptOut() throws IOException {
        JsonNode pod = podSpec(render("auth-disabled.yaml"));
        assertThat(env(pod)).containsEntry("MIRROR_HTTP_AUTH_DISABLED", "true");
        assertHardened(pod);
    }

    @Test
    void theDashboardAndTheAlertRulesAreRenderedAsConfigMapsOfTheObservabilityKit() throws IOException {
        List<JsonNode> manifests = render(template().withValuesFile(PROFILES.resolve("basic.yaml")));

        JsonNode dashboard = named(manifests, "ConfigMap", "mirror-dashboard");
        assertThat(dashboard.at("/metadata/labels/grafana_dashboard").asText()).isEqualTo("1");
        assertThat(dashboard.at("/data/cluster-mirror-dashboard.json").asText())
                .isEqualTo(Files.readString(KIT.resolve("grafana/cluster-mirror-dashboard.json"))
                        .stripTrailing());
        JsonNode alerts = named(manifests, "ConfigMap", "mirror-alerts");
        assertThat(alerts.at("/data/cluster-mirror-alerts.yaml").asText())
                .isEqualTo(Files.readString(KIT.resolve("prometheus/cluster-mirror-alerts.yaml"))
                        .stripTrailing());
        // the prometheus-operator resources need its CRDs: only when asked for
        assertThat(manifests.stream().map(m -> m.path("kind").asText()))
                .doesNotContain("PrometheusRule", "ServiceMonitor");
    }

    @Test
    void thePrometheusRuleHoldsTheKitsRulesAndTheServiceMonitorScrapesTheMetrics() throws IOException {
        List<JsonNode> manifests = render(template()
                .withValuesFile(PROFILES.resolve("basic.yaml"))
                .set("observability.prometheusRule.enabled", "true")
                .set("observability.prometheusRule.labels.release", "kube-prometheus")
                .set("observability.serviceMonitor.enabled", "true"));

        JsonNode rule = kind(manifests, "PrometheusRule");
        assertThat(rule.at("/metadata/labels/release").asText()).isEqualTo("kube-prometheus");
        assertThat(rule.at("/spec/groups"))
                .isEqualTo(YAML.readTree(KIT.resolve("prometheus/cluster-mirror-alerts.yaml")
                                .toFile())
                        .get("groups"));
        JsonNode monitor = kind(manifests, "ServiceMonitor");
        assertThat(monitor.at("/spec/selector/matchLabels"))
                .isEqualTo(kind(manifests, "Service").at("/spec/selector"));
        JsonNode endpoint = monitor.at("/spec/endpoints/0");
        assertThat(endpoint.at("/path").asText()).isEqualTo("/q/metrics");
        assertThat(endpoint.at("/port").asText()).isEqualTo("http");
        assertThat(endpoint.has("basicAuth")).isFalse();
    }

    @Test
    void aServiceMonitorOfProtectedOperationsEndpointsNeedsCredentials() throws IOException {
        TemplateCommand protectedEndpoints = template()
                .withValuesFile(PROFILES.resolve("basic.yaml"))
                .set("auth.protectOperationsEndpoints", "true")
                .set("observability.serviceMonitor.enabled", "true");
        assertThatThrownBy(protectedEndpoints::call)
                .hasMessageContaining("observability.serviceMonitor.basicAuthSecret");

        JsonNode endpoint = kind(
                        render(protectedEndpoints.set("observability.serviceMonitor.basicAuthSecret", "prometheus")),
                        "ServiceMonitor")
                .at("/spec/endpoints/0");
        assertThat(endpoint.at("/basicAuth/username/name").asText()).isEqualTo("prometheus");
        assertThat(endpoint.at("/basicAuth/password/key").asText()).isEqualTo("password");
    }

    @Test
    void theChartsCopiesOfTheKitAreTheKit() throws IOException {
        // Helm reads only files inside the chart: observability/ is copied into files/, and must not drift from it
        assertThat(Files.readString(CHART.resolve("files/cluster-mirror-dashboard.json")))
                .isEqualTo(Files.readString(KIT.resolve("grafana/cluster-mirror-dashboard.json")));
        assertThat(Files.readString(CHART.resolve("files/cluster-mirror-alerts.yaml")))
                .isEqualTo(Files.readString(KIT.resolve("prometheus/cluster-mirror-alerts.yaml")));
    }

    /** The pod as a Kubernetes operator (and the restricted Pod Security Standard) expects it. */
    private static void assertHardened(JsonNode pod) {
        assertThat(pod.at("/securityContext/runAsNonRoot").asBoolean()).isTrue();
        assertThat(pod.at("/securityContext/seccompProfile/type").asText()).isEqualTo("RuntimeDefault");
        assertThat(pod.at("/automountServiceAccountToken").asBoolean(true)).isFalse();
        JsonNode container = pod.at("/containers/0");
        JsonNode security = container.at("/securityContext");
        assertThat(security.at("/readOnlyRootFilesystem").asBoolean()).isTrue();
        assertThat(security.at("/allowPrivilegeEscalation").isBoolean()).isTrue();
        assertThat(security.at("/allowPrivilegeEscalation").asBoolean()).isFalse();
        assertThat(YAML.convertValue(security.at("/capabilities/drop"), new TypeReference<List<String>>() {}))
                .containsExactly("ALL");
        assertThat(mount(pod, "tmp").at("/mountPath").asText()).isEqualTo("/tmp");
        assertThat(volume(pod, "tmp").has("emptyDir")).isTrue();
        assertThat(probe(pod, "livenessProbe").at("/httpGet/path").asText()).isEqualTo("/q/health/live");
        assertThat(probe(pod, "readinessProbe").at("/httpGet/path").asText()).isEqualTo("/q/health/ready");
        assertThat(probe(pod, "startupProbe").at("/httpGet/path").asText()).isEqualTo("/q/health/live");
        assertThat(container.at("/resources/requests/cpu").asText()).isNotEmpty();
        assertThat(container.at("/resources/requests/memory").asText()).isNotEmpty();
        assertThat(container.at("/resources/limits/memory").asText()).isNotEmpty();
    }

    private static TemplateCommand template() {
        return new Helm(CHART).template().withName("mirror");
    }

    private static List<JsonNode> render(String... profiles) throws IOException {
        TemplateCommand command = template();
        for (String profile : profiles) {
            command = command.withValuesFile(PROFILES.resolve(profile));
        }
        return render(command);
    }

    private static List<JsonNode> render(TemplateCommand command) throws IOException {
        List<JsonNode> manifests = new ArrayList<>();
        try (var parser = new YAMLFactory().createParser(command.call())) {
            Iterator<JsonNode> documents = YAML.readValues(parser, JsonNode.class);
            while (documents.hasNext()) {
                JsonNode document = documents.next();
                if (document != null && !document.isMissingNode() && !document.isNull()) {
                    manifests.add(document);
                }
            }
        }
        return manifests;
    }

    private static JsonNode kind(List<JsonNode> manifests, String kind) {
        return manifests.stream()
                .filter(m -> kind.equals(m.path("kind").asText()))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + " rendered"));
    }

    private static JsonNode named(List<JsonNode> manifests, String kind, String name) {
        return manifests.stream()
                .filter(m -> kind.equals(m.path("kind").asText())
                        && name.equals(m.at("/metadata/name").asText()))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + " " + name + " rendered"));
    }

    private static JsonNode podSpec(List<JsonNode> manifests) {
        return kind(manifests, "Deployment").at("/spec/template/spec");
    }

    private static Map<String, String> env(JsonNode pod) {
        Map<String, String> env = new LinkedHashMap<>();
        pod.at("/containers/0/env")
                .forEach(e -> env.put(e.path("name").asText(), e.path("value").asText()));
        return env;
    }

    /** The pod field an environment variable is taken from. */
    private static String fieldRef(JsonNode pod, String variable) {
        return named(pod.at("/containers/0/env"), variable)
                .at("/valueFrom/fieldRef/fieldPath")
                .asText();
    }

    private static JsonNode named(JsonNode list, String name) {
        for (JsonNode element : list) {
            if (name.equals(element.path("name").asText())) {
                return element;
            }
        }
        throw new AssertionError("no " + name + " in " + list);
    }

    private static JsonNode volume(JsonNode pod, String name) {
        return named(pod.at("/volumes"), name);
    }

    private static JsonNode mount(JsonNode pod, String name) {
        return named(pod.at("/containers/0/volumeMounts"), name);
    }

    private static JsonNode probe(JsonNode pod, String probe) {
        return pod.at("/containers/0/" + probe);
    }

    /** A copy of the chart whose values.yaml is the chart's merged with these profiles (lint takes no values file). */
    private static Path chartWithValues(Path dir, String... profiles) throws IOException {
        Path copy = dir.resolve("cluster-mirror");
        try (Stream<Path> files = Files.walk(CHART)) {
            for (Path file : files.sorted(Comparator.naturalOrder()).toList()) {
                Path target = copy.resolve(CHART.relativize(file).toString());
                if (Files.isDirectory(file)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(file, target);
                }
            }
        }
        ObjectNode values =
                (ObjectNode) YAML.readTree(CHART.resolve("values.yaml").toFile());
        for (String profile : profiles) {
            merge(values, (ObjectNode) YAML.readTree(PROFILES.resolve(profile).toFile()));
        }
        YAML.writeValue(copy.resolve("values.yaml").toFile(), values);
        return copy;
    }

    private static void merge(ObjectNode into, ObjectNode from) {
        from.properties().forEach(field -> {
            JsonNode existing = into.get(field.getKey());
            if (existing instanceof ObjectNode target && field.getValue() instanceof ObjectNode source) {
                merge(target, source);
            } else {
                into.set(field.getKey(), field.getValue());
            }
        });
    }
}
