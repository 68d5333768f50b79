package io.clustermirror.testbed;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The results of the compatibility matrix, one line per release and case, tab-separated: {@code role version case
 * outcome detail}. {@code CompatibilityMatrixIT} writes them as it runs; {@link CompatibilityReport} renders the README's
 * table from them.
 */
public final class CompatibilityResults {

    /** Where a release sits in the run: the old cluster mirrored from, or the one mirrored to. */
    public enum Role {
        SOURCE,
        DESTINATION
    }

    public enum Outcome {
        PASSED,
        FAILED,
        UNTESTED
    }

    /** One case of one release. */
    public record Result(Role role, String version, String testCase, Outcome outcome, String detail) {

        String line() {
            return String.join(
                    "\t",
                    role.name(),
                    version,
                    testCase,
                    outcome.name(),
                    detail.replaceAll("\\s+", " ").strip());
        }

        static Result parse(String line) {
            String[] f = line.split("\t", -1);
            return new Result(Role.valueOf(f[0]), f[1], f[2], Outcome.valueOf(f[3]), f.length > 4 ? f[4] : "");
        }
    }

    private final Path file;

    public CompatibilityResults(Path file) {
        this.file = file;
    }

    /**
     * Starts the file anew (a run's results replace the last run's) with a header line: {@code # what ran where}.
     */
    public synchronized void reset(String header) {
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            Files.writeString(file, "# " + header.replaceAll("\\s+", " ") + "\n", StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public synchronized void record(Result result) {
        try {
            Files.writeString(
                    file,
                    result.line() + "\n",
                    StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static List<Result> read(Path file) throws IOException {
        List<Result> results = new ArrayList<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (!line.isBlank() && !line.startsWith("#")) {
                results.add(Result.parse(line));
            }
        }
        return results;
    }

    /** The header line of the file, without its {@code #}; empty when it has none. */
    public static String header(Path file) throws IOException {
        return Files.readAllLines(file, StandardCharsets.UTF_8).stream()
                .filter(line -> line.startsWith("#"))
                .map(line -> line.substring(1).strip())
                .findFirst()
                .orElse("");
    }
}
