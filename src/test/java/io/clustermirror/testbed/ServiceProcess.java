package io.clustermirror.testbed;

import static org.awaitility.Awaitility.await;

import io.clustermirror.embedded.KafkaBrokerProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The packaged service ({@code target/quarkus-app/quarkus-run.jar}, or the native executable when the build made one:
 * {@code ./mvnw verify -Dnative}) run as its own process, the way users run it: tests talk to it over HTTP, restart
 * it, and kill it with SIGKILL.
 */
public final class ServiceProcess implements AutoCloseable {

    /**
     * The native executable the ITs run instead of the jar (failsafe's {@code native.image.path}, set by the
     * {@code native} profile), or null.
     */
    public static final String NATIVE_EXECUTABLE = System.getProperty("native.image.path");

    private final String name;
    private final Path appDir;
    private final Path logFile;
    private final Map<String, String> properties;
    private final int port;
    private Process process;

    ServiceProcess(String name, Path appDir, Path workDir, String destinationBootstrap, Map<String, String> overrides) {
        this.name = name;
        this.appDir = appDir;
        this.logFile = workDir.resolve(name + ".log");
        this.port = Ports.free();
        Map<String, String> props = new LinkedHashMap<>();
        props.put("quarkus.http.port", String.valueOf(port));
        props.put("kafka.bootstrap.servers", destinationBootstrap);
        props.put("mirror.state.topic.num.partitions", "5");
        props.put("mirror.source.request.timeout.ms", "3000");
        props.put("mirror.destination.retry.backoff.ms", "500");
        // the control plane is tested open except by the security tests, which set this to false with a mechanism
        props.put("mirror.http.auth.disabled", "true");
        props.putAll(overrides);
        this.properties = Map.copyOf(props);
    }

    public URI baseUri() {
        return URI.create("http://localhost:" + port);
    }

    public int port() {
        return port;
    }

    /** Starts the process (appending to its log) without waiting for readiness. */
    public synchronized ServiceProcess launch() {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException(name + " is already running");
        }
        List<String> command = new ArrayList<>();
        if (NATIVE_EXECUTABLE != null) { // a native executable takes the same -Xmx and -D options
            command.add(NATIVE_EXECUTABLE);
            command.add("-Xmx256m");
            properties.forEach((k, v) -> command.add("-D" + k + "=" + v));
        } else {
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            command.add("-Xmx256m");
            // C1 only, like the test bed's brokers (decisions §54): the suite starts some fifty services that live
            // for seconds to minutes, and C2 compiling took 40% of each start's CPU (9.5 CPU-s against 5.6 to ready).
            // The JIT tier changes the speed, not what the service does; the benchmarks run the full JIT.
            command.addAll(KafkaBrokerProcess.SHORT_LIVED);
            properties.forEach((k, v) -> command.add("-D" + k + "=" + v));
            command.add("-jar");
            command.add(appDir.resolve("quarkus-run.jar").toString());
        }
        try {
            Files.createDirectories(logFile.getParent());
            process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** Starts and waits until {@code /q/health/ready} reports UP. */
    public ServiceProcess start() {
        launch();
        awaitReady(Duration.ofSeconds(90));
        return this;
    }

    public void awaitReady(Duration timeout) {
        await("service " + name + " ready")
                .atMost(timeout)
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    if (!process.isAlive()) {
                        throw new IllegalStateException(name + " exited with " + process.exitValue() + ":\n" + log());
                    }
                    return readyStatus() == 200;
                });
    }

    /** HTTP status of {@code /q/health/ready}, or -1 when nothing answers. */
    public int readyStatus() {
        try {
            HttpResponse<Void> response = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(baseUri().resolve("/q/health/ready"))
                                    .timeout(Duration.ofSeconds(5))
                                    .build(),
                            HttpResponse.BodyHandlers.discarding());
            return response.statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /**
     * The names of the process's live threads, from a thread dump ({@code jcmd <pid> Thread.print}, the JDK's own
     * tool beside the {@code java} that runs the service): to see which threads a test's actions added. A native
     * executable has no attach mechanism for jcmd.
     */
    public List<String> threadNames() {
        if (NATIVE_EXECUTABLE != null) {
            throw new UnsupportedOperationException("jcmd cannot dump the threads of a native executable");
        }
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        try {
            Process dump = new ProcessBuilder(jcmd.toString(), String.valueOf(process.pid()), "Thread.print")
                    .redirectErrorStream(true)
                    .start();
            String out = new String(dump.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!dump.waitFor(60, TimeUnit.SECONDS) || dump.exitValue() != 0) {
                throw new IllegalStateException("jcmd Thread.print of " + name + " failed:\n" + out);
            }
            // a Java thread's entry starts with its quoted name and id: "mirror-worker-1" #52 daemon prio=5 ...
            // (the JVM's own threads, GC and VM, have no id and are not Java threads)
            Pattern entry = Pattern.compile("^\"(.*)\" #\\d+ ");
            return out.lines()
                    .map(entry::matcher)
                    .filter(Matcher::find)
                    .map(m -> m.group(1))
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** SIGKILL: no shutdown hook runs, as in a crash. */
    public void kill() {
        if (process != null) {
            process.destroyForcibly();
            waitFor(Duration.ofSeconds(30));
        }
    }

    /** SIGSTOP: the process stops where it is (a long GC pause, a frozen VM), its sockets open. */
    public void pause() {
        signal("STOP");
    }

    /** SIGCONT: a paused process runs on from where it stopped. */
    public void resume() {
        signal("CONT");
    }

    private void signal(String name) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + name, String.valueOf(process.pid()))
                    .redirectErrorStream(true)
                    .start();
            if (kill.waitFor() != 0) {
                throw new IllegalStateException("kill -" + name + " " + process.pid() + ": "
                        + new String(kill.getInputStream().readAllBytes()));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** SIGTERM and wait for the graceful shutdown. */
    public void stop() {
        if (process != null && process.isAlive()) {
            process.destroy();
            if (waitFor(Duration.ofSeconds(30)) == null) {
                kill();
            }
        }
    }

    /** Waits for the process to exit; its exit code, or null if it is still running after the timeout. */
    public Integer waitFor(Duration timeout) {
        try {
            return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS) ? process.exitValue() : null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    public boolean isAlive() {
        return process != null && process.isAlive();
    }

    /** Everything the process printed so far (all launches). */
    public String log() {
        try {
            return Files.exists(logFile) ? Files.readString(logFile) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        stop();
    }
}
