package io.clustermirror.cli;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The actions of {@code kafka-cluster-mirrors}, the KIP-1279 CLI verbs plus {@code --alter} (alterClusterMirrorConfig)
 * and {@code --promote} (promoteMirrorTopics), each with the options it requires and the ones it takes. Which options
 * were given is checked here, before any call: an option a verb would ignore is refused rather than silently dropped.
 */
enum Verb {
    CREATE("--create", Set.of("--mirror", "--mirror-config"), Set.of()),
    ALTER("--alter", Set.of("--mirror"), Set.of("--mirror-config", "--delete-config")),
    DELETE("--delete", Set.of("--mirror"), Set.of()),
    LIST("--list", Set.of(), Set.of("--json")),
    DESCRIBE("--describe", Set.of(), Set.of("--mirror", "--topics", "--json", "--failed")),
    START("--start", Set.of("--mirror", "--topics"), Set.of("--exclude", "--adopt-existing", "--override-exclude")),
    STOP("--stop", Set.of("--mirror", "--topics"), Set.of()),
    PAUSE("--pause", Set.of("--mirror", "--topics"), Set.of()),
    RESUME("--resume", Set.of("--mirror", "--topics"), Set.of()),
    RECOVER("--recover", Set.of("--mirror", "--topics"), Set.of()),
    PROMOTE("--promote", Set.of("--mirror", "--topics"), Set.of("--exclude", "--timeout-ms", "--no-fence-source")),
    INSTANCES("--instances", Set.of(), Set.of("--json"));

    /** Options every verb takes: where the service is, who calls it, and help. */
    static final Set<String> CONNECTION = Set.of(
            "--url",
            "--user",
            "--password-file",
            "--token",
            "--token-file",
            "--keystore",
            "--keystore-password-file",
            "--truststore",
            "--truststore-password-file",
            "--command-config",
            "--help",
            "--version");

    private final String option;
    private final Set<String> required;
    private final Set<String> optional;

    Verb(String option, Set<String> required, Set<String> optional) {
        this.option = option;
        this.required = required;
        this.optional = optional;
    }

    String option() {
        return option;
    }

    /** Whether this verb's {@code --topics} may hold regexes: the REST operation takes patterns ({@code include}). */
    boolean takesTopicPatterns() {
        return this == START || this == PROMOTE;
    }

    /**
     * The one verb among the given options (long names), checked against what it requires and takes.
     *
     * @throws UsageException naming what is wrong: no verb, two verbs, a required option missing, an option the verb
     *     does not take
     */
    static Verb of(Set<String> given) {
        List<Verb> verbs =
                Arrays.stream(values()).filter(v -> given.contains(v.option)).toList();
        if (verbs.size() != 1) {
            throw new UsageException((verbs.isEmpty() ? "give one action: " : "give only one action, not ")
                    + (verbs.isEmpty()
                            ? all()
                            : verbs.stream().map(Verb::option).collect(Collectors.joining(" and "))));
        }
        Verb verb = verbs.get(0);
        verb.check(given);
        return verb;
    }

    private void check(Set<String> given) {
        List<String> missing = new ArrayList<>(
                required.stream().filter(o -> !given.contains(o)).sorted().toList());
        if (this == ALTER && !given.contains("--mirror-config") && !given.contains("--delete-config")) {
            missing.add("--mirror-config or --delete-config");
        }
        if (this == DESCRIBE && given.contains("--topics") && !given.contains("--mirror")) {
            missing.add("--mirror (the mirror of --topics)");
        }
        if (!missing.isEmpty()) {
            throw new UsageException(option + " needs " + String.join(", ", missing));
        }
        Set<String> foreign = new LinkedHashSet<>();
        for (String o : given.stream().sorted().toList()) {
            boolean verbOption = Arrays.stream(values()).anyMatch(v -> v.option.equals(o));
            if (!verbOption && !CONNECTION.contains(o) && !required.contains(o) && !optional.contains(o)) {
                foreign.add(o);
            }
        }
        if (!foreign.isEmpty()) {
            throw new UsageException(option + " does not take " + String.join(", ", foreign));
        }
    }

    private static String all() {
        return Arrays.stream(values()).map(Verb::option).collect(Collectors.joining(" "));
    }
}
