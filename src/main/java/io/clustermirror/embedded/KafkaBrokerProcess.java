package io.clustermirror.embedded;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jboss.logging.Logger;

/**
 * One single-node KRaft Kafka cluster (broker and controller in one process), or one node of a multi-node one
 * ({@link Quorum}), run as a child JVM from the Apache Kafka jars of Maven Central. Used by the embedded demo and by the
 * integration tests, which stop, restart and kill it for real. Its log goes to {@code <dataDir>/broker.log}.
 * Never part of a production deployment: the broker jars are not packaged.
 */
public final class KafkaBrokerProcess implements AutoCloseable {

    private static final Logger LOGGER = Logger.getLogger(KafkaBrokerProcess.class);

    private final String name;
    private final Path dataDir;
    private final int port;
    private final int controllerPort;
    private final String classpath;
    private final Map<String, String> overrides;
    private final List<String> jvmOptions;
    private final Quorum quorum;
    private Process process;

    /**
     * This process as one node (broker and controller) of a cluster of several, formatted with the shared cluster id
     * and a static voter set. Clients reach it on its port, which it advertises as {@code advertisedPort} (a proxy's,
     * say); brokers replicate over {@code internalPort} and controllers vote over the controller port, so traffic
     * between the nodes never passes whatever stands in front of the client port. Topics default to a replication
     * factor of {@code voters}' size, with one fewer in sync required.
     *
     * @param voters {@code controller.quorum.voters}: {@code id@host:controllerPort,...}
     */
    public record Quorum(String clusterId, int nodeId, String voters, int internalPort, int advertisedPort) {

        int size() {
            return voters.split(",").length;
        }
    }

    /**
     * JVM options for a JVM that lives seconds to minutes (a test or demo broker, the format tool, the test bed's
     * services): C1 only and the serial collector, about half the start-up CPU of the defaults (decisions §54).
     */
    public static final List<String> SHORT_LIVED = List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");
    /** JVM options for quick start-up (tests, demo): small heap, {@link #SHORT_LIVED}. */
    public static final List<String> QUICK_START = Stream.concat(
                    Stream.of("-Xmx512m", "-Xms128m"), SHORT_LIVED.stream())
            .toList();
    /** JVM options for measurements: the full JIT and Kafka's usual G1 settings. */
    public static final List<String> THROUGHPUT =
            List.of("-Xmx1g", "-Xms1g", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20");

    /**
     * @param classpath the broker's classpath (kafka_2.13 and its dependencies)
     * @param overrides extra or replaced server.properties entries
     */
    public KafkaBrokerProcess(
            String name, Path dataDir, int port, int controllerPort, String classpath, Map<String, String> overrides) {
        this(name, dataDir, port, controllerPort, classpath, overrides, QUICK_START);
    }

    public KafkaBrokerProcess(
            String name,
            Path dataDir,
            int port,
            int controllerPort,
            String classpath,
            Map<String, String> overrides,
            List<String> jvmOptions) {
        this(name, dataDir, port, controllerPort, classpath, overrides, jvmOptions, null);
    }

    /** One node of a multi-node cluster ({@link Quorum}). */
    public KafkaBrokerProcess(
            String name,
            Path dataDir,
            int port,
            int controllerPort,
            String classpath,
            Map<String, String> overrides,
            List<String> jvmOptions,
            Quorum quorum) {
        this.name = name;
        this.quorum = quorum;
        this.dataDir = dataDir.toAbsolutePath();
        this.port = port;
        this.controllerPort = controllerPort;
        // the broker logs through log4j2 (see log4j2.properties in its data dir)
        this.classpath = log4jClasspath(classpath) + File.pathSeparator + ownCodeLocation();
        this.overrides = Map.copyOf(overrides);
        this.jvmOptions = List.copyOf(jvmOptions);
    }

    /**
     * {@code classpath} without Quarkus' slf4j binding, so that Kafka's code logs through log4j2 in a process of its
     * own: outside a Quarkus application that binding sends every level, DEBUG and TRACE included, to a buffer that is
     * never written, and kafka-clients then formats every request and response it logs.
     */
    public static String log4jClasspath(String classpath) {
        return Arrays.stream(classpath.split(File.pathSeparator))
                .filter(entry -> !entry.contains("slf4j-jboss-logmanager"))
                .collect(Collectors.joining(File.pathSeparator));
    }

    /** Reads a classpath written by {@code dependency:build-classpath}. */
    public static String classpathFrom(Path file) {
        try {
            return Files.readString(file).trim();
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "Cannot read the Kafka broker classpath from " + file.toAbsolutePath()
                            + " (it is written by the Maven build: run ./mvnw generate-resources)",
                    e);
        }
    }

    public String bootstrapServers() {
        return "localhost:" + port;
    }

    public int port() {
        return port;
    }

    public int controllerPort() {
        return controllerPort;
    }

    public String name() {
        return name;
    }

    /** Where the broker keeps its partitions (one directory per partition). */
    public Path logDir() {
        return dataDir.resolve("logs");
    }

    public Path logFile() {
        return dataDir.resolve("broker.log");
    }

    /** Formats the storage on first use, starts the broker and waits until it accepts connections. */
    public synchronized void start(Duration timeout) {
        if (process != null && process.isAlive()) {
            return;
        }
        try {
            Files.createDirectories(dataDir);
            Path properties = dataDir.resolve("server.properties");
            Files.writeString(properties, serverProperties(), StandardCharsets.UTF_8);
            Files.writeString(dataDir.resolve("log4j2.properties"), """
                    status = warn
                    appender.console.type = Console
                    appender.console.name = STDOUT
                    appender.console.layout.type = PatternLayout
                    appender.console.layout.pattern = [%d] %p %m (%c)%n
                    rootLogger.level = info
                    rootLogger.appenderRef.stdout.ref = STDOUT
                    logger.state.name = state.change.logger
                    logger.state.level = warn
                    """, StandardCharsets.UTF_8);
            if (!Files.exists(dataDir.resolve("logs").resolve("meta.properties"))) {
                format(properties);
            }
            process = java(
                    jvmOptions,
                    List.of(ParentWatchdog.class.getName(), "kafka.Kafka", properties.toString()),
                    logFile(),
                    true);
            awaitListening(timeout);
            LOGGER.infof("Kafka cluster '%s' up at %s (pid %d)", name, bootstrapServers(), process.pid());
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot start Kafka broker " + name, e);
        }
    }

    /** Graceful stop (SIGTERM), as an operator's restart would do. */
    public synchronized void stop() {
        if (process == null) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        process = null;
    }

    /** Forcible stop (SIGKILL): a crash, or the end of a cluster whose data no one reads again. */
    public synchronized void kill() {
        if (process == null) {
            return;
        }
        try {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        process = null;
    }

    /** The broker's process id, while it runs. */
    public long pid() {
        return process == null ? -1 : process.pid();
    }

    @Override
    public void close() {
        stop();
    }

    private String serverProperties() {
        Map<String, String> props = new LinkedHashMap<>();
        props.put("process.roles", "broker,controller");
        props.put("node.id", "1");
        props.put("controller.quorum.bootstrap.servers", "localhost:" + controllerPort);
        props.put("listeners", "PLAINTEXT://localhost:" + port + ",CONTROLLER://localhost:" + controllerPort);
        props.put("advertised.listeners", "PLAINTEXT://localhost:" + port);
        props.put("controller.listener.names", "CONTROLLER");
        props.put("inter.broker.listener.name", "PLAINTEXT");
        props.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        props.put("log.dirs", dataDir.resolve("logs").toString());
        props.put("num.partitions", "1");
        props.put("auto.create.topics.enable", "false");
        props.put("offsets.topic.replication.factor", "1");
        props.put("offsets.topic.num.partitions", "5");
        props.put("transaction.state.log.replication.factor", "1");
        props.put("transaction.state.log.min.isr", "1");
        props.put("transaction.state.log.num.partitions", "5");
        props.put("share.coordinator.state.topic.replication.factor", "1");
        props.put("share.coordinator.state.topic.min.isr", "1");
        props.put("group.initial.rebalance.delay.ms", "0");
        props.put("log.cleaner.backoff.ms", "1000");
        if (quorum != null) {
            String replicas = String.valueOf(quorum.size());
            String inSync = String.valueOf(Math.max(1, quorum.size() - 1));
            props.put("node.id", String.valueOf(quorum.nodeId()));
            props.remove("controller.quorum.bootstrap.servers");
            props.put("controller.quorum.voters", quorum.voters());
            props.put(
                    "listeners",
                    "CLIENT://localhost:" + port + ",INTERNAL://localhost:" + quorum.internalPort()
                            + ",CONTROLLER://localhost:" + controllerPort);
            props.put(
                    "advertised.listeners",
                    "CLIENT://localhost:" + quorum.advertisedPort() + ",INTERNAL://localhost:" + quorum.internalPort());
            props.put("inter.broker.listener.name", "INTERNAL");
            props.put("listener.security.protocol.map", "CLIENT:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT");
            props.put("default.replication.factor", replicas);
            props.put("min.insync.replicas", inSync);
            props.put("offsets.topic.replication.factor", replicas);
            props.put("transaction.state.log.replication.factor", replicas);
            props.put("transaction.state.log.min.isr", inSync);
            props.put("share.coordinator.state.topic.replication.factor", replicas);
            props.put("share.coordinator.state.topic.min.isr", inSync);
        }
        props.putAll(overrides);
        return props.entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining("\n", "", "\n"));
    }

    private void format(Path properties) throws IOException {
        // share groups (KIP-932) on, so that share-group offset sync can be exercised
        // a single node bootstraps its own dynamic quorum; the nodes of a cluster share an id and a static voter set
        List<String> args = new ArrayList<>(List.of("kafka.tools.StorageTool", "format"));
        if (quorum == null) {
            args.add("--standalone");
        }
        args.addAll(List.of(
                "--cluster-id=" + (quorum == null ? randomClusterId() : quorum.clusterId()),
                "-c",
                properties.toString(),
                "--feature",
                "share.version=1"));
        // a one-shot tool: 2.5 CPU-s to format, against 4.3 with the JVM's defaults
        Process format = java(
                Stream.concat(Stream.of("-Xmx256m"), SHORT_LIVED.stream()).toList(),
                args,
                dataDir.resolve("format.log"),
                false);
        try {
            if (!format.waitFor(120, TimeUnit.SECONDS) || format.exitValue() != 0) {
                format.destroyForcibly();
                throw new IllegalStateException("Formatting Kafka storage for " + name + " failed; see "
                        + dataDir.resolve("format.log") + ":\n" + Files.readString(dataDir.resolve("format.log")));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while formatting " + name, e);
        }
    }

    /**
     * A random Kafka cluster id (base64url of a UUID, as kafka-storage.sh random-uuid prints). One in 64 starts
     * with '-', which kafka-storage's argument parser takes for an option unless it is passed as {@code --cluster-id=...}.
     */
    public static String randomClusterId() {
        UUID uuid = UUID.randomUUID();
        ByteBuffer bytes = ByteBuffer.allocate(16);
        bytes.putLong(uuid.getMostSignificantBits()).putLong(uuid.getLeastSignificantBits());
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes.array());
    }

    private Process java(List<String> jvmOptions, List<String> mainAndArgs, Path log, boolean append)
            throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.add("-Dkafka.logs.dir=" + dataDir.resolve("app-logs"));
        command.add("-Dlog4j2.configurationFile=" + dataDir.resolve("log4j2.properties"));
        command.add("-cp");
        command.add(classpath);
        command.addAll(mainAndArgs);
        ProcessBuilder builder =
                new ProcessBuilder(command).directory(dataDir.toFile()).redirectErrorStream(true);
        builder.redirectOutput(
                append ? ProcessBuilder.Redirect.appendTo(log.toFile()) : ProcessBuilder.Redirect.to(log.toFile()));
        return builder.start();
    }

    private void awaitListening(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException(
                        "Kafka broker " + name + " exited with " + process.exitValue() + "; see " + logFile());
            }
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("localhost", port), 200);
                return;
            } catch (IOException notYet) {
                sleep(100);
            }
        }
        throw new IllegalStateException(
                "Kafka broker " + name + " did not listen on " + port + " within " + timeout + "; see " + logFile());
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static String ownCodeLocation() {
        try {
            return Path.of(ParentWatchdog.class
                            .getProtectionDomain()
                            .getCodeSource()
                            .getLocation()
                            .toURI())
                    .toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
