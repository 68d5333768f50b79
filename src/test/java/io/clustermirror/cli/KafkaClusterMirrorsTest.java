package io.clustermirror.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line up to the first call: what is refused before any request, with exit code 2 and one line. */
class KafkaClusterMirrorsTest {

    @TempDir
    Path dir;

    private record Run(int exit, String out, String err) {}

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = KafkaClusterMirrors.run(args, new PrintWriter(out), new PrintWriter(err), q -> null);
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    void aBadCommandLineShouldBeOneLineOnStderrAndExitCode2() {
        for (String[] args : new String[][] {
            {"--lst"},
            {"--mirror", "m"},
            {"--list", "--stop"},
            {"--stop", "--mirror", "m", "--topics", "orders.*"},
            {"--start", "--mirror", "m", "--topics", ","},
            {"--promote", "--mirror", "m", "--topics", "t", "--timeout-ms", "0"},
            {"--list", "--url", "localhost:8080"},
            {"--describe", "--json", "--mirror", "m", "--topics", "t", "--exclude", "x"},
        }) {
            Run run = run(args);

            assertThat(run.exit()).as(String.join(" ", args)).isEqualTo(ExitCodes.USAGE);
            assertThat(run.err().lines())
                    .as(String.join(" ", args))
                    .singleElement()
                    .satisfies(line -> assertThat(line).startsWith("Error: ").endsWith(" (see --help)"));
            assertThat(run.out()).isEmpty();
        }
    }

    @Test
    void helpShouldListTheActionsAndTheExitCodes() {
        Run run = run("--help");

        assertThat(run.exit()).isZero();
        assertThat(run.out())
                .contains("--create", "--describe", "--promote", "--json", "--failed", "--url", "--user", "--keystore")
                .contains("Exit codes:", "3   the service could not be reached");
    }

    @Test
    void theMirrorConfigShouldBeReadAsAPropertiesFileInItsOrder() throws Exception {
        Path file = Files.writeString(
                dir.resolve("mirror.properties"),
                "# a comment\nbootstrap.servers=src:9092\nmirror.topics.include=demo\\\\..*\nsasl.jaas.config = x \\\n  y\n");

        Map<String, String> config = KafkaClusterMirrors.properties(file, "--mirror-config");

        assertThat(config)
                .containsExactly(
                        Map.entry("bootstrap.servers", "src:9092"),
                        Map.entry("mirror.topics.include", "demo\\..*"),
                        Map.entry("sasl.jaas.config", "x y"));
    }

    @Test
    void anEmptyOrMissingMirrorConfigShouldBeAUsageError() throws Exception {
        Path empty = Files.writeString(dir.resolve("empty.properties"), "# nothing\n");

        assertThatThrownBy(() -> KafkaClusterMirrors.properties(empty, "--mirror-config"))
                .isInstanceOf(UsageException.class)
                .hasMessageEndingWith("sets no key");
        Run missing = run(
                "--create",
                "--mirror",
                "m",
                "--mirror-config",
                dir.resolve("nope").toString());
        assertThat(missing.exit()).isEqualTo(ExitCodes.USAGE);
        assertThat(missing.err()).startsWith("Error: cannot read --mirror-config ");
    }

    @Test
    void aServiceThatIsNotThereShouldBeOneLineAndExitCode3() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }

        Run run = run("--list", "--url", "http://localhost:" + port);

        assertThat(run.exit()).isEqualTo(ExitCodes.UNREACHABLE);
        assertThat(run.err()).isEqualTo("Error: cannot reach http://localhost:" + port + ": connection refused\n");
    }

    @Test
    void aCommandConfigShouldGiveTheConnectionUnlessTheCommandLineDoes() throws Exception {
        int closed;
        try (ServerSocket socket = new ServerSocket(0)) {
            closed = socket.getLocalPort();
        }
        Path config = Files.writeString(dir.resolve("client.properties"), "url=http://localhost:" + closed + "\n");

        Run fromFile = run("--list", "--command-config", config.toString());
        Run commandLineWins = run("--list", "--command-config", config.toString(), "--url", "ftp://x");

        assertThat(fromFile.exit()).as(fromFile.err()).isEqualTo(ExitCodes.UNREACHABLE);
        assertThat(fromFile.err())
                .isEqualTo("Error: cannot reach http://localhost:" + closed + ": connection refused\n");
        assertThat(commandLineWins.exit()).isEqualTo(ExitCodes.USAGE);
        assertThat(commandLineWins.err()).contains("--url must be http://host[:port]");
    }

    @Test
    void aCommandConfigKeyThatIsNoConnectionOptionShouldBeRefused() throws Exception {
        Path config = Files.writeString(dir.resolve("client.properties"), "user=alice\npasswd-file=/tmp/p\n");

        Run run = run("--list", "--command-config", config.toString());

        assertThat(run.exit()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err())
                .startsWith("Error: --command-config " + config
                        + " sets 'passwd-file'; it takes url, user, password-file,");
    }
}
