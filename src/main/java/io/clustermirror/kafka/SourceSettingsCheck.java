package io.clustermirror.kafka;

import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.RegexList;
import io.clustermirror.mirror.SourceAllowlist;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SecurityConfig;
import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.security.JaasContext;
import org.apache.kafka.common.utils.Utils;

/**
 * Checks resolved source client settings the way the Kafka client will read them (types, validators, the JAAS
 * syntax), so that a malformed value is a 400 {@code INVALID_CONFIG} naming the setting, not a failed contact with
 * the source. Values are never echoed: they may be secrets.
 */
final class SourceSettingsCheck {

    private static final Map<String, ConfigDef.ConfigKey> KEYS =
            AdminClientConfig.configDef().configKeys();

    private SourceSettingsCheck() {}

    /**
     * Every bootstrap address must be allowed: its host and port by a pattern, or every address its host resolves to
     * by a CIDR block. Blocking (a DNS lookup when the allowlist has blocks).
     */
    static void checkAllowed(SourceAllowlist allowlist, String bootstrapServers) {
        for (String trimmed : MirrorConfig.split(String.valueOf(bootstrapServers))) {
            String host = Utils.getHost(trimmed);
            Integer port = Utils.getPort(trimmed);
            if (host == null || port == null) {
                throw invalid(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "'" + trimmed + "' is not host:port");
            }
            if (allowlist.matchesHost(host, port) || (allowlist.hasBlocks() && inBlocks(allowlist, host))) {
                continue;
            }
            throw invalid(
                    AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                    "'" + trimmed + "' is not in mirror.source.allowlist: this service may not connect there");
        }
    }

    private static boolean inBlocks(SourceAllowlist allowlist, String host) {
        try {
            return allowlist.inBlocks(List.of(InetAddress.getAllByName(host)));
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /**
     * @param allowedClasses the classes {@code mirror.source.allowed.classes} lets a class-valued setting name
     */
    static void check(Map<String, String> resolved, Set<String> allowedClasses) {
        resolved.forEach((name, value) -> {
            ConfigDef.ConfigKey key = KEYS.get(name);
            if (key == null) {
                return;
            }
            if (namesClasses(key)) {
                // before parsing: parsing a CLASS value loads (and initialises) the class
                for (String className : MirrorConfig.split(value)) {
                    if (!allowedClasses.contains(className) && !className.startsWith(BUILT_IN_SECURITY)) {
                        throw invalid(
                                name,
                                "names a class the Kafka client would instantiate ('"
                                        + RegexList.abbreviate(className)
                                        + "'); only the classes listed in mirror.source.allowed.classes may be named");
                    }
                }
            }
            try {
                Object parsed = ConfigDef.parseType(name, value, key.type);
                if (key.validator != null) {
                    key.validator.ensureValid(name, parsed);
                }
                SourceSettingRules.ensureValid(name, parsed, resolved);
            } catch (ConfigException e) {
                throw invalid(
                        name,
                        "is not a valid " + key.type.name().toLowerCase(Locale.ROOT) + " value"
                                + (key.type == ConfigDef.Type.PASSWORD
                                                || name.contains("secret")
                                                || name.contains("password")
                                        ? ""
                                        : ": " + e.getMessage()));
            }
        });
        String jaas = resolved.get(SaslConfigs.SASL_JAAS_CONFIG);
        String protocol = resolved.getOrDefault(AdminClientConfig.SECURITY_PROTOCOL_CONFIG, "PLAINTEXT");
        if (jaas != null
                && protocol.toUpperCase(Locale.ROOT)
                        .startsWith("SASL")) { // read only where SASL is used, as the client does
            try {
                // parsed as the client will: one login module, Kafka's JAAS syntax
                JaasContext.loadClientContext(Map.of(SaslConfigs.SASL_JAAS_CONFIG, new Password(jaas)));
            } catch (IllegalArgumentException e) {
                // JaasConfig's messages name the rule broken and may quote a token of the value: those are left out
                throw invalid(
                        SaslConfigs.SASL_JAAS_CONFIG,
                        "is not valid JAAS ('<LoginModule class> required key=\"value\" ...;'): "
                                + String.valueOf(e.getMessage()).replaceAll("'[^']*'", "'...'"));
            }
        }
    }

    /**
     * A setting whose value is a class, or a list of classes, that the client instantiates ({@code security.providers}
     * is a string of class names that it instantiates and installs in the JVM).
     */
    static boolean namesClasses(ConfigDef.ConfigKey key) {
        return key.type == ConfigDef.Type.CLASS
                || key.name.equals(SecurityConfig.SECURITY_PROVIDERS_CONFIG)
                || key.name.endsWith(".class")
                || (key.type == ConfigDef.Type.LIST
                        && (key.name.endsWith(".classes")
                                || key.name.equals(CommonClientConfigs.METRIC_REPORTER_CLASSES_CONFIG)));
    }

    /**
     * kafka-clients' own security classes (login callback handlers for OAUTHBEARER, SSL engine factories, ...) are
     * allowed without being listed: they are what those settings exist for.
     */
    static final String BUILT_IN_SECURITY = "org.apache.kafka.common.security.";

    private static MirrorException invalid(String name, String reason) {
        return new MirrorException(MirrorError.INVALID_CONFIG, "'" + name + "' " + reason, "config." + name);
    }
}
