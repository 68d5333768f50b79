package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.MirrorError;
import io.micrometer.prometheus.PrometheusConfig;
import io.micrometer.prometheus.PrometheusMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The observability kit (observability/) names only metrics the service exposes: every metric in the Grafana
 * dashboard's queries and the Prometheus rules' expressions must be in a scrape of the running service's /q/metrics.
 */
class ObservabilityMetricsIT extends ServiceIT {

    private static final Path DASHBOARD = Path.of("observability/grafana/cluster-mirror-dashboard.json");
    private static final Path RULES = Path.of("observability/prometheus/cluster-mirror-alerts.yaml");

    /** Not the service's metrics: Prometheus' own scrape health, and kube-state-metrics' pod readiness. */
    private static final Set<String> EXTERNAL = Set.of("up", "kube_pod_status_ready");

    /**
     * Counters registered on their first event only (a halt, a sync error, a FAILED partition, ...), which a healthy
     * mirror never shows. Their names are checked against {@link MirrorMetrics} itself, rendered by the same Prometheus
     * registry the service uses, with each event recorded once.
     */
    private static final Set<String> EVENT_ONLY = Set.of(
            "cluster_mirror_halts_total",
            "cluster_mirror_sync_errors_total",
            "cluster_mirror_partition_failures_total",
            "cluster_mirror_partition_epoch_fencings_total",
            "cluster_mirror_request_errors_total",
            "cluster_mirror_dead_loops_total",
            "cluster_mirror_client_replacements_total",
            "cluster_mirror_flow_deadline_exceeded_total",
            "cluster_mirror_groups_skipped_active_total",
            "cluster_mirror_promotes_total",
            "cluster_mirror_requests_forwarded_total",
            "cluster_mirror_state_group_lease_lapses_total",
            "cluster_mirror_promotion_fence_lift_errors_total");

    private static final Set<String> PROMQL_WORDS = Set.of(
            "and",
            "or",
            "unless",
            "offset",
            "bool",
            "by",
            "without",
            "on",
            "ignoring",
            "group_left",
            "group_right",
            "inf",
            "nan");

    private static final Pattern IDENTIFIER = Pattern.compile("(?<![\\w.:$])([a-zA-Z_:][a-zA-Z0-9_:]*)(\\s*\\()?");

    @Test
    void everyMetricOfTheDashboardAndTheRulesShouldBeExposed() throws Exception {
        // Given: a mirror of its own that mirrored a few records (per-mirror and per-partition series exist), and a
        // refused request (the API error counter)
        String mirror = uniqueName("observability");
        String topic = uniqueName("observability");
        mirrorConverged(mirror, topic, 2, 500, "lz4", "obs");
        api().get("/v1/mirrors/" + uniqueName("no-such-mirror")).then().statusCode(404);

        // When: the names the kit uses
        Map<String, Set<String>> used = new TreeMap<>();
        for (String expr : dashboardQueries()) {
            metricNames(expr)
                    .forEach(n -> used.computeIfAbsent(n, k -> new TreeSet<>())
                            .add(DASHBOARD.getFileName().toString()));
        }
        for (String expr : ruleExpressions()) {
            metricNames(expr)
                    .forEach(n -> used.computeIfAbsent(n, k -> new TreeSet<>())
                            .add(RULES.getFileName().toString()));
        }
        assertThat(used).as("metric names found in the kit").containsKeys("cluster_mirror_partition_lag", "up");
        Set<String> eventOnlyRendered = eventOnlyNamesOfMirrorMetrics();
        assertThat(eventOnlyRendered).as("event-only counters of MirrorMetrics").containsAll(EVENT_ONLY);

        // Then: each is exposed (the lag gauges refresh every 5 s, the first sync cycle's timer may still be coming)
        await("every metric of the observability kit exposed")
                .atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofSeconds(2))
                .untilAsserted(() -> {
                    String scrape = api().get("/q/metrics").then().extract().asString();
                    assertThat(scrape).contains("cluster_mirror_partition_lag{mirror=\"" + mirror + "\"");
                    Set<String> exposed = exposedNames(scrape);
                    List<String> missing = new ArrayList<>();
                    used.forEach((name, files) -> {
                        boolean ok = EXTERNAL.contains(name)
                                || exposed.contains(name)
                                || (EVENT_ONLY.contains(name) && eventOnlyRendered.contains(name));
                        if (!ok) {
                            missing.add(name + " (in " + String.join(", ", files) + ")");
                        }
                    });
                    assertThat(missing)
                            .as("metrics named in observability/ that the service does not expose")
                            .isEmpty();
                });
    }

    /** Every PromQL query of the dashboard: panel targets' {@code expr} and template variables' queries. */
    private static List<String> dashboardQueries() throws Exception {
        JsonNode dashboard = new ObjectMapper().readTree(DASHBOARD.toFile());
        List<String> queries = new ArrayList<>();
        collect(dashboard.path("panels"), "expr", queries);
        for (JsonNode variable : dashboard.path("templating").path("list")) {
            if ("query".equals(variable.path("type").asText())) {
                JsonNode query = variable.path("query");
                queries.add(
                        query.isTextual() ? query.asText() : query.path("query").asText());
            }
        }
        assertThat(queries).as("queries of " + DASHBOARD).isNotEmpty();
        return queries;
    }

    private static void collect(JsonNode node, String field, List<String> into) {
        if (node.isObject()) {
            for (Map.Entry<String, JsonNode> entry : node.properties()) {
                if (entry.getKey().equals(field) && entry.getValue().isTextual()) {
                    into.add(entry.getValue().asText());
                } else {
                    collect(entry.getValue(), field, into);
                }
            }
        } else if (node.isArray()) {
            node.forEach(child -> collect(child, field, into));
        }
    }

    private static List<String> ruleExpressions() throws Exception {
        JsonNode rules = new ObjectMapper(new YAMLFactory()).readTree(RULES.toFile());
        List<String> expressions = new ArrayList<>();
        for (JsonNode group : rules.path("groups")) {
            for (JsonNode rule : group.path("rules")) {
                expressions.add(rule.path("expr").asText());
            }
        }
        assertThat(expressions).as("rules of " + RULES).isNotEmpty().doesNotContain("");
        return expressions;
    }

    /**
     * The metric names of a PromQL expression: identifiers outside strings, label matchers, ranges and grouping
     * clauses that are neither functions (followed by a parenthesis) nor keywords. Grafana's {@code
     * label_values(metric, label)} keeps its metric; Grafana variables ({@code $mirror}) are dropped.
     */
    static Set<String> metricNames(String expr) {
        String s = expr.replaceAll("\"(?:[^\"\\\\]|\\\\.)*\"", "\"\"")
                .replaceAll("\\{[^}]*}", " ")
                .replaceAll("label_values\\(([^,]*),\\s*\\w+\\)", "$1")
                .replaceAll("\\[[^\\]]*\\]", " ")
                .replaceAll("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)", " ")
                .replaceAll("\\$\\{?\\w+}?", " ");
        Set<String> names = new TreeSet<>();
        Matcher m = IDENTIFIER.matcher(s);
        while (m.find()) {
            String word = m.group(1);
            if (m.group(2) == null && !PROMQL_WORDS.contains(word.toLowerCase())) {
                names.add(word);
            }
        }
        return names;
    }

    /** The metric names of a Prometheus text scrape (its samples, not its comments). */
    private static Set<String> exposedNames(String scrape) {
        Set<String> names = new TreeSet<>();
        for (String line : scrape.split("\n")) {
            if (!line.isBlank() && !line.startsWith("#")) {
                names.add(line.split("[{ ]", 2)[0]);
            }
        }
        return names;
    }

    /**
     * What {@link MirrorMetrics} exposes once each of its events happened, in the Prometheus registry the service uses
     * (Quarkus' simpleclient one, deprecated by Micrometer).
     */
    @SuppressWarnings("deprecation")
    private static Set<String> eventOnlyNamesOfMirrorMetrics() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try {
            MirrorMetrics metrics = new MirrorMetrics(registry);
            metrics.mirrorHalted("m");
            metrics.syncError("m", "TopicConfigMetadataSyncError");
            metrics.partitionFailed("m");
            metrics.epochFenced("m");
            metrics.request("m", "fetch", true);
            metrics.deadLoop("m", "fetcher");
            metrics.clientReplaced("source-1");
            metrics.flowDeadlineExceeded("sync", "m");
            metrics.groupSkippedActive("m");
            metrics.forwarded();
            metrics.appendLeaseLapsed();
            metrics.promote("m", "promoted");
            metrics.fenceLiftFailed("m");
            metrics.apiError(MirrorError.UNKNOWN_CLUSTER_MIRROR);
            return exposedNames(registry.scrape());
        } finally {
            registry.close();
        }
    }
}
