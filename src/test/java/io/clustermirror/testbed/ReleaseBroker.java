package io.clustermirror.testbed;

import io.clustermirror.embedded.KafkaBrokerProcess;
import io.clustermirror.embedded.ParentWatchdog;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A single-node cluster of an older (or newer) Apache Kafka release than the test bed's, run as child JVMs from the
 * release's Maven Central jars (classpath resolved by the build into {@code target/compat/kafka-<version>.classpath}):
 * a ZooKeeper server and a ZooKeeper-mode broker for releases before 3.3, one combined KRaft broker and controller from
 * 3.3 on. Every start uses a fresh work directory: nothing of an earlier run (a formatted KRaft log, a ZooKeeper
 * snapshot of another cluster) is ever taken up again.
 *
 * <p>Two client listeners: {@code PLAINTEXT} ({@link #bootstrapServers()}), whose {@code User:ANONYMOUS} is a super user,
 * for the mirror and the test's own clients; and, when {@code secured}, {@code SASL_PLAINTEXT} ({@link
 * #saslBootstrapServers()}) for the ordinary user {@code alice}, with the release's ACL authorizer and {@code
 * allow.everyone.if.no.acl.found}: alice may do anything until an ACL names a resource, so a promote's DENY WRITE fence
 * stops her writes (super users bypass ACLs).
 */
public final class ReleaseBroker implements AutoCloseable {

    public static final String ALICE_JAAS =
            "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"alice\" password=\"alice-secret\";";

    private final String version;
    private final Path dir;
    private final String classpath;
    private final boolean secured;
    private final int port = Ports.free();
    private final int saslPort = Ports.free();
    private final int controllerPort = Ports.free();
    private final int zooKeeperPort = Ports.free();
    private Process zooKeeper;
    private Process broker;

    /**
     * @param baseDir a directory of the run; the broker's own directory is a new one below it
     * @param classpathFile the release's classpath, written by the build
     */
    public ReleaseBroker(String version, Path baseDir, Path classpathFile, boolean secured) {
        this.version = version;
        this.secured = secured;
        this.dir = fresh(baseDir.resolve("kafka-" + version + (secured ? "-source" : "-destination")));
        this.classpath = KafkaBrokerProcess.classpathFrom(classpathFile) + File.pathSeparator + ownCodeLocation();
    }

    /** Whether this release runs without ZooKeeper (KRaft is production-ready from 3.3). */
    public static boolean kraft(String version) {
        int[] v = parse(version);
        return v[0] > 3 || (v[0] == 3 && v[1] >= 3);
    }

    /** major, minor, patch (of a label such as "3.0.2 (source 2.8.2)": of its first version). */
    public static int[] parse(String version) {
        String[] parts = version.strip().split("[^0-9]+");
        return new int[] {Integer.parseInt(parts[0]), Integer.parseInt(parts[1]), Integer.parseInt(parts[2])};
    }

    public String version() {
        return version;
    }

    public String bootstrapServers() {
        return "localhost:" + port;
    }

    public String saslBootstrapServers() {
        return "localhost:" + saslPort;
    }

    public Path dir() {
        return dir;
    }

    /** alice's client settings (SASL/PLAIN on the SASL_PLAINTEXT listener). */
    public Map<String, Object> alice() {
        return Map.of(
                "bootstrap.servers",
                saslBootstrapServers(),
                "security.protocol",
                "SASL_PLAINTEXT",
                "sasl.mechanism",
                "PLAIN",
                "sasl.jaas.config",
                ALICE_JAAS);
    }

    /** Starts ZooKeeper (before 3.3) and the broker, and waits until the broker listens. */
    public synchronized ReleaseBroker start(Duration timeout) {
        try {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("log4j.properties"), """
                    log4j.rootLogger=INFO, stdout
                    log4j.appender.stdout=org.apache.log4j.ConsoleAppender
                    log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
                    log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
                    log4j.logger.state.change.logger=WARN
                    log4j.logger.kafka.request.logger=WARN
                    """);
            Files.writeString(dir.resolve("log4j2.properties"), """
                    status = warn
                    appender.console.type = Console
                    appender.console.name = STDOUT
                    appender.console.layout.type = PatternLayout
                    appender.console.layout.pattern = [%d] %p %m (%c)%n
                    rootLogger.level = info
                    rootLogger.appenderRef.stdout.ref = STDOUT
                    logger.state.name = state.change.logger
                    logger.state.level = warn
                    """);
            Path properties = dir.resolve("server.properties");
            Files.writeString(properties, serverProperties(), StandardCharsets.UTF_8);
            if (kraft(version)) {
                format(properties);
            } else {
                zooKeeper = java(
                        List.of(
                                "-Dzookeeper.admin.enableServer=false",
                                "-Dzookeeper.4lw.commands.whitelist=*",
                                ParentWatchdog.class.getName(),
                                "org.apache.zookeeper.server.ZooKeeperServerMain",
                                String.valueOf(zooKeeperPort),
                                dir.resolve("zookeeper").toString()),
                        dir.resolve("zookeeper.log"));
                awaitListening(zooKeeper, zooKeeperPort, timeout, dir.resolve("zookeeper.log"));
            }
            broker = java(
                    List.of(ParentWatchdog.class.getName(), "kafka.Kafka", properties.toString()),
                    dir.resolve("broker.log"));
            awaitListening(broker, port, timeout, dir.resolve("broker.log"));
            return this;
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot start Kafka " + version, e);
        }
    }

    /** The broker's log so far (for a failure's reason). */
    public String brokerLog() {
        try {
            Path log = dir.resolve("broker.log");
            return Files.exists(log) ? Files.readString(log) : "";
        } catch (IOException e) {
            return e.toString();
        }
    }

    @Override
    public synchronized void close() {
        stop(broker);
        stop(zooKeeper);
        broker = null;
        zooKeeper = null;
    }

    private static void stop(Process process) {
        if (process == null) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private String serverProperties() {
        Map<String, String> props = new LinkedHashMap<>();
        List<String> listeners = new ArrayList<>(List.of("PLAINTEXT://localhost:" + port));
        List<String> protocols = new ArrayList<>(List.of("PLAINTEXT:PLAINTEXT"));
        if (secured) {
            listeners.add("SASL_PLAINTEXT://localhost:" + saslPort);
            protocols.add("SASL_PLAINTEXT:SASL_PLAINTEXT");
        }
        List<String> advertised = new ArrayList<>(listeners);
        if (kraft(version)) {
            props.put("process.roles", "broker,controller");
            props.put("node.id", "1");
            props.put("controller.quorum.voters", "1@localhost:" + controllerPort);
            props.put("controller.listener.names", "CONTROLLER");
            listeners.add("CONTROLLER://localhost:" + controllerPort);
            protocols.add("CONTROLLER:PLAINTEXT");
        } else {
            props.put("broker.id", "1");
            props.put("zookeeper.connect", "localhost:" + zooKeeperPort);
            props.put("zookeeper.connection.timeout.ms", "30000");
        }
        props.put("listeners", String.join(",", listeners));
        props.put("advertised.listeners", String.join(",", advertised));
        props.put("listener.security.protocol.map", String.join(",", protocols));
        props.put("inter.broker.listener.name", "PLAINTEXT");
        props.put("log.dirs", dir.resolve("logs").toString());
        props.put("num.partitions", "1");
        props.put("auto.create.topics.enable", "false");
        props.put("offsets.topic.replication.factor", "1");
        props.put("offsets.topic.num.partitions", "5");
        props.put("transaction.state.log.replication.factor", "1");
        props.put("transaction.state.log.min.isr", "1");
        props.put("transaction.state.log.num.partitions", "5");
        props.put("group.initial.rebalance.delay.ms", "0");
        props.put("log.cleaner.backoff.ms", "1000");
        if (secured) {
            props.put("sasl.enabled.mechanisms", "PLAIN");
            props.put(
                    "listener.name.sasl_plaintext.plain.sasl.jaas.config",
                    "org.apache.kafka.common.security.plain.PlainLoginModule required "
                            + "username=\"admin\" password=\"admin-secret\" user_admin=\"admin-secret\" user_alice=\"alice-secret\";");
            props.put("authorizer.class.name", authorizer(version));
            props.put("allow.everyone.if.no.acl.found", "true");
            props.put("super.users", "User:ANONYMOUS;User:admin");
        }
        return props.entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining("\n", "", "\n"));
    }

    /** The ACL authorizer of the release: the ZooKeeper-backed one of its line, or KRaft's. */
    static String authorizer(String version) {
        int[] v = parse(version);
        if (kraft(version)) {
            return "org.apache.kafka.metadata.authorizer.StandardAuthorizer";
        }
        if (v[0] == 2 && v[1] < 4) {
            return "kafka.security.auth.SimpleAclAuthorizer";
        }
        return "kafka.security.authorizer.AclAuthorizer";
    }

    private void format(Path properties) throws IOException {
        Process format = java(
                List.of(
                        "kafka.tools.StorageTool",
                        "format",
                        "--cluster-id=" + KafkaBrokerProcess.randomClusterId(),
                        "-c",
                        properties.toString()),
                dir.resolve("format.log"));
        try {
            if (!format.waitFor(120, TimeUnit.SECONDS) || format.exitValue() != 0) {
                format.destroyForcibly();
                throw new IllegalStateException("Formatting Kafka " + version + " storage failed:\n"
                        + Files.readString(dir.resolve("format.log")));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private Process java(List<String> mainAndArgs, Path log) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(KafkaBrokerProcess.QUICK_START);
        command.add("-Dkafka.logs.dir=" + dir.resolve("app-logs"));
        command.add("-Dlog4j.configuration=file:" + dir.resolve("log4j.properties"));
        command.add("-Dlog4j2.configurationFile=" + dir.resolve("log4j2.properties"));
        command.add("-cp");
        command.add(classpath);
        command.addAll(mainAndArgs);
        return new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
    }

    private void awaitListening(Process process, int listenPort, Duration timeout, Path log) {
        try {
            org.awaitility.Awaitility.await("Kafka " + version + " listening on " + listenPort)
                    .atMost(timeout)
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> {
                        if (!process.isAlive()) {
                            throw new IllegalStateException("Kafka " + version + ": " + log.getFileName()
                                    + " exited with " + process.exitValue() + "; see " + log + "\n" + tail(log));
                        }
                        try (Socket socket = new Socket()) {
                            socket.connect(new InetSocketAddress("localhost", listenPort), 200);
                            return true;
                        } catch (IOException notYet) {
                            return false;
                        }
                    });
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new IllegalStateException(
                    "Kafka " + version + " did not listen on " + listenPort + " within " + timeout + "; see " + log, e);
        }
    }

    /** The last lines of a log, for a start's failure. */
    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return e.toString();
        }
    }

    private static Path fresh(Path dir) {
        Path candidate = dir;
        for (int attempt = 2; Files.exists(candidate); attempt++) {
            candidate = dir.resolveSibling(dir.getFileName() + "-" + attempt);
        }
        return candidate;
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
