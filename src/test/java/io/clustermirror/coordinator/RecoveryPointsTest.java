package io.clustermirror.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.fetch.DataPlane;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.RecoveryPoint;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RecoveryPointsTest {

    private static final MirrorPartition P0 = new MirrorPartition("t", 0);
    private static final MirrorPartition P1 = new MirrorPartition("t", 1);

    private final RecoveryPoints points = new RecoveryPoints();
    /** What the fake source was asked to read, request by request. */
    private final List<Map<MirrorPartition, Long>> reads = new ArrayList<>();

    private RecoveryPoints.TimestampReader source(Map<MirrorPartition, Long> timestamps) {
        return request -> {
            reads.add(Map.copyOf(request));
            return timestamps;
        };
    }

    private static RecoveryPoints.Ends ends(long source, long destination) {
        return new RecoveryPoints.Ends(source, destination, null);
    }

    @Test
    void aPartitionBehindOutsideTheDataPlaneShouldReadItsOldestRecordOnceWhileItsEndStays() {
        var first =
                points.evaluate("m", Map.of(P0, ends(120, 100), P1, ends(50, 50)), 10_000, source(Map.of(P0, 4_000L)));

        assertThat(first.get(P0).at(10_000)).isEqualTo(new RecoveryPoint(6_000, false));
        assertThat(first.get(P1).at(10_000)).isEqualTo(RecoveryPoint.ZERO);
        assertThat(reads).containsExactly(Map.of(P0, 100L)); // the caught-up partition is not read

        var later = points.evaluate("m", Map.of(P0, ends(130, 100)), 15_000, source(Map.of()));

        assertThat(reads).hasSize(1); // paused: the same destination end, the timestamp is kept
        assertThat(later.get(P0).at(15_000)).isEqualTo(new RecoveryPoint(11_000, false));
    }

    @Test
    void theDataPlanesOldestUnmirroredRecordShouldSpareTheRead() {
        DataPlane.Counts counts = new DataPlane.Counts(1, 120, 100, 0, 0, 9_000, new DataPlane.Unmirrored(100, 8_500));

        var inputs =
                points.evaluate("m", Map.of(P0, new RecoveryPoints.Ends(120, 100, counts)), 10_000, source(Map.of()));

        assertThat(reads).isEmpty();
        assertThat(inputs.get(P0).at(10_000)).isEqualTo(new RecoveryPoint(1_500, false));
    }

    @Test
    void aStaleOldestUnmirroredRecordOfTheDataPlaneShouldNotBeTaken() {
        // the data plane noted offset 90 before the destination reached 100
        DataPlane.Counts counts = new DataPlane.Counts(1, 120, 100, 0, 0, 9_000, new DataPlane.Unmirrored(90, 1_000));

        points.evaluate("m", Map.of(P0, new RecoveryPoints.Ends(120, 100, counts)), 10_000, source(Map.of(P0, 8_000L)));

        assertThat(reads).containsExactly(Map.of(P0, 100L));
    }

    @Test
    void anUnreachableSourceShouldGiveABoundFromTheLastSighting() {
        points.evaluate("m", Map.of(P0, ends(100, 100)), 10_000, source(Map.of()));

        var inputs = points.evaluate("m", Map.of(P0, ends(-1, 100)), 40_000, source(Map.of()));

        assertThat(inputs.get(P0).at(40_000)).isEqualTo(new RecoveryPoint(30_000, true));
        assertThat(points.lastSighting("m", P0)).isEqualTo(new RecoveryPoint.Sighting(100, 10_000));
        assertThat(reads).isEmpty();
    }

    @Test
    void aFetchAnswerSeenAfterTheLastReadShouldBeTheSighting() {
        points.evaluate("m", Map.of(P0, ends(100, 100)), 10_000, source(Map.of()));
        DataPlane.Counts counts = new DataPlane.Counts(1, 110, 105, 0, 0, 12_000, null);

        points.evaluate("m", Map.of(P0, new RecoveryPoints.Ends(-1, 105, counts)), 20_000, source(Map.of()));

        assertThat(points.lastSighting("m", P0)).isEqualTo(new RecoveryPoint.Sighting(110, 12_000));
    }

    @Test
    void aFailedReadShouldLeaveTheRpoUnknownAndBeTriedAgain() {
        RecoveryPoints.TimestampReader broken = request -> {
            reads.add(request);
            throw new IOException("leader gone");
        };

        var inputs = points.evaluate("m", Map.of(P0, ends(120, 100)), 10_000, broken);
        points.evaluate("m", Map.of(P0, ends(120, 100)), 15_000, broken);

        assertThat(inputs.get(P0).at(10_000)).isNull();
        assertThat(reads).hasSize(2);
    }

    @Test
    void thePublishedPointsShouldBeComputedWhenAskedAndForgetPartitionsThatStopped() {
        points.publish(
                "m",
                points.evaluate("m", Map.of(P0, ends(120, 100), P1, ends(50, 50)), 10_000, source(Map.of(P0, 4_000L))));

        assertThat(points.current("m", 12_000))
                .containsEntry(P0, new RecoveryPoint(8_000, false))
                .containsEntry(P1, RecoveryPoint.ZERO);

        points.publish("m", points.evaluate("m", Map.of(P1, ends(50, 50)), 13_000, source(Map.of())));

        assertThat(points.current("m", 14_000)).containsOnlyKeys(P1);
        assertThat(points.lastSighting("m", P0)).isNull();
    }
}
