package io.clustermirror.state;

import io.clustermirror.mirror.TopicPromotion;

/** Value of a topic's {@code promotion} record: a promote under way, or the proof of one that completed. */
public record PromotionRecord(int v, TopicPromotion promotion) {}
