package io.clustermirror.bench;

import io.clustermirror.embedded.KafkaBrokerProcess;
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

/** What the benchmarks share: two throughput-tuned brokers, the packaged service as a process, HTTP and CPU helpers. */
final class BenchSupport {

    private BenchSupport() {}

    /** Source and destination brokers under {@code root}, started in parallel. */
    static KafkaBrokerProcess[] startClusters(Path root) throws Exception {
        return startClusters(root, Map.of());
    }

    /** Source (with these broker settings) and destination brokers under {@code root}, started in parallel. */
    static KafkaBrokerProcess[] startClusters(Path root, Map<String, String> sourceSettings) throws Exception {
        String classpath = KafkaBrokerProcess.classpathFrom(Path.of("target", "kafka-broker.classpath"));
        KafkaBrokerProcess source = new KafkaBrokerProcess(
                "source",
                root.resolve("source"),
                free(),
                free(),
                classpath,
                sourceSettings,
                KafkaBrokerProcess.THROUGHPUT);
        KafkaBrokerProcess destination = new KafkaBrokerProcess(
                "destination",
                root.resolve("destination"),
                free(),
                free(),
                classpath,
                Map.of(),
                KafkaBrokerProcess.THROUGHPUT);
        CompletableFuture.allOf(
                        CompletableFuture.runAsync(() -> source.start(Duration.ofSeconds(120))),
                        CompletableFuture.runAsync(() -> destination.start(Duration.ofSeconds(120))))
                .join();
        return new KafkaBrokerProcess[] {source, destination};
    }

    /** The packaged service running against {@code destination}, ready; logs to {@code root/service.log}. */
    static Service startService(KafkaBrokerProcess destination, Path root, String... properties) throws Exception {
        int port = free();
        List<String> command = new ArrayList<>(List.of(
                java(),
                "-Xmx1g",
                "-Dquarkus.http.port=" + port,
                "-Dkafka.bootstrap.servers=" + destination.bootstrapServers(),
                "-Dmirror.state.topic.num.partitions=1",
                // local brokers and a local port: the control plane runs open, as it must say so explicitly
                "-Dmirror.http.auth.disabled=true",
                "-Dquarkus.log.level=WARN"));
        for (String property : properties) {
            command.add("-D" + property);
        }
        command.addAll(List.of(
                "-jar",
                Path.of("target", "quarkus-app", "quarkus-run.jar")
                        .toAbsolutePath()
                        .toString()));
        java.nio.file.Files.createDirectories(root);
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(root.resolve("service.log").toFile())
                .start();
        Service service = new Service(process, "http://localhost:" + port, HttpClient.newHttpClient());
        long deadline = System.currentTimeMillis() + 90_000;
        while (service.status("/q/health/ready") != 200) {
            if (System.currentTimeMillis() > deadline || !process.isAlive()) {
                service.close();
                throw new IllegalStateException("service not ready; see " + root.resolve("service.log"));
            }
            Thread.sleep(200);
        }
        return service;
    }

    /** The service process and how to talk to it. */
    record Service(Process process, String base, HttpClient http) implements AutoCloseable {

        int status(String path) {
            try {
                return http.send(
                                HttpRequest.newBuilder(URI.create(base + path)).build(),
                                HttpResponse.BodyHandlers.discarding())
                        .statusCode();
            } catch (Exception e) {
                return -1;
            }
        }

        String get(String path) throws Exception {
            return http.send(
                            HttpRequest.newBuilder(URI.create(base + path)).build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body();
        }

        void post(String path, String json) throws Exception {
            HttpResponse<String> response = http.send(
                    HttpRequest.newBuilder(URI.create(base + path))
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(json))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() >= 300) {
                throw new IllegalStateException(path + " answered " + response.statusCode() + ": " + response.body());
            }
        }

        double cpuSeconds() {
            return BenchSupport.cpuSeconds(process);
        }

        @Override
        public void close() {
            process.destroy();
            try {
                process.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    static Admin admin(KafkaBrokerProcess broker) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()));
    }

    static double cpuSeconds(KafkaBrokerProcess broker) {
        return ProcessHandle.of(broker.pid())
                .flatMap(h -> h.info().totalCpuDuration())
                .map(d -> d.toNanos() / 1e9)
                .orElse(0.0);
    }

    static double cpuSeconds(Process process) {
        return process.info().totalCpuDuration().map(d -> d.toNanos() / 1e9).orElse(0.0);
    }

    static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    static int free() throws Exception {
        try (var socket = new java.net.ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
