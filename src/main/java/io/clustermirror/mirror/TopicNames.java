package io.clustermirror.mirror;

import java.util.Set;
import java.util.regex.Pattern;

/**
 * Which topic names may be mirrored at all: Kafka's topic-name rules, and never a topic the destination's brokers
 * or this service run on (the state topic, Kafka's internal topics), whatever a request or a pattern says.
 */
public final class TopicNames {

    public static final int MAX_LENGTH = 249;
    /**
     * The state topic's default name, and the prefix of every name reserved for state topics: refused even when this
     * service's state topic is named otherwise, since another instance on the destination may use it.
     */
    public static final String DEFAULT_STATE_TOPIC = "__mirror_state";
    /** Kafka's own topics: group offsets, transactions, share-group state, KRaft metadata, tiered-storage metadata. */
    public static final Set<String> KAFKA_INTERNAL = Set.of(
            "__consumer_offsets",
            "__transaction_state",
            "__share_group_state",
            "__cluster_metadata",
            "__remote_log_metadata");

    private static final Pattern LEGAL = Pattern.compile("[a-zA-Z0-9._-]+");

    private TopicNames() {}

    /** Why the name is not a legal Kafka topic name, or null when it is. */
    public static String invalidReason(String topic) {
        if (topic.isEmpty()) {
            return "a topic name must not be empty";
        }
        if (topic.length() > MAX_LENGTH) {
            return "a topic name of " + topic.length() + " characters is longer than the " + MAX_LENGTH
                    + " Kafka allows";
        }
        if (topic.equals(".") || topic.equals("..")) {
            return "'.' and '..' are not topic names";
        }
        if (!LEGAL.matcher(topic).matches()) {
            return "'" + RegexList.abbreviate(topic)
                    + "' is not a legal topic name: only ASCII letters, digits, '.', '_' and '-' are allowed";
        }
        return null;
    }

    /** Why a state topic, recognised by its name or by its records, is refused (INVALID_TOPIC_EXCEPTION). */
    public static String stateTopicReason(String topic) {
        return topic + " is a cluster mirror state topic on the destination and is never mirrored into";
    }

    /** Why the topic may never be mirrored into this destination, or null when it may. */
    public static String forbiddenReason(String topic, String stateTopic) {
        if (topic.equals(stateTopic) || topic.startsWith(DEFAULT_STATE_TOPIC)) {
            return stateTopicReason(topic);
        }
        if (KAFKA_INTERNAL.contains(topic)) {
            return topic + " is an internal Kafka topic and is never mirrored";
        }
        return null;
    }

    /** Whether the name is mirrorable at all: legal and not forbidden. */
    public static boolean mirrorable(String topic, String stateTopic) {
        return invalidReason(topic) == null && forbiddenReason(topic, stateTopic) == null;
    }
}
