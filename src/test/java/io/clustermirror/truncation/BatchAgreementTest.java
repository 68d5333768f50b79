package io.clustermirror.truncation;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.batches.BatchContinuity;
import io.clustermirror.batches.ControlMarker;
import io.clustermirror.batches.SourceBatch;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.EndTransactionMarker;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

/**
 * {@link BatchAgreement}: a destination batch against the source's at the same offsets, either log possibly cleaned
 * since the mirror wrote it (split from BatchContinuityTest when the batches and LOG_TRUNCATION got rooms of their own).
 */
class BatchAgreementTest {

    /** A real lz4 batch holding a record (key k{offset}, value v{offset}, header h) at each of {@code offsets}. */
    private static SourceBatch compacted(long base, long last, long... offsets) {
        return batch("v", base, last, offsets);
    }

    /** Like {@link #compacted}, the values {@code valuePrefix + offset}. */
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

    @Test
    void gapFillersShouldAgreeWithTheSourceBatchAfterTheGap() {
        SourceBatch next = compacted(250_020, 250_021, 250_020, 250_021);

        BatchContinuity.Plan plan = BatchContinuity.plan(next, 10);

        assertThat(BatchAgreement.agrees(plan.batches().get(2), next)).isTrue();
        assertThat(BatchAgreement.agrees(plan.batches().get(3), next)).isTrue();
    }

    @Test
    void aRewrittenBatchShouldBeRecognisedAsTheSourceBatchAndAForeignOneShouldNot() {
        SourceBatch holey = compacted(10, 16, 10, 13, 16);
        SourceBatch filled = BatchContinuity.plan(holey, 10).batches().get(0);
        SourceBatch other = compacted(10, 16, 10, 12, 16);

        assertThat(BatchAgreement.agrees(filled, holey)).isTrue();
        assertThat(BatchAgreement.agrees(
                        BatchContinuity.plan(other, 10).batches().get(0), holey))
                .isFalse();
    }

    private static SourceBatch marker(
            long offset, long producerId, ControlRecordType type, int coordinatorEpoch, long timestamp) {
        return SourceBatch.of(MemoryRecords.withEndTransactionMarker(
                        offset, timestamp, 0, producerId, (short) 0, new EndTransactionMarker(type, coordinatorEpoch))
                .batches()
                .iterator()
                .next());
    }

    @Test
    void aDestinationMarkerShouldMatchTheSourceMarkerByPlaceAndKindOnly() {
        SourceBatch source = marker(42, 7, ControlRecordType.COMMIT, 3, 1_000);
        // written by the destination's coordinator: its own producer id, coordinator epoch and time
        SourceBatch destination = marker(42, 99, ControlRecordType.COMMIT, 0, 5_000);

        assertThat(ControlMarker.isCommit(source)).contains(true);
        assertThat(BatchAgreement.agrees(destination, source)).isTrue();
        assertThat(BatchAgreement.agrees(marker(42, 99, ControlRecordType.ABORT, 0, 5_000), source))
                .as("abort for a commit")
                .isFalse();
        assertThat(BatchAgreement.agrees(marker(43, 99, ControlRecordType.COMMIT, 0, 5_000), source))
                .as("elsewhere")
                .isFalse();
        assertThat(BatchAgreement.agrees(compacted(42, 42, 42), source))
                .as("data where the source has a marker")
                .isFalse();
    }

    @Test
    void eitherLogCleanedSinceTheMirrorWroteItShouldStillAgree() {
        SourceBatch original = compacted(10, 16, 10, 11, 12, 13, 14, 15, 16);
        SourceBatch cleaned = compacted(10, 16, 10, 13, 16);
        SourceBatch filled = BatchContinuity.plan(cleaned, 10).batches().get(0);

        assertThat(BatchAgreement.agrees(original, cleaned))
                .as("the source's cleaner ran after the batch was mirrored")
                .isTrue();
        assertThat(BatchAgreement.agrees(cleaned, original))
                .as("the destination's cleaner ran")
                .isTrue();
        assertThat(BatchAgreement.agrees(cleaned, filled))
                .as("failback: the old primary's cleaned batch against the fillers its mirror wrote")
                .isTrue();
        assertThat(BatchAgreement.agrees(compacted(10, 16, 13), filled))
                .as("fillers and records removed by either cleaner")
                .isTrue();
        assertThat(BatchAgreement.agrees(filled, compacted(10, 16, 16))).isTrue();
        assertThat(BatchAgreement.agrees(original, compacted(20, 21, 20, 21)))
                .as("every source record at these offsets cleaned away, the batch too")
                .isTrue();
    }

    @Test
    void differentRecordsAtTheSameOffsetsShouldDisagreeCleanedOrNot() {
        SourceBatch ours = compacted(10, 16, 10, 11, 12, 13, 14, 15, 16);

        assertThat(BatchAgreement.agrees(ours, batch("w", 10, 16, 10, 11, 12, 13, 14, 15, 16)))
                .isFalse();
        assertThat(BatchAgreement.agrees(batch("w", 10, 16, 13), ours))
                .as("the one record left differs")
                .isFalse();
        assertThat(BatchAgreement.agrees(compacted(10, 14, 10, 11, 12, 13, 14), ours))
                .as("other batch bounds")
                .isFalse();
        assertThat(BatchAgreement.agrees(compacted(12, 16, 12, 13, 14, 15, 16), ours))
                .as("a batch starting inside ours")
                .isFalse();
        assertThat(BatchAgreement.agrees(ours, compacted(14, 20, 14, 20)))
                .as("the source's next batch overlaps ours")
                .isFalse();
    }
}
