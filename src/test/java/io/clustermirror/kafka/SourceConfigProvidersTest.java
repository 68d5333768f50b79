package io.clustermirror.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SourceConfigProvidersTest {

    /** As the service decides it: Kafka's password settings and credential-like names. */
    private static final Predicate<String> SECRET = key -> key.equals("sasl.jaas.config") || key.contains("password");

    @TempDir
    Path secrets;

    private Path secretsFile() throws Exception {
        Path file = secrets.resolve("source.properties");
        Files.writeString(file, "jaas=PlainLoginModule required username=\"admin\" password=\"admin-secret\";\n");
        return file;
    }

    @Test
    void aFileReferenceShouldBeResolvedAndOtherValuesLeftAsTheyAre() throws Exception {
        Path file = secretsFile();
        SourceConfigProviders providers =
                new SourceConfigProviders(Map.of("file", Map.of("allowed.paths", secrets.toString())), SECRET);

        Map<String, String> resolved = providers.resolve(
                Map.of("bootstrap.servers", "src:9092", "sasl.jaas.config", "${file:" + file + ":jaas}"));

        assertThat(resolved)
                .containsEntry("bootstrap.servers", "src:9092")
                .containsEntry(
                        "sasl.jaas.config", "PlainLoginModule required username=\"admin\" password=\"admin-secret\";");
    }

    @Test
    void aReferenceToAProviderTheServiceDoesNotEnableShouldBeRefusedNamingTheKey() {
        SourceConfigProviders none = new SourceConfigProviders(Map.of(), SECRET);
        assertThatThrownBy(() -> none.resolve(Map.of("sasl.jaas.config", "${file:/etc/passwd:root}")))
                .isInstanceOfSatisfying(MirrorException.class, e -> {
                    assertThat(e.error()).isEqualTo(MirrorError.INVALID_CONFIG);
                    assertThat(e.field()).isEqualTo("config.sasl.jaas.config");
                })
                .hasMessageContaining("config provider 'file', which this service does not enable");
        assertThat(none.resolve(Map.of("bootstrap.servers", "src:9092")))
                .containsEntry("bootstrap.servers", "src:9092");
    }

    @Test
    void aPathOutsideAllowedPathsOrAMissingKeyShouldBeRefused() throws Exception {
        Path file = secretsFile();
        Path other = Files.createDirectory(secrets.resolve("other"));
        SourceConfigProviders providers =
                new SourceConfigProviders(Map.of("file", Map.of("allowed.paths", other.toString())), SECRET);
        assertThatThrownBy(() -> providers.resolve(Map.of("sasl.jaas.config", "${file:" + file + ":jaas}")))
                .isInstanceOf(MirrorException.class)
                .hasMessageContaining("'sasl.jaas.config' could not be resolved");

        SourceConfigProviders allowed =
                new SourceConfigProviders(Map.of("file", Map.of("allowed.paths", secrets.toString())), SECRET);
        assertThatThrownBy(() -> allowed.resolve(Map.of("ssl.key.password", "${file:" + file + ":no-such-key}")))
                .isInstanceOf(MirrorException.class)
                .hasMessageContaining("'ssl.key.password' could not be resolved");
    }

    @Test
    void aReferenceInASettingThatIsNotSecretShouldBeRefused() throws Exception {
        // a client's error message would echo the resolved value of an ordinary setting ("Invalid value ... for ...")
        Path file = secretsFile();
        SourceConfigProviders providers =
                new SourceConfigProviders(Map.of("file", Map.of("allowed.paths", secrets.toString())), SECRET);
        assertThatThrownBy(
                        () -> providers.resolve(Map.of("sasl.login.connect.timeout.ms", "${file:" + file + ":jaas}")))
                .isInstanceOf(MirrorException.class)
                .hasMessageContaining("only secret settings");
    }

    @Test
    void anUnknownProviderNameShouldStopTheServiceAtStartUp() {
        assertThatThrownBy(() -> new SourceConfigProviders(Map.of("vault", Map.of()), SECRET))
                .hasMessageContaining("unknown config provider 'vault'");
    }
}
