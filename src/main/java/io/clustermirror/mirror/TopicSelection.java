package io.clustermirror.mirror;

import java.util.Collection;
import java.util.List;

/**
 * What a StartMirrorTopics names: topics by name and/or include/exclude regexes (kept on the mirror), and the two
 * explicit consents a start may give.
 *
 * @param adoptExisting an existing destination topic this mirror did not create may be taken over (read-only guard,
 *        mirror-owned configs, and under {@code mirror.truncation.policy=recreate} deletion)
 * @param overrideExclude a topic named explicitly is started even when {@code mirror.topics.exclude} (or this start's
 *        {@code exclude}) matches it; Kafka's internal topics and the state topic stay refused
 */
public record TopicSelection(
        List<String> topics,
        List<String> include,
        List<String> exclude,
        boolean adoptExisting,
        boolean overrideExclude) {

    public TopicSelection {
        topics = List.copyOf(topics);
        include = List.copyOf(include);
        exclude = List.copyOf(exclude);
    }

    /** Topics by name only, without consents: what auto-discovery starts. */
    public static TopicSelection named(Collection<String> topics) {
        return new TopicSelection(List.copyOf(topics), List.of(), List.of(), false, false);
    }
}
