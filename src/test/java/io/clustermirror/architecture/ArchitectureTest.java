package io.clustermirror.architecture;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The rooms and their arrows: {@code api -> coordinator -> {sync, fetch, truncation, verification} -> topics -> {kafka, state} ->
 * mirror}, the coordinator also using {@code topics} (the destination topic, ACL and offset Admin work) directly, the
 * data plane ({@code fetch}) and LOG_TRUNCATION ({@code truncation}) knowing nothing of each other and sharing the
 * record batches and their raw reads and writes ({@code {fetch, truncation} -> batches -> kafka}), with
 * {@code config} (the service's settings) and {@code metrics} usable from every room, and {@code embedded} (dev mode's
 * local clusters) outside the service's own layering. No package cycles; no main class past the size rule.
 */
class ArchitectureTest {

    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.clustermirror");

    @Test
    void arrowsShouldPointOneWay() {
        layeredArchitecture()
                .consideringOnlyDependenciesInLayers()
                .layer("api")
                .definedBy("io.clustermirror.api..")
                .layer("coordinator")
                .definedBy("io.clustermirror.coordinator..")
                .layer("sync")
                .definedBy("io.clustermirror.sync..")
                .layer("fetch")
                .definedBy("io.clustermirror.fetch..")
                .layer("truncation")
                .definedBy("io.clustermirror.truncation..")
                .layer("verification")
                .definedBy("io.clustermirror.verification..")
                .layer("batches")
                .definedBy("io.clustermirror.batches..")
                .layer("topics")
                .definedBy("io.clustermirror.topics..")
                .layer("kafka")
                .definedBy("io.clustermirror.kafka..")
                .layer("state")
                .definedBy("io.clustermirror.state..")
                .layer("mirror")
                .definedBy("io.clustermirror.mirror..")
                .layer("config")
                .definedBy("io.clustermirror.config..")
                .layer("metrics")
                .definedBy("io.clustermirror.metrics..")
                .layer("embedded")
                .definedBy("io.clustermirror.embedded..")
                .layer("nativeimage")
                .definedBy("io.clustermirror.nativeimage..")
                .whereLayer("nativeimage")
                .mayNotBeAccessedByAnyLayer()
                .whereLayer("api")
                .mayOnlyBeAccessedByLayers("nativeimage")
                .whereLayer("embedded")
                .mayNotBeAccessedByAnyLayer()
                .whereLayer("coordinator")
                .mayOnlyBeAccessedByLayers("api", "embedded", "nativeimage")
                .whereLayer("sync")
                .mayOnlyBeAccessedByLayers("coordinator", "api")
                .whereLayer("fetch")
                .mayOnlyBeAccessedByLayers("coordinator")
                .whereLayer("truncation")
                .mayOnlyBeAccessedByLayers("coordinator")
                .whereLayer("verification")
                .mayOnlyBeAccessedByLayers("coordinator")
                .whereLayer("batches")
                .mayOnlyBeAccessedByLayers("fetch", "truncation", "verification")
                .whereLayer("topics")
                .mayOnlyBeAccessedByLayers("sync", "fetch", "truncation", "verification", "coordinator")
                .whereLayer("kafka")
                .mayOnlyBeAccessedByLayers(
                        "sync", "fetch", "truncation", "verification", "batches", "topics", "coordinator", "api")
                .whereLayer("state")
                .mayOnlyBeAccessedByLayers(
                        "sync", "fetch", "truncation", "verification", "topics", "coordinator", "nativeimage")
                .whereLayer("mirror")
                .mayOnlyBeAccessedByLayers(
                        "api",
                        "coordinator",
                        "sync",
                        "fetch",
                        "truncation",
                        "verification",
                        "batches",
                        "topics",
                        "kafka",
                        "state",
                        "metrics",
                        "embedded")
                .whereLayer("metrics")
                .mayOnlyBeAccessedByLayers(
                        "api", "coordinator", "sync", "fetch", "truncation", "verification", "topics", "kafka")
                .whereLayer("config")
                .mayOnlyBeAccessedByLayers(
                        "api",
                        "coordinator",
                        "sync",
                        "fetch",
                        "truncation",
                        "verification",
                        "batches",
                        "topics",
                        "kafka",
                        "state",
                        "metrics",
                        "embedded")
                .check(MAIN);
    }

    @Test
    void packagesShouldHaveNoCycles() {
        slices().matching("io.clustermirror.(*)..").should().beFreeOfCycles().check(MAIN);
    }

    @Test
    void kafkaAndStateShouldNotKnowEachOther() {
        com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses()
                .that()
                .resideInAPackage("io.clustermirror.kafka..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.clustermirror.state..")
                .check(MAIN);
        com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses()
                .that()
                .resideInAPackage("io.clustermirror.state..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.clustermirror.kafka..")
                .check(MAIN);
    }

    @Test
    void pureRoomsShouldUseNoFramework() {
        com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses()
                .that()
                .resideInAnyPackage("io.clustermirror.mirror..", "io.clustermirror.sync.plan..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("io.quarkus..", "io.vertx..", "io.smallrye..", "jakarta..", "org.apache.kafka..")
                .check(MAIN);
    }

    /**
     * The CLI ships on its own (target/kafka-cluster-mirrors.jar: its classes, the generated client, picocli and
     * Jackson), compiled with a classpath that also holds the service and the test libraries: a class it used from
     * those would compile, then be missing from the jar. Checked on the classes the jar is built from.
     */
    @Test
    void theCliShouldUseOnlyTheGeneratedClientPicocliJacksonAndTheJdk() {
        Path classes = Path.of("target/cli-classes");
        assertThat(classes.resolve("io/clustermirror/cli"))
                .as("the CLI's classes (the compiler's cli execution)")
                .isDirectory();
        JavaClasses cli = new ClassFileImporter().importPath(classes);

        com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes()
                .that()
                .resideInAPackage("io.clustermirror.cli..")
                .should()
                .onlyDependOnClassesThat()
                .resideInAnyPackage(
                        "io.clustermirror.cli..",
                        "io.clustermirror.client..",
                        "picocli..",
                        "com.fasterxml.jackson..",
                        "java..",
                        "javax.net..")
                .check(cli);
    }

    /**
     * No main class past 800 lines. A size is a smell to look at, never the reason for a split: a class is split by
     * job (a piece that needs callbacks into its parent was not a room of its own); this bar only catches a class that
     * has long stopped being one job.
     */
    @Test
    void mainClassesShouldStaySmall() throws IOException {
        Map<String, Long> over = new TreeMap<>();
        for (Path root :
                new Path[] {Path.of("src/main/java/io/clustermirror"), Path.of("src/main/cli/java/io/clustermirror")}) {
            linesOver(root, over);
        }
        assertThat(over).as("main classes over their line limit").isEmpty();
    }

    private static void linesOver(Path root, Map<String, Long> over) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                String name = root.relativize(file).toString().replace('\\', '/');
                long lines;
                try (Stream<String> content = Files.lines(file)) {
                    lines = content.count();
                }
                if (lines > 800) {
                    over.put(name, lines);
                }
            }
        }
    }
}
