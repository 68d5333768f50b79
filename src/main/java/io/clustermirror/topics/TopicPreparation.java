package io.clustermirror.topics;

/**
 * How preparing one destination topic ended ({@link DestinationTopics#prepareAll}): each topic of a batch gets its own,
 * so one topic's failure fails no other.
 */
public sealed interface TopicPreparation {

    String topic();

    /** The destination topic is ready to be mirrored into: what the data plane needs to know of it. */
    record Prepared(String topic, int partitions) implements TopicPreparation {}

    /** The source has no such topic (any more). */
    record NotOnSource(String topic) implements TopicPreparation {}

    /** The destination has a topic of that name that this mirror may not adopt; nothing was changed on it. */
    record Conflict(String topic) implements TopicPreparation {
        public String reason() {
            return DestinationTopics.conflictReason(topic);
        }
    }

    /** The topic cannot be mirrored as it is (the destination has more partitions than the source). */
    record Mismatch(String topic, String reason) implements TopicPreparation {}

    /** A request about the topic failed: {@code error} is what a request for that topic alone would have thrown. */
    record Failed(String topic, Exception error) implements TopicPreparation {}
}
