package io.clustermirror.sync.plan;

import io.clustermirror.mirror.Frozen;
import io.clustermirror.mirror.TopicNames;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What the metadata manager must do about topics this cycle, from the source's topics and the mirror's own view.
 *
 * @param newTopics source topics that match the include patterns and were never mirrored: start them
 * @param expanded mirrored topics whose source has more partitions now: topic to the source's partition count
 * @param deletedOnSource mirrored topics (not stopped) that no longer exist on the source: stop them
 */
public record TopicSyncPlan(Set<String> newTopics, Map<String, Integer> expanded, Set<String> deletedOnSource) {

    public TopicSyncPlan {
        newTopics = Frozen.set(newTopics);
        expanded = Frozen.map(expanded);
        deletedOnSource = Frozen.set(deletedOnSource);
    }

    /**
     * @param sourcePartitions partition count of every source topic
     * @param mirrored partition count the mirror knows per topic it has (in any state)
     * @param stopped mirrored topics whose partitions are all STOPPING or STOPPED (left alone)
     * @param filter the mirror's topic include/exclude patterns
     */
    public static TopicSyncPlan plan(
            Map<String, Integer> sourcePartitions,
            Map<String, Integer> mirrored,
            Set<String> stopped,
            NameFilter filter) {
        return plan(sourcePartitions, mirrored, stopped, filter, TopicNames.DEFAULT_STATE_TOPIC);
    }

    /**
     * As {@link #plan(Map, Map, Set, NameFilter)}; a topic that may never be mirrored ({@link TopicNames}: the state
     * topic {@code stateTopic}, Kafka's internal topics, illegal names) is never new, whatever the patterns say.
     */
    public static TopicSyncPlan plan(
            Map<String, Integer> sourcePartitions,
            Map<String, Integer> mirrored,
            Set<String> stopped,
            NameFilter filter,
            String stateTopic) {
        Set<String> newTopics = new TreeSet<>();
        Map<String, Integer> expanded = new TreeMap<>();
        Set<String> deleted = new TreeSet<>();
        sourcePartitions.forEach((topic, count) -> {
            if (!mirrored.containsKey(topic)) {
                if (filter.matches(topic) && TopicNames.mirrorable(topic, stateTopic)) {
                    newTopics.add(topic);
                }
            } else if (!stopped.contains(topic) && count > mirrored.get(topic)) {
                expanded.put(topic, count);
            }
        });
        mirrored.keySet().forEach(topic -> {
            if (!sourcePartitions.containsKey(topic) && !stopped.contains(topic)) {
                deleted.add(topic);
            }
        });
        return new TopicSyncPlan(newTopics, expanded, deleted);
    }

    public boolean isEmpty() {
        return newTopics.isEmpty() && expanded.isEmpty() && deletedOnSource.isEmpty();
    }
}
