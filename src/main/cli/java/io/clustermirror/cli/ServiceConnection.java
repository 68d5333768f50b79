package io.clustermirror.cli;

import io.clustermirror.client.ApiClient;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Base64;
import java.util.function.Function;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;

/**
 * How the CLI reaches the service: its base URL and the credentials the control plane takes (README "Security"):
 * HTTP Basic, a bearer JWT, or a client certificate (mTLS), over HTTPS with the JDK's trust store or a given one.
 * Secrets come from files or a prompt, never from the command line (except {@code --token}, for tokens that expire).
 */
final class ServiceConnection {

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

    /** The options that say where and as whom; a null field was not given. */
    record Options(
            String url,
            String user,
            Path passwordFile,
            String token,
            Path tokenFile,
            Path keystore,
            Path keystorePasswordFile,
            Path truststore,
            Path truststorePasswordFile) {}

    private final String url;
    private final String authorization;
    private final SSLContext ssl;

    private ServiceConnection(String url, String authorization, SSLContext ssl) {
        this.url = url;
        this.authorization = authorization;
        this.ssl = ssl;
    }

    /**
     * Checks the options and reads their files.
     *
     * @param prompt asks for a secret that no file gives (the console's password prompt); null when there is none
     * @throws UsageException for a bad URL, two kinds of credentials, a file that cannot be read
     */
    static ServiceConnection of(Options o, Function<String, char[]> prompt) {
        String url = baseUrl(o.url());
        boolean https = url.startsWith("https:");
        int kinds = (o.user() != null ? 1 : 0) + (o.token() != null || o.tokenFile() != null ? 1 : 0);
        if (kinds > 1 || (o.token() != null && o.tokenFile() != null)) {
            throw new UsageException("give one of --user, --token and --token-file");
        }
        if (o.passwordFile() != null && o.user() == null) {
            throw new UsageException("--password-file is the password of --user: give --user");
        }
        if (o.keystorePasswordFile() != null && o.keystore() == null) {
            throw new UsageException("--keystore-password-file needs --keystore");
        }
        if (o.truststorePasswordFile() != null && o.truststore() == null) {
            throw new UsageException("--truststore-password-file needs --truststore");
        }
        if (!https && (o.keystore() != null || o.truststore() != null)) {
            throw new UsageException("--keystore and --truststore are for an https --url, not " + url);
        }
        String authorization = null;
        if (o.user() != null) {
            if (o.user().contains(":")) {
                throw new UsageException("--user cannot hold ':' (HTTP Basic separates the password with it)");
            }
            char[] password = secret(o.passwordFile(), "Password for " + o.user() + ": ", prompt, "--password-file");
            authorization = "Basic "
                    + Base64.getEncoder()
                            .encodeToString((o.user() + ":" + new String(password)).getBytes(StandardCharsets.UTF_8));
        } else if (o.token() != null || o.tokenFile() != null) {
            String token = (o.token() != null ? o.token() : firstLine(o.tokenFile(), "--token-file")).strip();
            if (token.isEmpty()) {
                throw new UsageException("the token is empty");
            }
            authorization = "Bearer " + token;
        }
        SSLContext ssl = null;
        if (o.keystore() != null || o.truststore() != null) {
            ssl = sslContext(o, prompt);
        }
        return new ServiceConnection(url, authorization, ssl);
    }

    /** The base URL without a trailing slash. */
    static String baseUrl(String url) {
        URI uri;
        try {
            uri = URI.create(url.strip());
        } catch (IllegalArgumentException e) {
            throw new UsageException("--url " + url + " is no URL: " + e.getMessage());
        }
        if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null) {
            throw new UsageException("--url must be http://host[:port] or https://host[:port], not " + url);
        }
        if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw new UsageException("--url takes no query or fragment: " + url);
        }
        return uri.toString().replaceAll("/+$", "");
    }

    String url() {
        return url;
    }

    /** The Authorization header every call sends; null when none. */
    String authorization() {
        return authorization;
    }

    /** Whether calls use a TLS context of their own (a key or trust store was given). */
    boolean ownTls() {
        return ssl != null;
    }

    /** A client of the service; {@code readTimeout} bounds each call's wait for its answer. */
    ApiClient client(Duration readTimeout) {
        HttpClient.Builder http = HttpClient.newBuilder().connectTimeout(CONNECT_TIMEOUT);
        if (ssl != null) {
            http.sslContext(ssl);
        }
        ApiClient client = new ApiClient(http, ApiClient.createDefaultObjectMapper(), url);
        client.setReadTimeout(readTimeout);
        if (authorization != null) {
            client.setRequestInterceptor(request -> request.header("Authorization", authorization));
        }
        return client;
    }

    private static SSLContext sslContext(Options o, Function<String, char[]> prompt) {
        try {
            KeyManager[] keys = null;
            if (o.keystore() != null) {
                char[] password = secret(
                        o.keystorePasswordFile(),
                        "Password of key store " + o.keystore() + ": ",
                        prompt,
                        "--keystore-password-file");
                KeyStore store = load(o.keystore(), password, "--keystore");
                KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                factory.init(store, password);
                keys = factory.getKeyManagers();
            }
            TrustManager[] trust = null;
            if (o.truststore() != null) {
                KeyStore store = isPem(o.truststore())
                        ? pemTrustStore(o.truststore())
                        : load(
                                o.truststore(),
                                secret(
                                        o.truststorePasswordFile(),
                                        "Password of trust store " + o.truststore() + ": ",
                                        prompt,
                                        "--truststore-password-file"),
                                "--truststore");
                TrustManagerFactory factory =
                        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                factory.init(store);
                trust = factory.getTrustManagers();
            }
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keys, trust, null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new UsageException("cannot use the key or trust store: " + Tables.oneLine(e.getMessage()));
        }
    }

    /** A PKCS12 or JKS store (the JDK tells them apart). */
    private static KeyStore load(Path file, char[] password, String option) {
        try {
            return KeyStore.getInstance(file.toFile(), password);
        } catch (IOException | GeneralSecurityException e) {
            throw new UsageException(unreadable(option, file, e));
        }
    }

    private static boolean isPem(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            return new String(in.readNBytes(64), StandardCharsets.US_ASCII).contains("-----BEGIN");
        } catch (IOException e) {
            throw new UsageException(unreadable("--truststore", file, e));
        }
    }

    /** The certificates of a PEM file (a CA bundle, as {@code ca.crt}) as a trust store. */
    private static KeyStore pemTrustStore(Path file) throws GeneralSecurityException {
        try (InputStream in = Files.newInputStream(file)) {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            int n = 0;
            for (Certificate certificate :
                    CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                store.setCertificateEntry("ca-" + n++, certificate);
            }
            if (n == 0) {
                throw new UsageException("--truststore " + file + " holds no certificate");
            }
            return store;
        } catch (IOException e) {
            throw new UsageException(unreadable("--truststore", file, e));
        }
    }

    /** A secret from its file (the first line), else from the prompt. */
    private static char[] secret(Path file, String question, Function<String, char[]> prompt, String option) {
        if (file != null) {
            return firstLine(file, option).toCharArray();
        }
        char[] answer = prompt == null ? null : prompt.apply(question);
        if (answer == null) {
            throw new UsageException("no console to ask for it: give " + option);
        }
        return answer;
    }

    private static String firstLine(Path file, String option) {
        try {
            String content = Files.readString(file, StandardCharsets.UTF_8);
            return content.lines().findFirst().orElse("");
        } catch (IOException e) {
            throw new UsageException(unreadable(option, file, e));
        }
    }

    /** "cannot read --option file: why", the why without a stack trace ({@code NoSuchFileException: /x}). */
    static String unreadable(String option, Path file, Exception e) {
        String why = e.getMessage() == null || e.getMessage().equals(file.toString())
                ? e.getClass().getSimpleName()
                : e.getClass().getSimpleName() + ": " + Tables.oneLine(e.getMessage());
        return "cannot read " + option + " " + file + " (" + why + ")";
    }
}
