package io.clustermirror.coordinator;

import static io.clustermirror.mirror.MirrorPartitionState.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionStatus;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TopicVerbTest {

    @Test
    void everyAcceptedStateShouldBeALegalMoveToTheTarget() {
        for (TopicVerb verb : TopicVerb.values()) {
            for (MirrorPartitionState state : MirrorPartitionState.values()) {
                if (verb.accepts(state)) {
                    assertThat(state.canMoveTo(verb.target()))
                            .as(verb + " from " + state)
                            .isTrue();
                }
            }
        }
    }

    @Test
    void verbsShouldApplyOnlyWhereAnOperatorExpects() {
        assertThat(TopicVerb.PAUSE.accepts(MIRRORING)).isTrue();
        assertThat(TopicVerb.PAUSE.accepts(LOG_TRUNCATION)).isFalse();
        assertThat(TopicVerb.RESUME.accepts(PAUSED)).isTrue();
        assertThat(TopicVerb.RESUME.accepts(FAILED))
                .as("FAILED is recovered, not resumed")
                .isFalse();
        assertThat(TopicVerb.STOP.accepts(FAILED)).isTrue();
        assertThat(TopicVerb.STOP.skips(STOPPED)).isTrue();
        assertThat(TopicVerb.RECOVER.accepts(FAILED)).isTrue();
        assertThat(TopicVerb.RECOVER.skips(MIRRORING)).isTrue();
    }

    private static final Instant NOW = Instant.parse("2026-12-01T00:00:00Z");
    private static final MirrorPartition T0 = new MirrorPartition("t", 0);
    private static final MirrorPartition T1 = new MirrorPartition("t", 1);

    private static PartitionStatus in(MirrorPartitionState state) {
        PartitionStatus truncating = PartitionStatus.initial(NOW).moveTo(LOG_TRUNCATION, null, NOW);
        return state == LOG_TRUNCATION
                ? truncating
                : truncating.moveTo(state, "earlier", NOW).withRetryAttempt(-1);
    }

    @Test
    void aPlanShouldMoveWhatTheVerbAppliesToAndLeaveWhatIsAlreadyThere() {
        var plan = TopicVerb.RECOVER.plan("m", Map.of(T0, in(FAILED), T1, in(MIRRORING)), List.of("t"), null, NOW);

        assertThat(plan).containsOnlyKeys(T0);
        assertThat(plan.get(T0).state()).isEqualTo(LOG_TRUNCATION);
        assertThat(plan.get(T0).retryAttempt())
                .as("an operator's recover starts the retries afresh")
                .isZero();
    }

    @Test
    void aPlanShouldBeAllOrNothingNamingWhatCannotMove() {
        assertThatThrownBy(() ->
                        TopicVerb.PAUSE.plan("m", Map.of(T0, in(MIRRORING), T1, in(FAILED)), List.of("t"), null, NOW))
                .isInstanceOfSatisfying(MirrorException.class, e -> {
                    assertThat(e.error()).isEqualTo(MirrorError.INVALID_MIRROR_PARTITION_STATE);
                    assertThat(e.getMessage()).isEqualTo("Cannot pause: t-1 is FAILED");
                });
        assertThatThrownBy(() -> TopicVerb.STOP.plan("m", Map.of(T0, in(MIRRORING)), List.of("t", "u"), null, NOW))
                .isInstanceOfSatisfying(
                        MirrorException.class,
                        e -> assertThat(e.error()).isEqualTo(MirrorError.TOPIC_NOT_IN_CLUSTER_MIRROR));
    }

    @Test
    void stoppingAStoppedTopicShouldSaySo() {
        PartitionStatus stopped = in(MIRRORING).moveTo(STOPPING, null, NOW).moveTo(STOPPED, null, NOW);

        assertThatThrownBy(() -> TopicVerb.STOP.plan("m", Map.of(T0, stopped), List.of("t"), null, NOW))
                .isInstanceOfSatisfying(
                        MirrorException.class,
                        e -> assertThat(e.error()).isEqualTo(MirrorError.MIRROR_TOPIC_ALREADY_STOPPED));
        assertThat(TopicVerb.STOP.plan("m", Map.of(T0, stopped, T1, in(FAILED)), List.of("t"), "why", NOW))
                .containsOnlyKeys(T1)
                .allSatisfy((p, s) -> assertThat(s.error()).isEqualTo("why"));
    }
}
