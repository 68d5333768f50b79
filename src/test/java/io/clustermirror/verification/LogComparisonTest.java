package io.clustermirror.verification;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.batches.BatchContinuity;
import io.clustermirror.batches.BatchRestamp;
import io.clustermirror.batches.FillerBatches;
import io.clustermirror.batches.SourceBatch;
import io.clustermirror.kafka.ProducerIdentity;
import io.clustermirror.verification.LogComparison.Cleaning;
import io.clustermirror.verification.LogComparison.Step;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.LongStream;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.EndTransactionMarker;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

/** {@link LogComparison}: the two logs' answers judged offset by offset, cleaned sides and fillers allowed for. */
class LogComparisonTest {

    private static final Cleaning PLAIN = new Cleaning(false, false);
    private static final Cleaning COMPACTED = new Cleaning(true, true);

    /** A real lz4 batch holding a record (key k{offset}, value {prefix}{offset}, header h) at each of {@code offsets}. */
    private static SourceBatch batch(String valuePrefix, long base, long last, long... offsets) {
        MemoryRecordsBuilder builder = MemoryRecords.builder(
                ByteBuffer.allocate(4096),
                RecordBatch.CURRENT_MAGIC_VALUE,
                Compression.lz4().build(),
                TimestampType.CREATE_TIME,
                base);
        for (long offset : offsets) {
            builder.appendWithOffset(
                    offset,
                    1_000 + offset,
                    ("k" + offset).getBytes(StandardCharsets.UTF_8),
                    (valuePrefix + offset).getBytes(StandardCharsets.UTF_8),
                    new RecordHeader[] {new RecordHeader("h", new byte[] {1})});
        }
        if (last > offsets[offsets.length - 1]) {
            builder.overrideLastOffset(last); // as the cleaner does: the batch keeps its range
        }
        return SourceBatch.of(builder.build().batches().iterator().next());
    }

    private static SourceBatch range(long base, long last) {
        return batch("v", base, last, LongStream.rangeClosed(base, last).toArray());
    }

    private static SourceBatch marker(long offset, ControlRecordType type, long timestamp, int coordinatorEpoch) {
        return SourceBatch.of(MemoryRecords.withEndTransactionMarker(
                        offset, timestamp, 0, 7L, (short) 0, new EndTransactionMarker(type, coordinatorEpoch))
                .batches()
                .iterator()
                .next());
    }

    /** The batch as the mirror writes it: the destination's producer id, epoch and sequence (a new CRC). */
    private static SourceBatch restamped(SourceBatch batch) {
        ByteBuffer bytes = BatchRestamp.restamp(batch, new ProducerIdentity(4242L, (short) 3), 17);
        return SourceBatch.of(
                MemoryRecords.readableRecords(bytes).batches().iterator().next());
    }

    @Test
    void identicalLogsShouldBeJudgedToTheEndWithEveryBatchAndRecordCounted() {
        List<SourceBatch> log = List.of(range(0, 4), range(5, 9));

        Step step = LogComparison.compare(0, 10, log, log, PLAIN);

        assertThat(step.difference()).isNull();
        assertThat(step.next()).isEqualTo(10);
        assertThat(step.batches()).isEqualTo(2);
        assertThat(step.records()).isEqualTo(10);
        assertThat(step.bytes())
                .isEqualTo(2L * (log.get(0).sizeInBytes() + log.get(1).sizeInBytes()));
    }

    @Test
    void restampedProducerFieldsShouldNotBeADifferenceThoughTheCrcIs() {
        SourceBatch source = range(0, 4);
        SourceBatch destination = restamped(source);
        assertThat(destination.bytes().getInt(17)).isNotEqualTo(source.bytes().getInt(17)); // the CRC

        Step step = LogComparison.compare(0, 5, List.of(source), List.of(destination), PLAIN);

        assertThat(step.difference()).isNull();
        assertThat(step.next()).isEqualTo(5);
    }

    @Test
    void aDifferentValueShouldBeFoundAtItsOffset() {
        SourceBatch source = batch("v", 0, 4, 0, 1, 2, 3, 4);
        SourceBatch destination = batch("v", 0, 4, 0, 1, 2);
        SourceBatch other = batch("x", 0, 4, 0, 1, 2, 3, 4);

        Step step = LogComparison.compare(0, 5, List.of(range(0, 4)), List.of(other), PLAIN);

        assertThat(step.difference()).isEqualTo(new LogComparison.Difference(0, "value"));
        assertThat(LogComparison.compare(0, 5, List.of(source), List.of(destination), PLAIN)
                        .difference())
                .isEqualTo(new LogComparison.Difference(3, "missing on the destination"));
        assertThat(LogComparison.compare(0, 5, List.of(range(0, 4)), List.of(range(0, 2)), PLAIN)
                        .difference())
                .isEqualTo(new LogComparison.Difference(3, "batch bounds: source [0..4], destination [0..2]"));
    }

    @Test
    void theFirstDifferenceShouldBeReportedAfterTheIdenticalBatchesBeforeIt() {
        List<SourceBatch> source = List.of(range(0, 4), range(5, 9));
        List<SourceBatch> destination = List.of(range(0, 4), batch("v", 5, 9, 5, 6, 7, 8), range(9, 9));

        Step step = LogComparison.compare(0, 10, source, destination, PLAIN);

        assertThat(step.difference().offset()).isEqualTo(9);
        assertThat(step.next()).isEqualTo(5);
        assertThat(step.batches()).isEqualTo(1);
    }

    @Test
    void aRecordAStraightWriteAddedToTheDestinationShouldBeADifference() {
        List<SourceBatch> source = List.of(range(0, 4));
        List<SourceBatch> destination = List.of(range(0, 4), range(5, 5));

        Step first = LogComparison.compare(0, 6, source, destination, PLAIN);
        // the source answer ended at 4: offset 5 is judged by the next round, where the source answers nothing
        Step second = LogComparison.compare(first.next(), 6, List.of(), destination, PLAIN);

        assertThat(first.difference()).isNull();
        assertThat(first.next()).isEqualTo(5);
        assertThat(second.difference()).isEqualTo(new LogComparison.Difference(5, "a record the source does not hold"));
    }

    @Test
    void aRecordWrittenStraightIntoTheDestinationShouldBeFoundAtItsOffsetThoughTheBatchesDifferToo() {
        // the source took offsets 5..9 in one batch, the destination a record of its own at 5 and then the rest
        List<SourceBatch> source = List.of(range(0, 4), range(5, 9));
        List<SourceBatch> destination = List.of(range(0, 4), batch("x", 5, 5, 5), batch("v", 6, 9, 6, 7, 8, 9));

        Step step = LogComparison.compare(0, 10, source, destination, PLAIN);

        assertThat(step.difference()).isEqualTo(new LogComparison.Difference(5, "value"));
        assertThat(step.next()).isEqualTo(5);
    }

    @Test
    void aSideThatAnsweredLessShouldBeReadAgainFromWhereItEnded() {
        List<SourceBatch> source = List.of(range(0, 4), range(5, 9), range(10, 14));
        List<SourceBatch> destination = List.of(range(0, 4), range(5, 9));

        Step step = LogComparison.compare(0, 15, source, destination, PLAIN);

        assertThat(step.difference()).isNull();
        assertThat(step.next()).isEqualTo(10);
        assertThat(step.batches()).isEqualTo(2);
    }

    @Test
    void batchesBelowTheStartAndAtOrAboveTheEndShouldNotBeJudged() {
        List<SourceBatch> source = List.of(range(0, 4), range(5, 9), range(10, 14));
        List<SourceBatch> destination = List.of(batch("x", 0, 4, 0, 1, 2, 3, 4), range(5, 9), range(10, 12));

        Step step = LogComparison.compare(5, 10, source, destination, PLAIN);

        assertThat(step.difference()).isNull();
        assertThat(step.next()).isEqualTo(10);
        assertThat(step.batches()).isEqualTo(1);
    }

    @Test
    void aHoleTheSourceCleanerMadeShouldAgreeWithTheFillerTheMirrorWroteThere() {
        SourceBatch holey = batch("v", 10, 16, 10, 13, 16);
        SourceBatch filled = BatchContinuity.plan(holey, 10).batches().get(0);

        assertThat(LogComparison.compare(10, 17, List.of(holey), List.of(filled), COMPACTED)
                        .difference())
                .isNull();
        // a real record at a hole is a record the source does not hold, cleaned or not
        SourceBatch foreign = batch("v", 10, 16, 10, 11, 13, 16);
        assertThat(LogComparison.compare(10, 17, List.of(holey), List.of(foreign), new Cleaning(false, true))
                        .difference())
                .isEqualTo(new LogComparison.Difference(11, "a record the source does not hold"));
    }

    @Test
    void aFillerFacingARecordShouldBeADifference() {
        SourceBatch source = batch("v", 0, 0, 0);
        SourceBatch filler = FillerBatches.at(0, 1, 1_000, 0);
        // a batch with the filler's codec-independent content but a real record: compare by record
        Step step = LogComparison.compare(0, 1, List.of(source), List.of(filler), COMPACTED);

        assertThat(step.difference()).isEqualTo(new LogComparison.Difference(0, "a filler facing a record"));
    }

    @Test
    void recordsEitherCleanerRemovedShouldNotBeADifferenceOnCompactedTopicsOnly() {
        List<SourceBatch> source = List.of(range(0, 4), batch("v", 5, 9, 9), range(10, 10));
        List<SourceBatch> destination = List.of(batch("v", 0, 4, 4), range(5, 9), range(10, 10));

        assertThat(LogComparison.compare(0, 11, source, destination, COMPACTED).difference())
                .isNull();
        assertThat(LogComparison.compare(0, 11, source, destination, PLAIN).difference())
                .isEqualTo(new LogComparison.Difference(0, "missing on the destination"));
        // whole batches gone on one side
        assertThat(LogComparison.compare(0, 11, List.of(range(10, 10)), destination, new Cleaning(true, false))
                        .difference())
                .isNull();
        assertThat(LogComparison.compare(0, 11, destination, List.of(range(10, 10)), new Cleaning(true, false))
                        .difference())
                .isEqualTo(new LogComparison.Difference(0, "missing on the destination"));
    }

    @Test
    void fillerBatchesWhereTheSourceHasNoBatchShouldNotBeADifference() {
        List<SourceBatch> source = List.of(range(0, 1), range(5, 6));
        List<SourceBatch> destination = List.of(range(0, 1), FillerBatches.at(2, 3, 1_000, 0), range(5, 6));

        Step step = LogComparison.compare(0, 7, source, destination, PLAIN);

        assertThat(step.difference()).isNull();
        assertThat(step.next()).isEqualTo(7);
        assertThat(step.batches()).isEqualTo(3);
    }

    @Test
    void markersShouldBeComparedByTheirTypeNotByTheCoordinatorsEpochOrTime() {
        SourceBatch commit = marker(5, ControlRecordType.COMMIT, 1_000, 1);
        SourceBatch destinationCommit = marker(5, ControlRecordType.COMMIT, 9_999, 4);
        SourceBatch abort = marker(5, ControlRecordType.ABORT, 1_000, 1);

        assertThat(LogComparison.compare(5, 6, List.of(commit), List.of(destinationCommit), PLAIN)
                        .difference())
                .isNull();
        assertThat(LogComparison.compare(5, 6, List.of(commit), List.of(abort), PLAIN)
                        .difference())
                .isEqualTo(new LogComparison.Difference(5, "control record type"));
        assertThat(LogComparison.compare(5, 6, List.of(commit), List.of(range(5, 5)), PLAIN)
                        .difference())
                .isEqualTo(new LogComparison.Difference(5, "a control batch facing a data batch"));
    }

    @Test
    void aDifferentTimestampOrHeaderShouldBeNamed() {
        MemoryRecordsBuilder builder = MemoryRecords.builder(
                ByteBuffer.allocate(4096),
                RecordBatch.CURRENT_MAGIC_VALUE,
                Compression.lz4().build(),
                TimestampType.CREATE_TIME,
                0);
        builder.appendWithOffset(
                0,
                1_001,
                "k0".getBytes(StandardCharsets.UTF_8),
                "v0".getBytes(StandardCharsets.UTF_8),
                new RecordHeader[] {new RecordHeader("h", new byte[] {1})});
        SourceBatch later = SourceBatch.of(builder.build().batches().iterator().next());

        assertThat(LogComparison.compare(0, 1, List.of(range(0, 0)), List.of(later), PLAIN)
                        .difference())
                .isEqualTo(new LogComparison.Difference(0, "timestamp"));
    }
}
