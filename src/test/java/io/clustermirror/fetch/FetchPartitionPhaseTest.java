package io.clustermirror.fetch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.clustermirror.batches.SourceBatch;
import io.clustermirror.mirror.MirrorPartition;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A partition's phase in the data plane ({@link FetchPartition.Phase}): every transition from every phase, legal,
 * ignored or illegal, against a table written out here independently of the production code; what each phase lets
 * the loops do; and the moves that meet each other (a removal during a reset, a failure during a removal, a reset
 * during a block, the data plane's death). Pure: no network, no thread.
 */
class FetchPartitionPhaseTest {

    private static final MirrorPartition PARTITION = new MirrorPartition("orders", 0);
    private static final long MAX_QUEUED = FetchLoop.MAX_QUEUED_BYTES_PER_PARTITION;
    private static final long MIN_FREE = FetchLoop.MIN_FREE_QUEUE_BYTES;

    /** The phases a partition can be in, by name, each reached from Entering by the moves the data plane makes. */
    private static final Map<String, Consumer<FetchPartition>> REACHED = new LinkedHashMap<>();

    static {
        REACHED.put("Entering", state -> {});
        REACHED.put("Fetching", FetchPartition::enter);
        REACHED.put("Blocked", state -> {
            state.enter();
            state.block("format v1");
        });
        REACHED.put("Resetting", state -> {
            state.enter();
            state.reset(1, new PipelineReset.ReadBack(1), 7);
        });
        REACHED.put("Removing", state -> {
            state.enter();
            state.remove(false);
        });
        REACHED.put("Failed", state -> {
            state.enter();
            state.fail("boom", 7);
        });
    }

    /** The transitions, by name, with the phase each names as its target. */
    private static final Map<String, Consumer<FetchPartition>> TRANSITIONS = new LinkedHashMap<>();

    private static final Map<String, String> TARGET = new LinkedHashMap<>();

    static {
        transition("enter", "Fetching", FetchPartition::enter);
        transition("enterToAbortLeftOpen", "Removing", state -> state.enterToAbortLeftOpen(5));
        transition("block", "Blocked", state -> state.block("format v1"));
        transition("reset", "Resetting", state -> state.reset(2, new PipelineReset.ReadBack(2), 8));
        transition("resume", "Fetching", state -> state.resume(3, 8));
        transition("remove", "Removing", state -> state.remove(false));
        transition("fail", "Failed", state -> state.fail("other", 8));
    }

    private static void transition(String name, String target, Consumer<FetchPartition> move) {
        TRANSITIONS.put(name, move);
        TARGET.put(name, target);
    }

    /** Not moved (the caller cannot know: a reset under way, or leaving); or a bug, thrown. */
    private static final String SAME = "same";

    private static final String ILLEGAL = "illegal";

    /** Where each transition takes each phase: the diagram of FetchPartition, written out. */
    private static final Map<String, Map<String, String>> EXPECTED = Map.of(
            "enter", row("Fetching", ILLEGAL, ILLEGAL, ILLEGAL, ILLEGAL, ILLEGAL),
            "enterToAbortLeftOpen", row("Removing", ILLEGAL, ILLEGAL, ILLEGAL, ILLEGAL, ILLEGAL),
            "block", row(ILLEGAL, "Blocked", ILLEGAL, ILLEGAL, ILLEGAL, ILLEGAL),
            "reset", row(ILLEGAL, "Resetting", "Resetting", SAME, SAME, SAME),
            "resume", row(ILLEGAL, ILLEGAL, ILLEGAL, "Fetching", ILLEGAL, ILLEGAL),
            "remove", row(ILLEGAL, "Removing", "Removing", "Removing", "Removing", "Failed"),
            "fail", row(ILLEGAL, "Failed", "Failed", "Failed", "Failed", SAME));

    /** Outcomes from Entering, Fetching, Blocked, Resetting, Removing, Failed. */
    private static Map<String, String> row(String... outcomes) {
        Map<String, String> row = new LinkedHashMap<>();
        List<String> phases = List.copyOf(REACHED.keySet());
        for (int i = 0; i < outcomes.length; i++) {
            row.put(phases.get(i), outcomes[i]);
        }
        return row;
    }

    static Stream<Arguments> everyTransitionFromEveryPhase() {
        List<Arguments> cases = new ArrayList<>();
        for (String transition : TRANSITIONS.keySet()) {
            for (String from : REACHED.keySet()) {
                cases.add(
                        Arguments.of(transition, from, EXPECTED.get(transition).get(from)));
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} from {1}: {2}")
    @MethodSource("everyTransitionFromEveryPhase")
    void everyTransitionShouldGoWhereTheDiagramSays(String transition, String from, String expected) {
        // Given a partition in the phase
        FetchPartition state = partition();
        REACHED.get(from).accept(state);
        FetchPartition.Phase before = state.phase();
        assertThat(name(before)).isEqualTo(from);

        if (expected.equals(ILLEGAL)) {
            // When the transition is tried, Then it is refused naming both phases, and nothing changed
            assertThatThrownBy(() -> TRANSITIONS.get(transition).accept(state))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("from " + from + "[")
                    .hasMessageContaining("to " + TARGET.get(transition) + "[");
            assertThat(state.phase()).isEqualTo(before);
        } else {
            // When it is made, Then the partition is where the diagram says (or where it was)
            TRANSITIONS.get(transition).accept(state);
            assertThat(name(state.phase())).isEqualTo(expected.equals(SAME) ? from : expected);
            if (expected.equals(SAME)) {
                assertThat(state.phase()).isEqualTo(before);
            }
        }
    }

    static Stream<Arguments> whatEachPhaseAllows() {
        // phase, fetched, sent, lost answers re-sent
        return Stream.of(
                Arguments.of("Entering", false, false, false),
                Arguments.of("Fetching", true, true, true),
                Arguments.of("Blocked", false, true, true),
                Arguments.of("Resetting", false, false, false),
                Arguments.of("Removing", false, false, true),
                Arguments.of("Failed", false, false, false));
    }

    @ParameterizedTest(name = "{0}: fetched={1}, sent={2}, lost answers re-sent={3}")
    @MethodSource("whatEachPhaseAllows")
    void eachPhaseShouldLetTheLoopsDoOnlyWhatItAllows(String phase, boolean fetched, boolean sent, boolean resent) {
        // Given a partition in the phase, with a batch queued where the phase keeps one
        FetchPartition state = partition();
        REACHED.get(phase).accept(state);
        state.enqueue(batch(0));

        assertThat(state.ticket(MAX_QUEUED, MIN_FREE) != null).as("fetched").isEqualTo(fetched);
        assertThat(state.sendable()).as("sent").isEqualTo(sent);
        assertThat(state.resendsLost()).as("lost answers re-sent").isEqualTo(resent);
    }

    @Test
    void aPartitionsFirstFetchShouldAskForOneMebibyteAndTheNextForItsFreeRoom() {
        FetchPartition state = partition();
        state.enter();

        FetchPartition.FetchTicket first = state.ticket(MAX_QUEUED, MIN_FREE);
        state.fetchDone();
        FetchPartition.FetchTicket second = state.ticket(MAX_QUEUED, MIN_FREE);

        assertThat(first.maxBytes()).isEqualTo(FetchPartition.FIRST_FETCH_BYTES);
        assertThat(second.maxBytes()).isEqualTo(MAX_QUEUED);
    }

    @Test
    void aFetchingPartitionShouldHaveOneFetchInFlightAtATime() {
        FetchPartition state = partition();
        state.enter();

        FetchPartition.FetchTicket ticket = state.ticket(MAX_QUEUED, MIN_FREE);

        assertThat(ticket).isNotNull();
        assertThat(ticket.fetchOffset()).isEqualTo(10);
        assertThat(state.ticket(MAX_QUEUED, MIN_FREE)).isNull();
        state.fetchDone();
        assertThat(state.ticket(MAX_QUEUED, MIN_FREE)).isNotNull();
    }

    @Test
    void aBlockedPartitionShouldSendWhatIsQueuedAndOnlyThenGiveItsReason() {
        // Given a partition blocked behind a batch already queued
        FetchPartition state = partition();
        state.enter();
        state.enqueue(batch(10));
        state.block("the destination ends inside a source batch");

        // Then the reason waits until the batch is sent and answered
        assertThat(state.blockedAndDrained()).isNull();
        FetchPartition.Sent sent = new FetchPartition.Sent(state.pollQueue(), state.generation, null);
        state.inFlight.add(sent);
        assertThat(state.blockedAndDrained()).isNull();
        state.inFlight.remove(sent);
        state.unconfirmed.put(10L, sent); // its answer was lost: re-sent first
        assertThat(state.blockedAndDrained()).isNull();
        state.unconfirmed.clear();
        assertThat(state.blockedAndDrained()).isEqualTo("the destination ends inside a source batch");
    }

    @Test
    void aResetDuringABlockShouldDropTheBlockAndTheQueueAndResumeFromTheDestinationsEnd() {
        // Given a blocked partition with a batch queued, its last mirrored epoch 4
        FetchBudget budget = new FetchBudget(8L << 20);
        FetchPartition state = partition(budget);
        state.enter();
        state.enqueue(batch(10));
        state.block("format v1");
        state.lastEpoch = 4;

        // When a lost answer resets it
        PipelineReset.ReadBack readBack = new PipelineReset.ReadBack(42);
        assertThat(state.reset(42, readBack, 7)).isTrue();

        // Then the block is gone with the queue, and nothing is fetched or sent under the new generation yet
        assertThat(state.phase()).isEqualTo(new FetchPartition.Resetting(42, readBack));
        assertThat(state.queue).isEmpty();
        assertThat(budget.queued()).isZero();
        assertThat(state.generation).isEqualTo(7);
        assertThat(state.blockedAndDrained()).isNull();
        assertThat(state.ticket(MAX_QUEUED, MIN_FREE)).isNull();

        // and once read back, it is fetched again from the destination's end, with the epoch mirrored last
        state.resume(15, 8);
        assertThat(state.phase()).isInstanceOf(FetchPartition.Fetching.class);
        assertThat(state.generation).isEqualTo(8);
        FetchPartition.FetchTicket ticket = state.ticket(MAX_QUEUED, MIN_FREE);
        assertThat(ticket.fetchOffset()).isEqualTo(15);
        assertThat(ticket.lastFetchedEpoch()).isEqualTo(4);
        assertThat(ticket.generation()).isEqualTo(8);
    }

    @Test
    void aRemovalDuringAResetShouldLeaveWithoutResendingWhatTheResetGaveUpOn() {
        // Given a partition resetting after lost answers
        FetchPartition state = partition();
        state.enter();
        state.reset(1, new PipelineReset.ReadBack(1), 7);

        // When the coordinator stops it
        state.remove(true);

        // Then it leaves with its transactions aborted, re-sending nothing (the read-back is dropped with the reset)
        assertThat(state.phase()).isEqualTo(new FetchPartition.Removing(true, false, 0));
        assertThat(state.resendsLost()).isFalse();
        // and a read-back answer that comes late cannot resume it
        assertThatThrownBy(() -> state.resume(20, 9))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Removing[")
                .hasMessageContaining("Fetching[");
    }

    @Test
    void aRemovalShouldDropTheQueueAndWaitForTheLostAnswers() {
        FetchBudget budget = new FetchBudget(8L << 20);
        FetchPartition state = partition(budget);
        state.enter();
        state.enqueue(batch(10));

        state.remove(false);

        assertThat(state.phase()).isEqualTo(new FetchPartition.Removing(false, true, 0));
        assertThat(state.queue).isEmpty();
        assertThat(budget.queued()).isZero();
        assertThat(state.resendsLost()).isTrue();
    }

    @Test
    void aFailureDuringARemovalShouldKeepTheAbortTheRemovalAskedFor() {
        // Given a partition being stopped (its transactions to be aborted)
        FetchPartition state = partition();
        state.enter();
        state.remove(true);

        // When it fails meanwhile
        boolean failed = state.fail("destination refused the batch", 8);

        // Then it fails (its owner to be told), leaves without waiting for retries, and still aborts
        assertThat(failed).isTrue();
        assertThat(state.phase()).isEqualTo(new FetchPartition.Failed("destination refused the batch", true));
        assertThat(state.resendsLost()).isFalse();
        assertThat(state.generation).isEqualTo(8);
        // and a second failure changes nothing: the first reason is the one told
        assertThat(state.fail("later", 9)).isFalse();
        assertThat(state.phase()).isEqualTo(new FetchPartition.Failed("destination refused the batch", true));
        assertThat(state.generation).isEqualTo(8);
    }

    @Test
    void aFurtherRemovalShouldAddTheAbortButNeverTakeItBack() {
        FetchPartition paused = partition();
        paused.enter();
        paused.remove(false);
        paused.remove(true); // a stop after a pause
        assertThat(paused.phase()).isEqualTo(new FetchPartition.Removing(true, true, 0));
        paused.remove(false);
        assertThat(paused.phase()).isEqualTo(new FetchPartition.Removing(true, true, 0));

        FetchPartition failed = partition();
        failed.enter();
        failed.fail("boom", 7);
        failed.remove(true); // a stop of a partition that failed before it could leave
        assertThat(failed.phase()).isEqualTo(new FetchPartition.Failed("boom", true));
    }

    @Test
    void aResetOfALeavingPartitionShouldChangeNothing() {
        FetchPartition state = partition();
        state.enter();
        state.enqueue(batch(10));
        state.remove(false);
        int generation = state.generation;

        assertThat(state.reset(5, new PipelineReset.ReadBack(5), 99)).isFalse();

        assertThat(state.phase()).isEqualTo(new FetchPartition.Removing(false, true, 0));
        assertThat(state.generation).isEqualTo(generation);
    }

    @Test
    void aStopOutsideTheDataPlaneShouldOnlyPassThroughToAbort() {
        FetchPartition state = partition();

        state.enterToAbortLeftOpen(123);

        assertThat(state.phase()).isEqualTo(new FetchPartition.Removing(true, false, 123));
        assertThat(state.ticket(MAX_QUEUED, MIN_FREE)).isNull();
    }

    @Test
    void aPartitionOfADeadDataPlaneShouldReadAsFailedAndTakeNoTransition() {
        // Given a partition being fetched, with a batch queued
        AtomicReference<String> death = new AtomicReference<>();
        FetchPartition state = new FetchPartition(PARTITION, 10, 3, 1, FetchBudget.UNLIMITED, death::get);
        state.enter();
        state.enqueue(batch(10));

        // When its data plane dies (another thread may say so while the fetcher's is stuck)
        death.set("the data plane's fetcher thread is stuck");

        // Then it reads as Failed with that reason: nothing of it is fetched, sent or re-sent
        assertThat(state.phase())
                .isEqualTo(new FetchPartition.Failed("the data plane's fetcher thread is stuck", false));
        assertThat(state.ticket(MAX_QUEUED, MIN_FREE)).isNull();
        assertThat(state.sendable()).isFalse();
        assertThat(state.resendsLost()).isFalse();
        // and whatever a stuck round still does to it changes nothing and throws nothing
        assertThat(state.fail("later", 9)).isFalse();
        assertThat(state.reset(5, new PipelineReset.ReadBack(5), 9)).isFalse();
        state.enter();
        state.block("format v1");
        state.resume(20, 9);
        state.remove(true);
        assertThat(state.phase())
                .isEqualTo(new FetchPartition.Failed("the data plane's fetcher thread is stuck", false));
        assertThat(state.generation).isEqualTo(1);
        assertThat(state.queue).hasSize(1); // back to the budget when the fetcher lets the data plane go
    }

    @Test
    void theOwnerShouldBeToldOnceThatThePartitionEnded() {
        FetchPartition state = partition();

        assertThat(state.tellOwnerOnce()).isTrue();
        assertThat(state.tellOwnerOnce()).isFalse();
    }

    // ---------------------------------------------------------------- helpers

    private static FetchPartition partition() {
        return partition(FetchBudget.UNLIMITED);
    }

    /** A partition entering at offset 10, the batch before it of source epoch 3, in generation 1. */
    private static FetchPartition partition(FetchBudget budget) {
        return new FetchPartition(PARTITION, 10, 3, 1, budget);
    }

    private static String name(FetchPartition.Phase phase) {
        return phase.getClass().getSimpleName();
    }

    private static SourceBatch batch(long offset) {
        return SourceBatch.slices(MemoryRecords.withRecords(
                        offset, Compression.NONE, new SimpleRecord("a".getBytes()), new SimpleRecord("b".getBytes())))
                .get(0);
    }
}
