package io.clustermirror.mirror;

import com.google.re2j.Pattern;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * Which topics a StartMirrorTopics may prepare, and why the others are refused, each for itself (pure: the source's
 * topics and every mirror's partitions are handed in). Refused, in this order: an illegal name or a topic that is
 * never mirrored ({@link TopicNames}); a topic named explicitly that the exclude lists match, unless overridden; a
 * topic the source does not have; a topic some mirror mirrors already. A candidate may adopt an existing destination
 * topic when the start says so or this mirror has state for it (it created or adopted it before).
 *
 * @param candidates topics to prepare, in name order
 * @param refusals the refused topics with their error
 */
public record StartPlan(List<Candidate> candidates, List<Refusal> refusals) {

    public record Candidate(String topic, boolean mayAdopt) {}

    public record Refusal(String topic, MirrorError error, String reason) {}

    public StartPlan {
        candidates = List.copyOf(candidates);
        refusals = List.copyOf(refusals);
    }

    /**
     * @param mirror the mirror starting the topics
     * @param includes the start's include patterns, compiled
     * @param excludes the start's exclude patterns and the mirror's {@code mirror.topics.exclude}, compiled
     * @param sourceTopics every topic the source has
     * @param stateTopic this service's state topic
     * @param partitions every mirror's partitions, by mirror name
     */
    public static StartPlan plan(
            String mirror,
            TopicSelection selection,
            List<Pattern> includes,
            List<Pattern> excludes,
            Set<String> sourceTopics,
            String stateTopic,
            Map<String, Map<MirrorPartition, PartitionStatus>> partitions) {
        Predicate<String> excluded =
                topic -> excludes.stream().anyMatch(p -> p.matcher(topic).matches());
        Set<String> named = new TreeSet<>(selection.topics());
        Set<String> wanted = new TreeSet<>(named);
        sourceTopics.stream()
                .filter(t -> includes.stream().anyMatch(p -> p.matcher(t).matches()))
                .filter(excluded.negate())
                .forEach(wanted::add);
        List<Candidate> candidates = new ArrayList<>();
        List<Refusal> refusals = new ArrayList<>();
        for (String topic : wanted) {
            String invalid = TopicNames.invalidReason(topic);
            String reason = invalid != null ? invalid : TopicNames.forbiddenReason(topic, stateTopic);
            String mirroredBy = mirroredBy(topic, partitions);
            if (reason != null) {
                refusals.add(new Refusal(topic, MirrorError.INVALID_TOPIC_EXCEPTION, reason));
            } else if (named.contains(topic) && !selection.overrideExclude() && excluded.test(topic)) {
                refusals.add(new Refusal(
                        topic,
                        MirrorError.INVALID_REQUEST,
                        "topic matches mirror.topics.exclude or this request's "
                                + "exclude; to start it anyway, name it with \"overrideExclude\": true"));
            } else if (!sourceTopics.contains(topic)) {
                refusals.add(new Refusal(
                        topic, MirrorError.UNKNOWN_TOPIC_OR_PARTITION, "topic does not exist on the source cluster"));
            } else if (mirroredBy != null) {
                refusals.add(new Refusal(
                        topic,
                        MirrorError.TOPIC_ALREADY_IN_CLUSTER_MIRROR,
                        mirroredBy.equals(mirror)
                                ? "topic is already mirrored"
                                : "topic is already mirrored by mirror '" + mirroredBy + "'"));
            } else {
                boolean tracked = partitions.getOrDefault(mirror, Map.of()).keySet().stream()
                        .anyMatch(p -> p.topic().equals(topic));
                candidates.add(new Candidate(topic, selection.adoptExisting() || tracked));
            }
        }
        return new StartPlan(candidates, refusals);
    }

    /** The mirror whose partitions of {@code topic} are not all STOPPED, or null: a destination topic has one writer. */
    private static String mirroredBy(String topic, Map<String, Map<MirrorPartition, PartitionStatus>> partitions) {
        return partitions.entrySet().stream()
                .filter(m -> m.getValue().entrySet().stream()
                        .anyMatch(e -> e.getKey().topic().equals(topic)
                                && e.getValue().state() != MirrorPartitionState.STOPPED))
                .map(Map.Entry::getKey)
                .sorted()
                .findFirst()
                .orElse(null);
    }
}
