package io.clustermirror.state;

import io.clustermirror.mirror.TopicDivergence;

/** Value of a topic's {@code divergence} record: the records preserved before it was last recreated. */
public record DivergenceRecord(int v, TopicDivergence divergence) {}
