package io.clustermirror.it;

import io.clustermirror.cli.KafkaClusterMirrors;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The kafka-cluster-mirrors CLI run by the ITs: in this JVM through its picocli entry point, as the built jar
 * ({@code java -jar target/kafka-cluster-mirrors.jar}), or through {@code bin/kafka-cluster-mirrors}.
 */
final class Cli {

    /** One run: its exit code and what it printed. */
    record Run(int exit, String out, String err) {

        List<String> outLines() {
            return out.lines().toList();
        }

        @Override
        public String toString() {
            return "exit " + exit + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }
    }

    private Cli() {}

    /** In this JVM; no console (a password must come from a file). */
    static Run inProcess(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = KafkaClusterMirrors.run(args, new PrintWriter(out), new PrintWriter(err), question -> null);
        return new Run(exit, out.toString(), err.toString());
    }

    /** {@code java -jar target/kafka-cluster-mirrors.jar args}, with this JVM's java. */
    static Run jar(String... args) {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar",
                required("testbed.cli.jar")));
        command.addAll(List.of(args));
        return process(new ProcessBuilder(command));
    }

    /** {@code bin/kafka-cluster-mirrors args}, with JAVA_HOME pointing at this JVM. */
    static Run script(String... args) {
        List<String> command = new ArrayList<>(List.of("sh", required("testbed.cli.script")));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        builder.environment().remove("KAFKA_CLUSTER_MIRRORS_JAR");
        return process(builder);
    }

    private static Run process(ProcessBuilder builder) {
        try {
            Path out = Files.createTempFile("cli", ".out");
            Path err = Files.createTempFile("cli", ".err");
            Process process = builder.redirectOutput(out.toFile())
                    .redirectError(err.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .start();
            if (!process.waitFor(2, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                throw new AssertionError("the CLI did not exit within 2 minutes: " + builder.command());
            }
            Run run = new Run(
                    process.exitValue(),
                    Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
            Files.delete(out);
            Files.delete(err);
            return run;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static String required(String property) {
        String value = System.getProperty(property);
        if (value == null) {
            throw new IllegalStateException(
                    "System property " + property + " is not set: run the ITs with ./mvnw verify");
        }
        return value;
    }
}
