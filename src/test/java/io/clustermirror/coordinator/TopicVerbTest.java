package io.clustermirror.coordinator;

import static io.clustermirror.mirror.MirrorPartitionState.*;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.clustermirror.mirror.MirrorPartitionState;

class TopicVerbTest {

    @Test
    void everyAcceptedStateShouldBeALegalMoveToTheTarget() {
        for (TopicVerb verb : TopicVerb.values()) {
            for (MirrorPartitionState state : MirrorPartitionState.values()) {
                if (verb.accepts(state)) {
                    assertThat(state.canMoveTo(verb.target())).as(verb + " from " + state).isTrue();
                }
            }
        }
    }

    @Test
    void verbsShouldApplyOnlyWhereAnOperatorExpects() {
        assertThat(TopicVerb.PAUSE.accepts(MIRRORING)).isTrue();
        assertThat(TopicVerb.PAUSE.accepts(LOG_TRUNCATION)).isFalse();
        assertThat(TopicVerb.RESUME.accepts(PAUSED)).isTrue();
        assertThat(TopicVerb.RESUME.accepts(FAILED)).as("FAILED is recovered, not resumed").isFalse();
        assertThat(TopicVerb.STOP.accepts(FAILED)).isTrue();
        assertThat(TopicVerb.STOP.skips(STOPPED)).isTrue();
        assertThat(TopicVerb.RECOVER.accepts(FAILED)).isTrue();
        assertThat(TopicVerb.RECOVER.skips(MIRRORING)).isTrue();
    }
}
