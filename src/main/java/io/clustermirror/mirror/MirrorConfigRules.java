package io.clustermirror.mirror;

import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * What a per-mirror config may hold and which values are secret. The Kafka client knowledge (the
 * names of every {@code sasl.*} / {@code ssl.*} setting and which are passwords) is handed in, so
 * this stays pure and testable without a client.
 */
public final class MirrorConfigRules {

    public static final Set<String> SECURITY_PROTOCOLS = Set.of("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL");
    public static final Set<String> TRUNCATION_POLICIES = Set.of("fail", "recreate");

    private static final Set<String> REGEX_LIST_KEYS = Set.of(
            MirrorConfig.TOPICS_INCLUDE,
            MirrorConfig.TOPICS_EXCLUDE,
            MirrorConfig.GROUPS_INCLUDE,
            MirrorConfig.GROUPS_EXCLUDE);
    private static final Set<String> PLAIN_KEYS = Set.of(
            MirrorConfig.BOOTSTRAP_SERVERS,
            MirrorConfig.SECURITY_PROTOCOL,
            MirrorConfig.ACL_INCLUDE,
            MirrorConfig.TOPIC_PROPERTIES_EXCLUDE,
            MirrorConfig.TRUNCATION_POLICY);
    private static final Pattern HOST_PORT = Pattern.compile("^(\\[[0-9a-fA-F:.]+]|[^\\s:\\[\\]]+):(\\d{1,5})$");
    /**
     * Most {@code bootstrap.servers} entries accepted: each unresolvable one costs the Kafka client a DNS look-up
     * before the source can even be asked, and a handful is what any cluster needs.
     */
    public static final int MAX_BOOTSTRAP_SERVERS = 50;

    private final Set<String> securityKeys;
    private final Set<String> passwordKeys;

    /**
     * @param securityKeys every {@code sasl.*} and {@code ssl.*} setting the Kafka client accepts
     * @param passwordKeys the settings the Kafka client treats as passwords
     */
    public MirrorConfigRules(Set<String> securityKeys, Set<String> passwordKeys) {
        this.securityKeys = Set.copyOf(securityKeys);
        this.passwordKeys = Set.copyOf(passwordKeys);
    }

    /** Every key a mirror config accepts, sorted. */
    public Set<String> knownKeys() {
        Set<String> keys = new TreeSet<>(PLAIN_KEYS);
        keys.addAll(REGEX_LIST_KEYS);
        keys.addAll(securityKeys);
        return keys;
    }

    /** Secret values are never returned nor logged: Kafka passwords, and anything named like a credential. */
    public boolean isSensitive(String key) {
        String lower = key.toLowerCase(Locale.ROOT);
        return passwordKeys.contains(key)
                || lower.contains("password")
                || lower.contains("secret")
                || lower.equals("sasl.jaas.config")
                || lower.equals("ssl.keystore.key");
    }

    /**
     * The text with every sensitive value of {@code config} replaced by the mask: for error messages from
     * clients or brokers that might echo a value back.
     */
    public String redact(String text, MirrorConfig config) {
        String redacted = text;
        for (Map.Entry<String, String> entry : config.values().entrySet()) {
            if (isSensitive(entry.getKey()) && !entry.getValue().isEmpty()) {
                redacted = redacted.replace(entry.getValue(), MirrorConfig.MASK);
            }
        }
        return redacted;
    }

    /** Validates a complete config (as on create): unknown keys, required keys, then every value. */
    public MirrorConfig validate(Map<String, String> values) {
        return validate(values, "config.");
    }

    private MirrorConfig validate(Map<String, String> values, String fieldPrefix) {
        if (values == null) {
            throw new MirrorException(
                    MirrorError.INVALID_CONFIG, "config is required and must contain bootstrap.servers", "config");
        }
        try {
            values.forEach(this::validateEntry);
        } catch (MirrorException e) {
            String field = e.field() != null && e.field().startsWith("config.")
                    ? fieldPrefix + e.field().substring(7)
                    : e.field();
            throw new MirrorException(e.error(), e.getMessage(), field);
        }
        if (!values.containsKey(MirrorConfig.BOOTSTRAP_SERVERS)) {
            throw MirrorException.invalidConfig(MirrorConfig.BOOTSTRAP_SERVERS, "bootstrap.servers is required");
        }
        return new MirrorConfig(values);
    }

    /** Validates a PATCH: every key set or deleted must be known; the result must be a valid config. */
    public MirrorConfig alter(MirrorConfig current, Map<String, String> set, Set<String> delete) {
        for (String key : delete) {
            if (set.containsKey(key)) {
                throw new MirrorException(
                        MirrorError.INVALID_REQUEST,
                        "'" + RegexList.abbreviate(key) + "' is both set and deleted",
                        "delete");
            }
            requireKnown(key, "delete");
            if (key.equals(MirrorConfig.BOOTSTRAP_SERVERS)) {
                throw new MirrorException(
                        MirrorError.INVALID_CONFIG, "bootstrap.servers is required and cannot be deleted", "delete");
            }
        }
        return validate(current.alter(set, delete).values(), "set.");
    }

    private void requireKnown(String key, String field) {
        if (!knownKeys().contains(key)) {
            throw new MirrorException(
                    MirrorError.INVALID_CONFIG,
                    "Unknown mirror config '" + RegexList.abbreviate(key)
                            + "'; accepted: bootstrap.servers, security.protocol, sasl.*, ssl.*, "
                            + String.join(", ", mirrorKeys()),
                    field);
        }
    }

    private static Set<String> mirrorKeys() {
        Set<String> keys = new TreeSet<>(REGEX_LIST_KEYS);
        keys.addAll(Set.of(
                MirrorConfig.ACL_INCLUDE, MirrorConfig.TOPIC_PROPERTIES_EXCLUDE, MirrorConfig.TRUNCATION_POLICY));
        return keys;
    }

    private void validateEntry(String key, String value) {
        requireKnown(key, "config." + key);
        if (value == null) {
            throw MirrorException.invalidConfig(
                    key, "'" + key + "' must have a value; delete it instead of setting null");
        }
        switch (key) {
            case MirrorConfig.BOOTSTRAP_SERVERS -> validateBootstrap(value);
            case MirrorConfig.SECURITY_PROTOCOL -> oneOf(key, value.toUpperCase(Locale.ROOT), SECURITY_PROTOCOLS);
            case MirrorConfig.TRUNCATION_POLICY -> oneOf(key, value, TRUNCATION_POLICIES);
            case MirrorConfig.ACL_INCLUDE -> {
                bounded(key, value);
                eachItem(key, value, AclRule::parse);
            }
            case MirrorConfig.TOPIC_PROPERTIES_EXCLUDE ->
                eachItem(key, value, name -> {
                    if (!name.matches("[a-z0-9.]+")) {
                        throw new IllegalArgumentException(
                                "'" + RegexList.abbreviate(name) + "' is not a topic config name");
                    }
                });
            default -> {
                if (REGEX_LIST_KEYS.contains(key)) {
                    try {
                        RegexList.compile(MirrorConfig.split(value));
                    } catch (IllegalArgumentException e) {
                        throw MirrorException.invalidConfig(key, "'" + key + "': " + e.getMessage());
                    }
                }
            }
        }
    }

    private static void validateBootstrap(String value) {
        if (value.isBlank()) {
            throw MirrorException.invalidConfig(MirrorConfig.BOOTSTRAP_SERVERS, "bootstrap.servers must not be empty");
        }
        if (value.chars().anyMatch(c -> Character.isWhitespace(c) && c != ' ' || Character.isISOControl(c))) {
            throw MirrorException.invalidConfig(
                    MirrorConfig.BOOTSTRAP_SERVERS,
                    "bootstrap.servers must not hold line breaks, tabs or other control characters");
        }
        String[] addresses = value.split(",");
        if (addresses.length > MAX_BOOTSTRAP_SERVERS) {
            throw MirrorException.invalidConfig(
                    MirrorConfig.BOOTSTRAP_SERVERS,
                    "bootstrap.servers lists " + addresses.length + " addresses; at most " + MAX_BOOTSTRAP_SERVERS
                            + " are accepted (a few brokers of the cluster are enough)");
        }
        for (String address : addresses) {
            var matcher = HOST_PORT.matcher(address.trim());
            int port = matcher.matches() ? Integer.parseInt(matcher.group(2)) : -1;
            if (port < 1 || port > 65535) {
                throw MirrorException.invalidConfig(
                        MirrorConfig.BOOTSTRAP_SERVERS,
                        "bootstrap.servers entry '" + RegexList.abbreviate(address.trim())
                                + "' is not host:port with a port in 1-65535");
            }
        }
    }

    private static void oneOf(String key, String value, Set<String> allowed) {
        if (!allowed.contains(value)) {
            throw MirrorException.invalidConfig(
                    key,
                    "'" + key + "' is '" + RegexList.abbreviate(value) + "'; expected one of "
                            + new TreeSet<>(allowed));
        }
    }

    private static void eachItem(String key, String value, Consumer<String> check) {
        for (String item : value.split(",")) {
            if (item.isBlank()) {
                continue;
            }
            try {
                check.accept(item.trim());
            } catch (IllegalArgumentException e) {
                throw MirrorException.invalidConfig(key, "'" + key + "': " + e.getMessage());
            }
        }
    }

    /** A list setting holding regexes: bounded in count and length before anything is compiled. */
    private static void bounded(String key, String value) {
        try {
            RegexList.checkBounds(MirrorConfig.split(value));
        } catch (IllegalArgumentException e) {
            throw MirrorException.invalidConfig(key, "'" + key + "': " + e.getMessage());
        }
    }
}
