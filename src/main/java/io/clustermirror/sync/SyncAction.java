package io.clustermirror.sync;

import io.clustermirror.mirror.Frozen;
import java.util.Set;

/**
 * A change a sync cycle asks of the owner of the mirrors' state (the coordinator), which validates, persists and applies
 * it: the sync reads both clusters and plans, the coordinator alone moves partitions.
 */
public sealed interface SyncAction {

    /** The source answers with another cluster id: take the mirror out of the data plane until it is the right one again. */
    record Halt(String actualClusterId) implements SyncAction {}

    /** The source is the mirror's cluster again: its partitions continue from their persisted states. */
    record Unhalt() implements SyncAction {}

    /** Source topics the include patterns newly match: start mirroring them. */
    record StartTopics(Set<String> topics) implements SyncAction {
        public StartTopics {
            topics = Frozen.set(topics);
        }
    }

    /** The source topic has more partitions: the destination's grow and the new ones are mirrored. */
    record ExpandTopic(String topic) implements SyncAction {}

    /** Mirrored topics gone from the source: stop them, keeping the destination topic (writable). */
    record StopTopics(Set<String> topics, String reason) implements SyncAction {
        public StopTopics {
            topics = Frozen.set(topics);
        }
    }
}
