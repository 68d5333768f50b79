package io.clustermirror.bench;

import io.clustermirror.embedded.KafkaBrokerProcess;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/** What the benchmarks share: two throughput-tuned brokers, the packaged service as a process, HTTP and CPU helpers. */
final class BenchSupport {

    private BenchSupport() {}

    /** Source and destination brokers under {@code root}, started in parallel. */
    static KafkaBrokerProcess[] startClusters(Path root) throws Exception {
        return startClusters(root, Map.of());
    }

    /**
     * The brokers' JVM options: {@link KafkaBrokerProcess#THROUGHPUT}, and those of {@code -Dbench.broker.jvm} (space
     * separated, {@code %n} replaced by the broker's name), e.g.
     * {@code -Dbench.broker.jvm=-XX:StartFlightRecording=filename=/tmp/%n.jfr,settings=profile} to profile both.
     */
    private static List<String> brokerJvm(String name) {
        List<String> options = new ArrayList<>(KafkaBrokerProcess.THROUGHPUT);
        String extra = System.getProperty("bench.broker.jvm", "").strip();
        if (!extra.isEmpty()) {
            options.addAll(List.of(extra.replace("%n", name).split(" +")));
        }
        return options;
    }

    /** Source (with these broker settings) and destination brokers under {@code root}, started in parallel. */
    static KafkaBrokerProcess[] startClusters(Path root, Map<String, String> sourceSettings) throws Exception {
        String classpath = KafkaBrokerProcess.classpathFrom(Path.of("target", "kafka-broker.classpath"));
        KafkaBrokerProcess source = new KafkaBrokerProcess(
                "source", root.resolve("source"), free(), free(), classpath, sourceSettings, brokerJvm("source"));
        KafkaBrokerProcess destination = new KafkaBrokerProcess(
                "destination",
                root.resolve("destination"),
                free(),
                free(),
                classpath,
                Map.of(),
                brokerJvm("destination"));
        CompletableFuture.allOf(
                        CompletableFuture.runAsync(() -> source.start(Duration.ofSeconds(120))),
                        CompletableFuture.runAsync(() -> destination.start(Duration.ofSeconds(120))))
                .join();
        return new KafkaBrokerProcess[] {source, destination};
    }

    /** The packaged service running against {@code destination}, ready; logs to {@code root/service.log}. */
    static Service startService(KafkaBrokerProcess destination, Path root, String... properties) throws Exception {
        return startService(destination, root, "service", "-Xmx1g", List.of(properties));
    }

    /**
     * The packaged service named {@code name} (its log: {@code root/<name>.log}) with this heap setting, ready. The
     * control plane runs open (a local benchmark), which the service refuses to do unless told.
     */
    static Service startService(
            KafkaBrokerProcess destination, Path root, String name, String heap, List<String> properties)
            throws Exception {
        int port = free();
        List<String> command = new ArrayList<>(List.of(java()));
        command.addAll(List.of(heap.split("\\s+"))); // one or several flags
        command.addAll(List.of(
                "-Dquarkus.http.port=" + port,
                "-Dmirror.http.auth.disabled=true",
                "-Dkafka.bootstrap.servers=" + destination.bootstrapServers(),
                "-Dmirror.state.topic.num.partitions=1",
                // local brokers and a local port: the control plane runs open, as it must say so explicitly
                "-Dmirror.http.auth.disabled=true",
                "-Dquarkus.log.level=WARN"));
        for (String property : properties) {
            command.add("-D" + property);
        }
        // e.g. -Dbench.service.jvm="-XX:StartFlightRecording=filename=/tmp/service.jfr,settings=profile" to profile it
        String jvm = System.getProperty("bench.service.jvm", "").strip();
        if (!jvm.isEmpty()) {
            command.addAll(List.of(jvm.split("\\s+")));
        }
        command.addAll(List.of(
                "-jar",
                Path.of("target", "quarkus-app", "quarkus-run.jar")
                        .toAbsolutePath()
                        .toString()));
        Files.createDirectories(root);
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(root.resolve(name + ".log").toFile())
                .start();
        Service service = new Service(process, "http://localhost:" + port, HttpClient.newHttpClient());
        long deadline = System.currentTimeMillis() + 90_000;
        while (service.status("/q/health/ready") != 200) {
            if (System.currentTimeMillis() > deadline || !process.isAlive()) {
                service.close();
                throw new IllegalStateException("service not ready; see " + root.resolve(name + ".log"));
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
            try {
                postAsync(path, json).get();
            } catch (ExecutionException e) {
                throw e.getCause() instanceof Exception cause ? cause : e;
            }
        }

        /** {@link #post} without waiting: several calls go out at once, as an operator's script may send them. */
        CompletableFuture<Void> postAsync(String path, String json) {
            return http.sendAsync(
                            HttpRequest.newBuilder(URI.create(base + path))
                                    .header("Content-Type", "application/json")
                                    .POST(HttpRequest.BodyPublishers.ofString(json))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .thenAccept(response -> {
                        if (response.statusCode() >= 300) {
                            throw new IllegalStateException(
                                    path + " answered " + response.statusCode() + ": " + response.body());
                        }
                    });
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

    /**
     * A copier class of these benchmarks in its own JVM (classpath: the brokers' jars, the test classes and the
     * service's classes), its output in {@code log}. It returns once the child printed {@code ready}: its set-up is
     * done and it is about to move data, so timing and CPU are counted from there.
     */
    static Process launchCopier(Path log, String heap, String mainClass, String... args) throws Exception {
        String classpath = KafkaBrokerProcess.log4jClasspath(
                        KafkaBrokerProcess.classpathFrom(Path.of("target", "kafka-broker.classpath")))
                + File.pathSeparator
                + Path.of("target", "test-classes").toAbsolutePath();
        List<String> command = new ArrayList<>(List.of(java()));
        command.addAll(List.of(heap.split("\\s+"))); // one or several flags
        // its clients log WARN and above to its log, and format nothing below
        command.add("-Dlog4j2.configurationFile="
                + Path.of("bench", "log4j2.properties").toAbsolutePath());
        // the copiers' counterpart of bench.service.jvm
        String jvm = System.getProperty("bench.copier.jvm", "").strip();
        if (!jvm.isEmpty()) {
            command.addAll(List.of(jvm.split("\\s+")));
        }
        command.addAll(List.of("-cp", classpath, mainClass));
        command.addAll(List.of(args));
        return launch(command, log, "ready");
    }

    /**
     * Starts {@code command}, its output in {@code log}; returns once it printed a line equal to {@code ready} (at
     * once when that is null).
     */
    static Process launch(List<String> command, Path log, String ready) throws Exception {
        Files.createDirectories(log.toAbsolutePath().getParent());
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        var lines = new BufferedReader(new InputStreamReader(process.getInputStream()));
        var out = Files.newBufferedWriter(log);
        CompletableFuture<Void> seen = new CompletableFuture<>();
        Thread drain = new Thread(
                () -> {
                    try (lines;
                            out) {
                        for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                            out.write(line);
                            out.newLine();
                            out.flush();
                            if (line.equals(ready) || ready == null) {
                                seen.complete(null);
                            }
                        }
                    } catch (IOException e) {
                        seen.completeExceptionally(e);
                    }
                    seen.completeExceptionally(new IllegalStateException("it ended before it was ready"));
                },
                "drain-" + log.getFileName());
        drain.setDaemon(true);
        drain.start();
        if (ready == null) {
            return process;
        }
        try {
            seen.get(180, TimeUnit.SECONDS);
        } catch (Exception e) {
            process.destroyForcibly();
            throw new IllegalStateException("copier not ready; see " + log, e);
        }
        return process;
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

    /**
     * Writes the page cache's dirty pages out ({@code sync}) and returns when that is done: a copier measured next does
     * not share the disk and the CPUs with the writeback of what was written before it (the backlog, the copier before
     * it; on this machine the kernel starts writing back only at 10% of the memory dirty, or after 30 s).
     */
    static void syncPageCache() throws Exception {
        Process sync = new ProcessBuilder("sync").inheritIO().start();
        if (sync.waitFor() != 0) {
            throw new IllegalStateException("sync ended with " + sync.exitValue());
        }
        freshMemory();
    }

    /** Bytes of memory freed just before every measured copy ({@link #freshMemory}). */
    static final long FRESH_MEMORY_BYTES = 1L << 30;

    /**
     * Writes and deletes a scratch file of {@link #FRESH_MEMORY_BYTES}: its page cache, freed just now, is what the copy
     * measured next writes into. This machine (a VM) hands memory freed for a few seconds back to its host (free page
     * reporting, up to ~1 GiB kept back), and a page taken back costs ~7 CPU-seconds per GiB in the kernel when it is
     * touched again (measured with dd: ~4 GB/s into recently freed memory, ~130 MB/s into memory given back). Without
     * this, a copier whose broker appends into memory given back runs at that speed, and which copier that is depends
     * on what ran before it (decisions §13).
     */
    static void freshMemory() throws IOException {
        Path scratch = Files.createTempFile(Path.of("target"), "fresh-memory", ".tmp");
        try (FileChannel channel = FileChannel.open(scratch, StandardOpenOption.WRITE)) {
            ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 20);
            for (long written = 0; written < FRESH_MEMORY_BYTES; written += zeros.capacity()) {
                zeros.clear();
                while (zeros.hasRemaining()) {
                    channel.write(zeros);
                }
            }
        } finally {
            Files.delete(scratch); // its dirty pages are dropped, never written back
        }
    }

    /** Clock ticks per second of {@code /proc/<pid>/task/<tid>/stat}'s times: {@code getconf CLK_TCK}, else 100. */
    private static final double CLOCK_TICKS = clockTicks();

    private static double clockTicks() {
        try {
            Process getconf = new ProcessBuilder("getconf", "CLK_TCK").start();
            String out = new String(getconf.getInputStream().readAllBytes()).strip();
            return getconf.waitFor() == 0 ? Double.parseDouble(out) : 100;
        } catch (IOException | RuntimeException e) {
            return 100; // Linux's USER_HZ almost everywhere
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 100;
        }
    }

    /**
     * The CPU-seconds so far of the JIT compiler's threads and of the garbage collector's (and the VM thread's) in
     * process {@code pid}, read per thread from {@code /proc} (Linux; zeros elsewhere, or for threads that ended).
     */
    static double[] jitAndGcSeconds(long pid) {
        double[] seconds = new double[2];
        Path tasks = Path.of("/proc", String.valueOf(pid), "task");
        try (var threads = Files.list(tasks)) {
            for (Path thread : threads.toList()) {
                try {
                    String name = Files.readString(thread.resolve("comm")).strip();
                    int kind = name.startsWith("C1 CompilerThre") || name.startsWith("C2 CompilerThre")
                            ? 0
                            : name.startsWith("GC Thread") || name.startsWith("G1 ") || name.equals("VM Thread")
                                    ? 1
                                    : -1;
                    if (kind >= 0) {
                        String stat = Files.readString(thread.resolve("stat"));
                        String[] fields =
                                stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                        // utime and stime: fields 14 and 15 of stat (12 and 13 after the name), in clock ticks
                        seconds[kind] += (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) / CLOCK_TICKS;
                    }
                } catch (IOException | RuntimeException e) {
                    // the thread ended between the listing and the read
                }
            }
        } catch (IOException e) {
            return seconds;
        }
        return seconds;
    }

    /**
     * The CPU-seconds so far of every thread of process {@code pid} (Linux; empty elsewhere), by thread name with its
     * digits replaced by {@code #}, so that a pool's threads add up under one name.
     */
    static Map<String, Double> threadSeconds(long pid) {
        Map<String, Double> seconds = new TreeMap<>();
        try (var threads = Files.list(Path.of("/proc", String.valueOf(pid), "task"))) {
            for (Path thread : threads.toList()) {
                try {
                    String name =
                            Files.readString(thread.resolve("comm")).strip().replaceAll("[0-9]+", "#");
                    String stat = Files.readString(thread.resolve("stat"));
                    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    seconds.merge(
                            name, (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) / CLOCK_TICKS, Double::sum);
                } catch (IOException | RuntimeException e) {
                    // the thread ended between the listing and the read
                }
            }
        } catch (IOException e) {
            return seconds;
        }
        return seconds;
    }

    static double cpuSeconds(Process process) {
        return cpuSeconds(process.toHandle());
    }

    static double cpuSeconds(ProcessHandle process) {
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
