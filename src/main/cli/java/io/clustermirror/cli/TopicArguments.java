package io.clustermirror.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * {@code --topics} split the way the REST API takes it: an entry that is a legal Kafka topic name is a name
 * ({@code topics}), any other entry a regex ({@code include}, for the verbs whose operation takes patterns). So
 * {@code orders.eu} names one topic, {@code orders\..*} is a pattern.
 *
 * @param names the topic names, in the order given
 * @param patterns the regexes, in the order given
 */
record TopicArguments(List<String> names, List<String> patterns) {

    /** Kafka's rule for a topic name (its {@code Topic.validate}), without the length: a name is at most 249. */
    private static final Pattern TOPIC_NAME = Pattern.compile("[a-zA-Z0-9._-]{1,249}");

    TopicArguments {
        names = List.copyOf(names);
        patterns = List.copyOf(patterns);
    }

    static TopicArguments parse(List<String> entries) {
        List<String> names = new ArrayList<>();
        List<String> patterns = new ArrayList<>();
        for (String entry : entries == null ? List.<String>of() : entries) {
            String trimmed = entry.strip();
            if (trimmed.isEmpty()) {
                continue;
            }
            if (isTopicName(trimmed)) {
                names.add(trimmed);
            } else {
                patterns.add(trimmed);
            }
        }
        return new TopicArguments(names, patterns);
    }

    static boolean isTopicName(String entry) {
        return TOPIC_NAME.matcher(entry).matches() && !entry.equals(".") && !entry.equals("..");
    }

    boolean isEmpty() {
        return names.isEmpty() && patterns.isEmpty();
    }

    /**
     * The names alone, for a verb whose operation takes only names.
     *
     * @throws UsageException naming the first entry that is no topic name
     */
    List<String> namesOnly(Verb verb) {
        if (!patterns.isEmpty()) {
            throw new UsageException(verb.option() + " takes topic names, not regexes (the REST API names each topic):"
                    + " '" + patterns.get(0) + "' is not a topic name");
        }
        return names;
    }
}
