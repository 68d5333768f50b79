package io.clustermirror.mirror;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.re2j.Pattern;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class StartPlanTest {

    private static final Instant NOW = Instant.parse("2026-12-01T00:00:00Z");
    private static final List<Pattern> DEFAULT_EXCLUDE = List.of(Pattern.compile("__.*"));
    private static final Set<String> SOURCE =
            Set.of("orders", "payments", "__app", "__mirror_state", "__consumer_offsets", "cm-state");

    private static PartitionStatus in(MirrorPartitionState state) {
        PartitionStatus status = PartitionStatus.initial(NOW).moveTo(MirrorPartitionState.LOG_TRUNCATION, null, NOW);
        return state == MirrorPartitionState.LOG_TRUNCATION
                ? status
                : status.moveTo(MirrorPartitionState.MIRRORING, null, NOW)
                        .moveTo(
                                state == MirrorPartitionState.STOPPED ? MirrorPartitionState.STOPPING : state,
                                null,
                                NOW)
                        .moveTo(state, null, NOW);
    }

    private static TopicSelection named(String... topics) {
        return new TopicSelection(List.of(topics), List.of(), List.of(), false, false);
    }

    @Test
    void stateTopicsAndInternalTopicsShouldBeRefusedNamedOrMatched() {
        StartPlan plan = StartPlan.plan(
                "m",
                new TopicSelection(List.of("__mirror_state", "cm-state"), List.of(".*"), List.of(), true, true),
                List.of(Pattern.compile(".*")),
                List.of(),
                SOURCE,
                "cm-state",
                Map.of());

        assertThat(plan.refusals())
                .extracting(StartPlan.Refusal::topic)
                .containsExactly("__consumer_offsets", "__mirror_state", "cm-state");
        assertThat(plan.refusals())
                .extracting(StartPlan.Refusal::error)
                .containsOnly(MirrorError.INVALID_TOPIC_EXCEPTION);
        assertThat(plan.candidates())
                .extracting(StartPlan.Candidate::topic)
                .containsExactly("__app", "orders", "payments");
    }

    @Test
    void aNamedTopicTheExcludesMatchShouldNeedTheOverride() {
        StartPlan refused =
                StartPlan.plan("m", named("__app"), List.of(), DEFAULT_EXCLUDE, SOURCE, "__mirror_state", Map.of());
        StartPlan overridden = StartPlan.plan(
                "m",
                new TopicSelection(List.of("__app"), List.of(), List.of(), false, true),
                List.of(),
                DEFAULT_EXCLUDE,
                SOURCE,
                "__mirror_state",
                Map.of());

        assertThat(refused.refusals())
                .singleElement()
                .satisfies(r -> assertThat(r.error()).isEqualTo(MirrorError.INVALID_REQUEST));
        assertThat(overridden.candidates())
                .extracting(StartPlan.Candidate::topic)
                .containsExactly("__app");
    }

    @Test
    void aTopicMirroredByAnyMirrorShouldBeRefusedAndAStoppedOneOfThisMirrorAdoptedWithoutTheFlag() {
        Map<String, Map<MirrorPartition, PartitionStatus>> partitions = Map.of(
                "m", Map.of(new MirrorPartition("orders", 0), in(MirrorPartitionState.STOPPED)),
                "other", Map.of(new MirrorPartition("payments", 0), in(MirrorPartitionState.LOG_TRUNCATION)));

        StartPlan plan = StartPlan.plan(
                "m",
                named("orders", "payments", "missing", "a b"),
                List.of(),
                DEFAULT_EXCLUDE,
                SOURCE,
                "__mirror_state",
                partitions);

        assertThat(plan.candidates()).containsExactly(new StartPlan.Candidate("orders", true));
        assertThat(plan.refusals())
                .extracting(StartPlan.Refusal::topic, StartPlan.Refusal::error)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("a b", MirrorError.INVALID_TOPIC_EXCEPTION),
                        org.assertj.core.groups.Tuple.tuple("missing", MirrorError.UNKNOWN_TOPIC_OR_PARTITION),
                        org.assertj.core.groups.Tuple.tuple("payments", MirrorError.TOPIC_ALREADY_IN_CLUSTER_MIRROR));
        assertThat(plan.refusals().get(2).reason()).contains("mirror 'other'");
    }

    @Test
    void anUntrackedTopicShouldBeAdoptableOnlyWithTheFlag() {
        assertThat(StartPlan.plan("m", named("orders"), List.of(), List.of(), SOURCE, "s", Map.of())
                        .candidates())
                .containsExactly(new StartPlan.Candidate("orders", false));
        assertThat(StartPlan.plan(
                                "m",
                                new TopicSelection(List.of("orders"), List.of(), List.of(), true, false),
                                List.of(),
                                List.of(),
                                SOURCE,
                                "s",
                                Map.of())
                        .candidates())
                .containsExactly(new StartPlan.Candidate("orders", true));
    }
}
