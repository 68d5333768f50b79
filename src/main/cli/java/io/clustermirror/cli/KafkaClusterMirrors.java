package io.clustermirror.cli;

import java.io.Console;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code kafka-cluster-mirrors}: KIP-1279's command-line tool, against the Cluster Mirror REST API instead of a
 * broker ({@code --url} in place of {@code --bootstrap-server}), through the client generated from
 * {@code openapi/openapi.yaml}. One action per call; README "Command-line tool".
 */
@Command(
        name = "kafka-cluster-mirrors",
        mixinStandardHelpOptions = true,
        versionProvider = KafkaClusterMirrors.Version.class,
        sortOptions = false,
        usageHelpAutoWidth = true,
        customSynopsis = {
            "kafka-cluster-mirrors ACTION [--url=URL] [credentials] [options]",
            "  ACTION: --create | --alter | --delete | --list | --describe | --start | --stop | --pause | --resume"
                    + " | --recover | --promote | --instances",
            ""
        },
        description = {
            "Create, list, describe, alter and delete cluster mirrors, and start, stop, pause, resume, recover and"
                    + " promote their topics, through the Cluster Mirror REST API (KIP-1279's kafka-cluster-mirrors"
                    + " verbs).",
            ""
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:done",
            "1:the service refused (its errorCode on stderr), or a topic of a topic verb failed",
            "2:the command line (options, a file that cannot be read)",
            "3:the service could not be reached (connection refused, unknown host, TLS, timeout)"
        })
public final class KafkaClusterMirrors implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    // ---- the action: exactly one ----

    @Option(names = "--create", description = "Action: create --mirror from --mirror-config (createClusterMirror)")
    boolean create;

    @Option(
            names = "--alter",
            description = "Action: set the keys of --mirror-config and remove those of --delete-config on --mirror"
                    + " (alterClusterMirrorConfig)")
    boolean alter;

    @Option(names = "--delete", description = "Action: delete --mirror; every topic must be STOPPED first")
    boolean delete;

    @Option(
            names = "--list",
            description = "Action: list the mirrors: MIRROR TOPICS SOURCE-CLUSTER-ID SOURCE-BOOTSTRAP-SERVER")
    boolean list;

    @Option(
            names = "--instances",
            description = "Action: list the service instances of the destination and what each runs: INSTANCE URL"
                    + " STATE-PARTITIONS MIRRORS (the one that answered marked *)")
    boolean instances;

    @Option(
            names = "--describe",
            description = "Action: describe the partitions of --topics of --mirror (default: every topic of --mirror,"
                    + " or of every mirror): MIRROR TOPIC PARTITION SOURCE-OFFSET DESTINATION-OFFSET LAG STATE ETA RPO")
    boolean describe;

    @Option(
            names = "--start",
            description = "Action: start mirroring --topics (names, and regexes kept on the mirror) minus --exclude")
    boolean start;

    @Option(names = "--stop", description = "Action: stop mirroring --topics; they become writable (failover)")
    boolean stop;

    @Option(names = "--pause", description = "Action: pause --topics")
    boolean pause;

    @Option(names = "--resume", description = "Action: resume paused --topics")
    boolean resume;

    @Option(names = "--recover", description = "Action: retry FAILED partitions of --topics")
    boolean recover;

    @Option(
            names = "--promote",
            description = "Action: planned switchover of --topics: fence the source, wait for lag 0, sync the groups"
                    + " one last time, stop")
    boolean promote;

    // ---- what the action acts on ----

    @Option(names = "--mirror", paramLabel = "NAME", description = "The cluster mirror")
    String mirror;

    @Option(
            names = "--topics",
            split = ",",
            paramLabel = "TOPIC",
            description = "Topics, comma-separated: names, or (for --start and --promote) regexes; an entry that is a"
                    + " legal topic name is a name")
    List<String> topics;

    @Option(
            names = "--exclude",
            split = ",",
            paramLabel = "REGEX",
            description = "With --start or --promote: regexes of topics to leave out")
    List<String> exclude;

    @Option(
            names = "--mirror-config",
            paramLabel = "FILE",
            description = "A properties file: the mirror's config for --create (bootstrap.servers, security.protocol,"
                    + " sasl.*, ssl.*, mirror.*), the keys to set for --alter")
    Path mirrorConfig;

    @Option(
            names = "--delete-config",
            split = ",",
            paramLabel = "KEY",
            description = "With --alter: config keys to remove (back to their defaults)")
    List<String> deleteConfig;

    @Option(names = "--adopt-existing", description = "With --start: take over destination topics it did not create")
    boolean adoptExisting;

    @Option(
            names = "--override-exclude",
            description = "With --start: start topics named in --topics even when mirror.topics.exclude matches them")
    boolean overrideExclude;

    @Option(
            names = "--timeout-ms",
            paramLabel = "MS",
            description = "With --promote: how long to wait for lag 0 (the service's default: 60000)")
    Long timeoutMs;

    @Option(
            names = "--no-fence-source",
            description = "With --promote: do not fence the source topics (you have stopped their producers)")
    boolean noFenceSource;

    // ---- output ----

    @Option(names = "--json", description = "With --describe, --list or --instances: the API's answers as JSON")
    boolean json;

    @Option(names = "--failed", description = "With --describe: only FAILED partitions, with their error")
    boolean failed;

    // ---- the service, and who calls it ----

    @Option(
            names = "--url",
            paramLabel = "URL",
            defaultValue = "http://localhost:8080",
            description = "The Cluster Mirror service; default ${DEFAULT-VALUE}")
    String url;

    @Option(
            names = "--user",
            paramLabel = "NAME",
            description = "HTTP Basic user; the password from --password-file, else asked on the console")
    String user;

    @Option(
            names = "--password-file",
            paramLabel = "FILE",
            description = "A file whose first line is --user's password")
    Path passwordFile;

    @Option(names = "--token", paramLabel = "JWT", description = "A bearer token (JWT)")
    String token;

    @Option(names = "--token-file", paramLabel = "FILE", description = "A file whose first line is a bearer token")
    Path tokenFile;

    @Option(
            names = "--keystore",
            paramLabel = "FILE",
            description = "Client certificate and key (PKCS12 or JKS) for mutual TLS; https --url only")
    Path keystore;

    @Option(
            names = "--keystore-password-file",
            paramLabel = "FILE",
            description = "The key store's password; else asked on the console")
    Path keystorePasswordFile;

    @Option(
            names = "--truststore",
            paramLabel = "FILE",
            description =
                    "Certificates to trust for the service's: PEM (a CA file), PKCS12 or JKS (default: the" + " JDK's)")
    Path truststore;

    @Option(
            names = "--truststore-password-file",
            paramLabel = "FILE",
            description = "The trust store's password (PKCS12, JKS); else asked on the console")
    Path truststorePasswordFile;

    @Option(
            names = "--command-config",
            paramLabel = "FILE",
            description = "A properties file of the options above, as name=value without the dashes (url=...,"
                    + " user=..., password-file=..., truststore=...); the command line's own win")
    Path commandConfig;

    /** The options a --command-config file may set. */
    static final List<String> COMMAND_CONFIG_KEYS = List.of(
            "url",
            "user",
            "password-file",
            "token",
            "token-file",
            "keystore",
            "keystore-password-file",
            "truststore",
            "truststore-password-file");

    private final Function<String, char[]> prompt;

    KafkaClusterMirrors(Function<String, char[]> prompt) {
        this.prompt = prompt;
    }

    public static void main(String[] args) {
        PrintWriter out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
        PrintWriter err = new PrintWriter(System.err, true, StandardCharsets.UTF_8);
        System.exit(run(args, out, err, KafkaClusterMirrors::askConsole));
    }

    /**
     * Parses and runs one command line.
     *
     * @param prompt asks for a password no file gives; returns null when it cannot (no console)
     * @return the exit code ({@link ExitCodes})
     */
    public static int run(String[] args, PrintWriter out, PrintWriter err, Function<String, char[]> prompt) {
        CommandLine line = new CommandLine(new KafkaClusterMirrors(prompt));
        line.setOut(out);
        line.setErr(err);
        line.setParameterExceptionHandler((e, arguments) -> {
            err.println("Error: " + Tables.oneLine(e.getMessage()) + " (see --help)");
            return ExitCodes.USAGE;
        });
        int exit = line.execute(args);
        out.flush();
        err.flush();
        return exit;
    }

    @Override
    public Integer call() {
        try {
            Set<String> given = spec.commandLine().getParseResult().matchedOptions().stream()
                    .map(OptionSpec::longestName)
                    .collect(Collectors.toSet());
            Verb verb = Verb.of(given);
            Commands.Request request = request(verb);
            ServiceConnection service = ServiceConnection.of(connection(given), prompt);
            return new Commands(
                            service,
                            spec.commandLine().getOut(),
                            spec.commandLine().getErr())
                    .run(request);
        } catch (UsageException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        }
    }

    /** The checked request: what only the command line can get wrong is refused here, before any call. */
    private Commands.Request request(Verb verb) {
        TopicArguments parsedTopics = TopicArguments.parse(topics);
        if (topics != null && parsedTopics.isEmpty()) {
            throw new UsageException("--topics is empty");
        }
        if (!verb.takesTopicPatterns()) {
            parsedTopics.namesOnly(verb);
        }
        if (timeoutMs != null && timeoutMs <= 0) {
            throw new UsageException("--timeout-ms must be positive");
        }
        if (mirror != null && mirror.isBlank()) {
            throw new UsageException("--mirror is empty");
        }
        return new Commands.Request(
                verb,
                mirror,
                parsedTopics,
                exclude,
                mirrorConfig == null ? null : properties(mirrorConfig, "--mirror-config"),
                deleteConfig,
                json,
                failed,
                adoptExisting,
                overrideExclude,
                timeoutMs,
                noFenceSource);
    }

    /** The connection options: the command line's, else --command-config's, else the defaults. */
    private ServiceConnection.Options connection(Set<String> given) {
        Map<String, String> file = commandConfig == null ? Map.of() : commandConfig(commandConfig);
        return new ServiceConnection.Options(
                pick(given, "url", url, file),
                pick(given, "user", user, file),
                path(pick(given, "password-file", passwordFile, file)),
                pick(given, "token", token, file),
                path(pick(given, "token-file", tokenFile, file)),
                path(pick(given, "keystore", keystore, file)),
                path(pick(given, "keystore-password-file", keystorePasswordFile, file)),
                path(pick(given, "truststore", truststore, file)),
                path(pick(given, "truststore-password-file", truststorePasswordFile, file)));
    }

    private static String pick(Set<String> given, String key, Object fromCommandLine, Map<String, String> file) {
        if (given.contains("--" + key) || !file.containsKey(key)) {
            return fromCommandLine == null ? null : fromCommandLine.toString();
        }
        return file.get(key);
    }

    private static Path path(String value) {
        return value == null ? null : Path.of(value);
    }

    /** A --command-config file: only the connection options' names, so that a misspelt one is not ignored. */
    static Map<String, String> commandConfig(Path file) {
        Map<String, String> config = properties(file, "--command-config");
        for (String key : config.keySet()) {
            if (!COMMAND_CONFIG_KEYS.contains(key)) {
                throw new UsageException("--command-config " + file + " sets '" + key + "'; it takes "
                        + String.join(", ", COMMAND_CONFIG_KEYS));
            }
        }
        return config;
    }

    /** A properties file as a map, in the file's order (java.util.Properties syntax: {@code \\} escapes). */
    static Map<String, String> properties(Path file, String option) {
        Map<String, String> config = new LinkedHashMap<>();
        Properties read = new Properties() {
            private static final long serialVersionUID = 1L;

            @Override
            public synchronized Object put(Object key, Object value) {
                config.put((String) key, (String) value);
                return super.put(key, value);
            }
        };
        try (InputStream in = Files.newInputStream(file)) {
            read.load(in);
        } catch (IOException | IllegalArgumentException e) {
            throw new UsageException(ServiceConnection.unreadable(option, file, e));
        }
        if (config.isEmpty()) {
            throw new UsageException(option + " " + file + " sets no key");
        }
        return config;
    }

    private static char[] askConsole(String question) {
        Console console = System.console();
        return console == null ? null : console.readPassword("%s", question);
    }

    /** The version from the jar's manifest. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String version = KafkaClusterMirrors.class.getPackage().getImplementationVersion();
            return new String[] {"kafka-cluster-mirrors " + (version == null ? "(development build)" : version)};
        }
    }
}
