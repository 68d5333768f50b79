package io.clustermirror.mirror;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * What a destination topic held that its source did not, when it was last recreated for diverging (a failback), and
 * where those records were preserved, per partition. Persisted in {@code __mirror_state} so that describe still shows
 * it after a restart.
 */
public record TopicDivergence(String topic, Instant at, List<PreservedTail> partitions) {

    public TopicDivergence {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(at, "at");
        partitions = List.copyOf(partitions);
    }
}
