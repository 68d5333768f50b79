package io.clustermirror.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ServiceConnectionTest {

    @TempDir
    Path dir;

    private static ServiceConnection.Options url(String url) {
        return new ServiceConnection.Options(url, null, null, null, null, null, null, null, null);
    }

    private static String basic(String user, String password) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void theUrlShouldBeHttpOrHttpsWithAHostAndLoseItsTrailingSlash() {
        assertThat(ServiceConnection.baseUrl("http://localhost:8080/")).isEqualTo("http://localhost:8080");
        assertThat(ServiceConnection.baseUrl("https://mirror.example.com/api/"))
                .isEqualTo("https://mirror.example.com/api");
        assertThatThrownBy(() -> ServiceConnection.baseUrl("localhost:8080"))
                .isInstanceOf(UsageException.class)
                .hasMessageContaining("must be http://host[:port]");
        assertThatThrownBy(() -> ServiceConnection.baseUrl("ftp://host")).isInstanceOf(UsageException.class);
        assertThatThrownBy(() -> ServiceConnection.baseUrl("http://host?x=1")).hasMessageContaining("no query");
    }

    @Test
    void noCredentialsShouldSendNoAuthorization() {
        assertThat(ServiceConnection.of(url("http://localhost:8080"), null).authorization())
                .isNull();
    }

    @Test
    void aUserShouldSendBasicWithThePasswordFileFirstLine() throws Exception {
        Path password = Files.writeString(dir.resolve("password"), "s3cr:t pass\nignored\n");

        ServiceConnection connection = ServiceConnection.of(
                new ServiceConnection.Options("http://h:1", "alice", password, null, null, null, null, null, null),
                q -> {
                    throw new AssertionError("asked although the file gives it: " + q);
                });

        assertThat(connection.authorization()).isEqualTo(basic("alice", "s3cr:t pass"));
    }

    @Test
    void aUserWithoutPasswordFileShouldBeAskedOnce() {
        List<String> asked = new ArrayList<>();

        ServiceConnection connection = ServiceConnection.of(
                new ServiceConnection.Options("http://h:1", "alice", null, null, null, null, null, null, null), q -> {
                    asked.add(q);
                    return "typed".toCharArray();
                });

        assertThat(asked).containsExactly("Password for alice: ");
        assertThat(connection.authorization()).isEqualTo(basic("alice", "typed"));
    }

    @Test
    void aUserWithNeitherFileNorConsoleShouldBeAUsageError() {
        assertThatThrownBy(() -> ServiceConnection.of(
                        new ServiceConnection.Options("http://h:1", "alice", null, null, null, null, null, null, null),
                        q -> null))
                .isInstanceOf(UsageException.class)
                .hasMessage("no console to ask for it: give --password-file");
    }

    @Test
    void aTokenShouldSendBearerFromTheOptionOrItsFile() throws Exception {
        Path tokenFile = Files.writeString(dir.resolve("token"), "  eyJ.file.token \n");

        assertThat(ServiceConnection.of(
                                new ServiceConnection.Options(
                                        "http://h:1", null, null, "eyJ.a.b", null, null, null, null, null),
                                null)
                        .authorization())
                .isEqualTo("Bearer eyJ.a.b");
        assertThat(ServiceConnection.of(
                                new ServiceConnection.Options(
                                        "http://h:1", null, null, null, tokenFile, null, null, null, null),
                                null)
                        .authorization())
                .isEqualTo("Bearer eyJ.file.token");
    }

    @Test
    void twoKindsOfCredentialsOrAFileWithoutItsOptionShouldBeRefused() throws Exception {
        Path file = Files.writeString(dir.resolve("f"), "x\n");

        assertThatThrownBy(() -> ServiceConnection.of(
                        new ServiceConnection.Options("http://h:1", "alice", file, "tok", null, null, null, null, null),
                        null))
                .hasMessage("give one of --user, --token and --token-file");
        assertThatThrownBy(() -> ServiceConnection.of(
                        new ServiceConnection.Options("http://h:1", null, null, "tok", file, null, null, null, null),
                        null))
                .hasMessage("give one of --user, --token and --token-file");
        assertThatThrownBy(() -> ServiceConnection.of(
                        new ServiceConnection.Options("http://h:1", null, file, null, null, null, null, null, null),
                        null))
                .hasMessage("--password-file is the password of --user: give --user");
        assertThatThrownBy(() -> ServiceConnection.of(
                        new ServiceConnection.Options("https://h:1", null, null, null, null, null, file, null, null),
                        null))
                .hasMessage("--keystore-password-file needs --keystore");
    }

    @Test
    void storesShouldNeedAnHttpsUrl() throws Exception {
        Path store = Files.writeString(dir.resolve("store.p12"), "x");

        assertThatThrownBy(() -> ServiceConnection.of(
                        new ServiceConnection.Options("http://h:1", null, null, null, null, null, null, store, null),
                        null))
                .hasMessage("--keystore and --truststore are for an https --url, not http://h:1");
    }

    @Test
    void anUnreadableFileShouldNameItsOptionAndFile() {
        Path missing = dir.resolve("missing");

        assertThatThrownBy(() -> ServiceConnection.of(
                        new ServiceConnection.Options(
                                "http://h:1", "alice", missing, null, null, null, null, null, null),
                        null))
                .isInstanceOf(UsageException.class)
                .hasMessage("cannot read --password-file " + missing + " (NoSuchFileException)");
        assertThatThrownBy(() -> ServiceConnection.of(
                        new ServiceConnection.Options("https://h:1", null, null, null, null, null, null, missing, null),
                        null))
                .hasMessage("cannot read --truststore " + missing + " (NoSuchFileException)");
    }

    @Test
    void aPemTrustStoreWithoutCertificatesShouldBeRefused() throws Exception {
        Path pem = Files.writeString(dir.resolve("ca.pem"), "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n");

        assertThatThrownBy(() -> ServiceConnection.of(
                        new ServiceConnection.Options("https://h:1", null, null, null, null, null, null, pem, null),
                        null))
                .isInstanceOf(UsageException.class);
    }
}
