package io.clustermirror.kafka;

import java.security.NoSuchAlgorithmException;
import java.security.Security;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.SslConfigs;

/**
 * What the Kafka client fails on although its {@code ConfigDef} has no validator for it: TLS protocols, cipher
 * suites, key store types and JCA algorithms this JVM does not have, and negative durations. Checked against the JDK's
 * own lists (the JCA providers), so the answer is the one the client would reach when it builds its SSL engine or
 * login; with {@code ssl.provider} set the algorithms are that provider's, which only the client can check.
 */
final class SourceSettingRules {

    /** Kafka reads PEM key and trust stores itself, whatever the JDK has. */
    private static final String PEM = "PEM";

    private static final Map<String, String> JCA_SERVICES = Map.of(
            SslConfigs.SSL_KEYSTORE_TYPE_CONFIG, "KeyStore",
            SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "KeyStore",
            SslConfigs.SSL_KEYMANAGER_ALGORITHM_CONFIG, "KeyManagerFactory",
            SslConfigs.SSL_TRUSTMANAGER_ALGORITHM_CONFIG, "TrustManagerFactory",
            SslConfigs.SSL_SECURE_RANDOM_IMPLEMENTATION_CONFIG, "SecureRandom",
            SslConfigs.SSL_PROTOCOL_CONFIG, "SSLContext");

    private SourceSettingRules() {}

    /** Throws {@link ConfigException} naming why the client would refuse the parsed value. */
    static void ensureValid(String name, Object parsed, Map<String, String> settings) {
        if (parsed instanceof Number n && (name.endsWith(".ms") || name.endsWith(".seconds")) && n.longValue() < 0) {
            throw new ConfigException(name, parsed, "a duration cannot be negative");
        }
        if (parsed == null
                || settings.containsKey(SslConfigs.SSL_PROVIDER_CONFIG)
                        && !name.equals(SslConfigs.SSL_PROVIDER_CONFIG)) {
            return;
        }
        switch (name) {
            case SslConfigs.SSL_PROVIDER_CONFIG -> {
                if (Security.getProvider(String.valueOf(parsed)) == null) {
                    throw new ConfigException(name, parsed, "no such security provider in this JVM");
                }
            }
            case SslConfigs.SSL_ENABLED_PROTOCOLS_CONFIG ->
                supported(name, parsed, () -> SslDefaults.PARAMETERS.getProtocols());
            case SslConfigs.SSL_CIPHER_SUITES_CONFIG ->
                supported(name, parsed, () -> SslDefaults.PARAMETERS.getCipherSuites());
            default -> {
                String service = JCA_SERVICES.get(name);
                if (service != null) {
                    Set<String> known = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
                    known.addAll(Security.getAlgorithms(service));
                    if (service.equals("KeyStore")) {
                        known.add(PEM);
                    }
                    if (!known.contains(String.valueOf(parsed))) {
                        throw new ConfigException(name, parsed, "not a " + service + " this JVM provides");
                    }
                }
            }
        }
    }

    private static void supported(String name, Object parsed, Supplier<String[]> supported) {
        Set<String> known = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
        known.addAll(List.of(supported.get()));
        for (Object value : (List<?>) parsed) {
            if (!known.contains(String.valueOf(value))) {
                throw new ConfigException(
                        name, value, "not supported by this JVM's TLS (" + name.toLowerCase(Locale.ROOT) + ")");
            }
        }
    }

    /** The JVM's default TLS parameters, read once. */
    private static final class SslDefaults {
        static final SSLParameters PARAMETERS = supportedParameters();

        private static SSLParameters supportedParameters() {
            try {
                return SSLContext.getDefault().getSupportedSSLParameters();
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("This JVM has no default TLS context", e);
            }
        }
    }
}
