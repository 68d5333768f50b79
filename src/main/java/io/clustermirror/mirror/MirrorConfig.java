package io.clustermirror.mirror;

import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * The per-mirror configuration as the operator set it: source connection ({@code bootstrap.servers},
 * {@code security.protocol}, {@code sasl.*}, {@code ssl.*}) and the {@code mirror.*} policies.
 * Immutable and already validated by {@link MirrorConfigRules}; keys are kept sorted.
 */
public record MirrorConfig(Map<String, String> values) {

    public static final String BOOTSTRAP_SERVERS = "bootstrap.servers";
    public static final String SECURITY_PROTOCOL = "security.protocol";
    public static final String TOPICS_INCLUDE = "mirror.topics.include";
    public static final String TOPICS_EXCLUDE = "mirror.topics.exclude";
    public static final String GROUPS_INCLUDE = "mirror.groups.include";
    public static final String GROUPS_EXCLUDE = "mirror.groups.exclude";
    public static final String ACL_INCLUDE = "mirror.acl.include";
    public static final String TOPIC_PROPERTIES_EXCLUDE = "mirror.topic.properties.exclude";
    public static final String TRUNCATION_POLICY = "mirror.truncation.policy";

    /** The KIP's default for {@link #TOPIC_PROPERTIES_EXCLUDE}. */
    public static final String DEFAULT_TOPIC_PROPERTIES_EXCLUDE = "follower.replication.throttled.replicas,"
            + "leader.replication.throttled.replicas,message.timestamp.type,message.timestamp.before.max.ms,"
            + "message.timestamp.after.max.ms,min.insync.replicas,unclean.leader.election.enable";

    public static final String DEFAULT_TOPICS_EXCLUDE = "__.*";

    /** What a masked value reads as, in every response and log line (Kafka's own choice for passwords). */
    public static final String MASK = "[hidden]";

    public MirrorConfig {
        values = Collections.unmodifiableMap(new TreeMap<>(values));
    }

    public String bootstrapServers() {
        return values.get(BOOTSTRAP_SERVERS);
    }

    public String get(String key, String defaultValue) {
        return values.getOrDefault(key, defaultValue);
    }

    /** A comma-separated list setting as a list, blanks dropped. */
    public List<String> list(String key, String defaultValue) {
        return split(get(key, defaultValue));
    }

    /** A comma-separated list value as a list, blanks dropped. */
    public static List<String> split(String value) {
        return Arrays.stream(value.split(","))
                .map(String::trim)
                .filter(s -> !s.isEmpty())
                .toList();
    }

    public boolean recreateOnDivergence() {
        return "recreate".equals(values.get(TRUNCATION_POLICY));
    }

    /** The subset used to build a Kafka client for the source cluster. */
    public Map<String, String> sourceClientProperties() {
        Map<String, String> client = new LinkedHashMap<>();
        values.forEach((key, value) -> {
            if (!key.startsWith("mirror.")) {
                client.put(key, value);
            }
        });
        return client;
    }

    /** Whether changing from {@code other} to this config changes how the source is reached. */
    public boolean sameSourceConnection(MirrorConfig other) {
        return sourceClientProperties().equals(other.sourceClientProperties());
    }

    /** The values with every sensitive one replaced by {@link #MASK}. */
    public Map<String, String> masked(Predicate<String> sensitive) {
        Map<String, String> masked = new TreeMap<>();
        values.forEach((key, value) -> masked.put(key, sensitive.test(key) ? MASK : value));
        return masked;
    }

    /** A new config with {@code set} applied, then {@code delete} removed (not validated). */
    public MirrorConfig alter(Map<String, String> set, Set<String> delete) {
        Map<String, String> altered = new TreeMap<>(values);
        altered.putAll(set);
        delete.forEach(altered::remove);
        return new MirrorConfig(altered);
    }

    @Override
    public String toString() {
        return "MirrorConfig" + masked(key -> true).keySet();
    }
}
