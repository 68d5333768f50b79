package io.clustermirror.mirror;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TopicNamesTest {

    @Test
    void kafkasRulesShouldDecideLegalNames() {
        assertThat(TopicNames.invalidReason("orders.eu-1_a")).isNull();
        assertThat(TopicNames.invalidReason("..")).isNotNull();
        assertThat(TopicNames.invalidReason("a b")).contains("not a legal topic name");
        assertThat(TopicNames.invalidReason("t".repeat(250))).contains("250 characters");
        assertThat(TopicNames.invalidReason("")).isNotNull();
    }

    @Test
    void theStateTopicsAndKafkasInternalTopicsShouldNeverBeMirrorable() {
        assertThat(TopicNames.forbiddenReason("cm-state", "cm-state")).contains("state topic");
        assertThat(TopicNames.forbiddenReason("__mirror_state", "cm-state")).contains("state topic");
        assertThat(TopicNames.forbiddenReason("__consumer_offsets", "cm-state")).contains("internal Kafka topic");
        assertThat(TopicNames.mirrorable("__share_group_state", "__mirror_state"))
                .isFalse();
        assertThat(TopicNames.mirrorable("__app", "__mirror_state")).isTrue();
    }

    @Test
    void anotherInstancesStateTopicShouldNeverBeMirrorableWhateverThisInstanceCallsItsOwn() {
        assertThat(TopicNames.forbiddenReason("__mirror_state_b", "__mirror_state"))
                .isEqualTo(
                        "__mirror_state_b is a cluster mirror state topic on the destination and is never mirrored into");
        assertThat(TopicNames.mirrorable("__mirror_state-dr", "cm-state")).isFalse();
        assertThat(TopicNames.mirrorable("__mirror_statements", "cm-state")).isFalse();
        assertThat(TopicNames.mirrorable("mirror_state", "cm-state")).isTrue();
    }
}
