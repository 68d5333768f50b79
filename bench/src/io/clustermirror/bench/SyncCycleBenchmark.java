package io.clustermirror.bench;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

import io.clustermirror.embedded.KafkaBrokerProcess;

/**
 * Duration of one metadata sync cycle of a mirror that mirrors N source topics (default 1,000), each with a
 * non-default config and a committed consumer group offset: the service is started, the topics are discovered
 * by pattern and mirrored, then the cycles of a steady window are timed from the service's own
 * {@code cluster_mirror_sync_cycle_seconds} timer. Run with {@code bench/sync-cycle.sh [topics]}.
 */
public final class SyncCycleBenchmark {

    private SyncCycleBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int topics = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        Path root = Path.of("target", "bench", "sync-" + ProcessHandle.current().pid()).toAbsolutePath();
        String classpath = KafkaBrokerProcess.classpathFrom(Path.of("target", "kafka-broker.classpath"));
        KafkaBrokerProcess source = new KafkaBrokerProcess("source", root.resolve("source"), free(), free(), classpath, Map.of(),
                KafkaBrokerProcess.THROUGHPUT);
        KafkaBrokerProcess destination = new KafkaBrokerProcess("destination", root.resolve("destination"), free(), free(), classpath,
                Map.of(), KafkaBrokerProcess.THROUGHPUT);
        try (source; destination) {
            CompletableFuture.allOf(CompletableFuture.runAsync(() -> source.start(Duration.ofSeconds(120))),
                    CompletableFuture.runAsync(() -> destination.start(Duration.ofSeconds(120)))).join();
            System.out.printf("Creating %,d source topics with a config and a committed group offset each...%n", topics);
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, source.bootstrapServers()))) {
                List<NewTopic> newTopics = new ArrayList<>();
                for (int i = 0; i < topics; i++) {
                    newTopics.add(new NewTopic(String.format("sync.t%04d", i), 1, (short) 1).configs(Map.of("retention.ms", "86400000")));
                }
                admin.createTopics(newTopics).all().get();
                for (int i = 0; i < topics; i += 100) {
                    Map<TopicPartition, OffsetAndMetadata> offsets = new java.util.HashMap<>();
                    for (int j = i; j < Math.min(topics, i + 100); j++) {
                        offsets.put(new TopicPartition(String.format("sync.t%04d", j), 0), new OffsetAndMetadata(0));
                    }
                    admin.alterConsumerGroupOffsets("bench-group-" + i, offsets).all().get();
                }
            }
            int port = free();
            Process service = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx1g",
                    "-Dquarkus.http.port=" + port, "-Dkafka.bootstrap.servers=" + destination.bootstrapServers(),
                    "-Dmirror.state.topic.num.partitions=1", "-Dmirror.metadata.refresh.interval.ms=2000", "-Dquarkus.log.level=WARN", "-jar",
                    Path.of("target", "quarkus-app", "quarkus-run.jar").toAbsolutePath().toString())).redirectErrorStream(true)
                    .redirectOutput(root.resolve("service.log").toFile()).start();
            try {
                HttpClient http = HttpClient.newHttpClient();
                String base = "http://localhost:" + port;
                long deadline = System.currentTimeMillis() + 90_000;
                while (get(http, base + "/q/health/ready").statusCode() != 200) {
                    if (System.currentTimeMillis() > deadline || !service.isAlive()) {
                        throw new IllegalStateException("service not ready; see " + root.resolve("service.log"));
                    }
                    Thread.sleep(200);
                }
                post(http, base + "/v1/mirrors", "{\"name\":\"sync\",\"config\":{\"bootstrap.servers\":\"" + source.bootstrapServers()
                        + "\",\"mirror.topics.include\":\"sync\\\\..*\"}}");
                long started = System.nanoTime();
                while (mirroring(http, base) < topics) {
                    if (System.nanoTime() - started > Duration.ofMinutes(15).toNanos()) {
                        throw new IllegalStateException("topics were not all mirrored in 15 minutes");
                    }
                    Thread.sleep(1000);
                }
                System.out.printf("All %,d topics discovered and MIRRORING after %.1f s%n", topics, (System.nanoTime() - started) / 1e9);
                double[] before = timer(http, base);
                Thread.sleep(20_000);
                double[] after = timer(http, base);
                double cycles = after[1] - before[1];
                System.out.printf("%nSteady-state sync cycle over %,d topics: %.0f cycles in 20 s, mean %.3f s, max of all cycles %.3f s"
                        + "   (target <= 2 s)%n", topics, cycles, (after[0] - before[0]) / cycles, after[2]);
            } finally {
                service.destroy();
                service.waitFor();
            }
        }
    }

    private static long mirroring(HttpClient http, String base) throws Exception {
        String body = get(http, base + "/v1/mirrors/sync").body();
        return java.util.regex.Pattern.compile("\"MIRRORING\":(\\d+)").matcher(body).results()
                .mapToLong(m -> Long.parseLong(m.group(1))).sum();
    }

    /** sum, count and max of the sync-cycle timer, in seconds. */
    private static double[] timer(HttpClient http, String base) throws Exception {
        double[] values = new double[3];
        for (String line : get(http, base + "/q/metrics").body().split("\n")) {
            if (!line.contains("mirror=\"sync\"")) {
                continue;
            }
            double value = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            if (line.startsWith("cluster_mirror_sync_cycle_seconds_sum")) {
                values[0] = value;
            } else if (line.startsWith("cluster_mirror_sync_cycle_seconds_count")) {
                values[1] = value;
            } else if (line.startsWith("cluster_mirror_sync_cycle_seconds_max")) {
                values[2] = value;
            }
        }
        return values;
    }

    private static HttpResponse<String> get(HttpClient http, String url) {
        try {
            return http.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
        } catch (Exception e) {
            return new FailedResponse(url);
        }
    }

    private static void post(HttpClient http, String url, String json) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(url)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() >= 300) {
            throw new IllegalStateException(url + " answered " + response.statusCode() + ": " + response.body());
        }
    }

    private static int free() throws Exception {
        try (var socket = new java.net.ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /** A stand-in response for a request that could not be sent (the service is still starting). */
    private record FailedResponse(String url) implements HttpResponse<String> {
        public int statusCode() {
            return -1;
        }

        public HttpRequest request() {
            return HttpRequest.newBuilder(URI.create(url)).build();
        }

        public java.util.Optional<HttpResponse<String>> previousResponse() {
            return java.util.Optional.empty();
        }

        public java.net.http.HttpHeaders headers() {
            return java.net.http.HttpHeaders.of(Map.of(), (a, b) -> true);
        }

        public String body() {
            return "";
        }

        public java.util.Optional<javax.net.ssl.SSLSession> sslSession() {
            return java.util.Optional.empty();
        }

        public URI uri() {
            return URI.create(url);
        }

        public HttpClient.Version version() {
            return HttpClient.Version.HTTP_1_1;
        }
    }
}
