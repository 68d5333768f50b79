package io.clustermirror.it;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Key;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A test CA and certificates it signs, made with the JDK's keytool in a temporary directory: PKCS12 stores
 * ({@code <alias>.p12}, the CA in {@code trust.p12}) and, on request, PEM files as an operator would hand them over.
 */
final class TestCertificates {

    static final String PASSWORD = "test-password";

    private final Path dir;

    private TestCertificates(Path dir) {
        this.dir = dir;
    }

    /** A new CA ({@code ca.p12}, {@code ca.pem}) and a trust store holding it ({@code trust.p12}). */
    static TestCertificates withCa() throws Exception {
        TestCertificates certificates = new TestCertificates(Files.createTempDirectory("certs"));
        certificates.keyPair("ca", "CN=test-ca", "-ext", "bc:c");
        certificates.keytool(
                "-exportcert",
                "-alias",
                "ca",
                "-rfc",
                "-file",
                certificates.path("ca.pem"),
                "-keystore",
                certificates.path("ca.p12"));
        certificates.keytool(
                "-importcert",
                "-noprompt",
                "-alias",
                "ca",
                "-file",
                certificates.path("ca.pem"),
                "-keystore",
                certificates.path("trust.p12"));
        return certificates;
    }

    /** A key pair named {@code alias} in {@code alias.p12}, its certificate signed by the test CA. */
    void signed(String alias, String dname, String san) throws Exception {
        keyPair(alias, dname);
        keytool("-certreq", "-alias", alias, "-file", path(alias + ".csr"), "-keystore", path(alias + ".p12"));
        List<String> gencert = new ArrayList<>(List.of(
                "-gencert",
                "-alias",
                "ca",
                "-infile",
                path(alias + ".csr"),
                "-outfile",
                path(alias + ".pem"),
                "-rfc",
                "-validity",
                "2",
                "-keystore",
                path("ca.p12")));
        if (san != null) {
            gencert.addAll(List.of("-ext", san));
        }
        keytool(gencert.toArray(String[]::new));
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", path("ca.pem"), "-keystore", path(alias + ".p12"));
        keytool(
                "-importcert",
                "-noprompt",
                "-alias",
                alias,
                "-file",
                path(alias + ".pem"),
                "-keystore",
                path(alias + ".p12"));
    }

    /** A self-signed key pair named {@code alias} in {@code alias.p12}: one the CA never signed. */
    void selfSigned(String alias, String dname) throws Exception {
        keyPair(alias, dname);
    }

    /** {@code alias}'s certificate chain ({@code alias-chain.crt}) and private key ({@code alias.key}, PKCS#8) as PEM. */
    List<Path> pem(String alias) throws Exception {
        KeyStore store = load(alias + ".p12");
        StringBuilder chain = new StringBuilder();
        for (Certificate certificate : store.getCertificateChain(alias)) {
            chain.append(pem("CERTIFICATE", certificate.getEncoded()));
        }
        Key key = store.getKey(alias, PASSWORD.toCharArray());
        Path crt = dir.resolve(alias + "-chain.crt");
        Path pkcs8 = dir.resolve(alias + ".key");
        Files.writeString(crt, chain);
        Files.writeString(pkcs8, pem("PRIVATE KEY", key.getEncoded()));
        return List.of(crt, pkcs8);
    }

    /** A client trusting the test CA, presenting {@code identity}'s certificate (none when null). */
    SSLContext client(String identity) throws Exception {
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(load("trust.p12"));
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(identity == null ? null : load(identity + ".p12"), PASSWORD.toCharArray());
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(identity == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return ssl;
    }

    String path(String file) {
        return dir.resolve(file).toString();
    }

    private KeyStore load(String file) throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(dir.resolve(file))) {
            store.load(in, PASSWORD.toCharArray());
        }
        return store;
    }

    private void keyPair(String alias, String dname, String... extra) throws Exception {
        List<String> args = new ArrayList<>(List.of(
                "-genkeypair",
                "-alias",
                alias,
                "-keyalg",
                "RSA",
                "-keysize",
                "2048",
                "-dname",
                dname,
                "-validity",
                "2",
                "-keystore",
                path(alias + ".p12")));
        args.addAll(List.of(extra));
        keytool(args.toArray(String[]::new));
    }

    private void keytool(String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        command.addAll(List.of("-storetype", "PKCS12", "-storepass", PASSWORD));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (process.waitFor() != 0) {
            throw new IllegalStateException("keytool " + String.join(" ", args) + ": " + output);
        }
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                        .encodeToString(der) + "\n-----END " + type + "-----\n";
    }
}
