package io.clustermirror.batches;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

class BatchContinuityTest {

    private static final ByteBuffer HEADER = ByteBuffer.allocate(61);

    private static SourceBatch header(
            long base, long last, int count, boolean transactional, boolean control, byte magic) {
        return new SourceBatch(base, last, count, 0, transactional, control, magic, HEADER.duplicate());
    }

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

    private static List<Record> records(SourceBatch batch) {
        List<Record> records = new ArrayList<>();
        MemoryRecords.readableRecords(batch.bytes().duplicate()).records().forEach(records::add);
        return records;
    }

    private static String text(ByteBuffer buffer) {
        return buffer == null
                ? null
                : StandardCharsets.UTF_8.decode(buffer.duplicate()).toString();
    }

    @Test
    void contiguousBatchShouldBeAppendedAsItIs() {
        SourceBatch batch = header(10, 14, 5, false, false, (byte) 2);
        BatchContinuity.Plan plan = BatchContinuity.plan(batch, 10);
        assertThat(plan.isBlocked()).isFalse();
        assertThat(plan.batches()).containsExactly(batch);
        assertThat(plan.nextOffset()).isEqualTo(15);
    }

    @Test
    void transactionalBatchesAndMarkersShouldBePlannedAsTheyAreForTheTransactionReplay() {
        SourceBatch data = header(10, 14, 5, true, false, (byte) 2);
        SourceBatch marker = header(15, 15, 1, true, true, (byte) 2);
        assertThat(BatchContinuity.plan(data, 10).batches()).containsExactly(data);
        assertThat(BatchContinuity.plan(marker, 15).batches()).containsExactly(marker);
    }

    @Test
    void destinationEndingInsideABatchShouldBeNamed() {
        assertThat(BatchContinuity.plan(header(5, 14, 10, false, false, (byte) 2), 10)
                        .blocked())
                .contains("inside source batch [5..14]");
    }

    @Test
    void oldMessageFormatsShouldBeRefused() {
        assertThat(BatchContinuity.plan(header(10, 10, 1, false, false, (byte) 1), 10)
                        .blocked())
                .contains("format v1");
    }

    @Test
    void holesInsideABatchShouldBeFilledWithFillersAtTheirOffsets() {
        SourceBatch holey = compacted(10, 16, 10, 13, 16);

        BatchContinuity.Plan plan = BatchContinuity.plan(holey, 10);

        assertThat(plan.batches()).hasSize(1);
        SourceBatch filled = plan.batches().get(0);
        assertThat(filled.hasHoles()).isFalse();
        assertThat(filled.baseOffset()).isEqualTo(10);
        assertThat(filled.lastOffset()).isEqualTo(16);
        assertThat(filled.bytes().getShort(SourceBatch.ATTRIBUTES_OFFSET) & 0x7)
                .as("codec kept")
                .isEqualTo(3);
        List<Record> records = records(filled);
        assertThat(records).extracting(Record::offset).containsExactly(10L, 11L, 12L, 13L, 14L, 15L, 16L);
        for (Record record : records) {
            boolean survivor = record.offset() % 3 == 1;
            if (survivor) {
                assertThat(text(record.key())).isEqualTo("k" + record.offset());
                assertThat(text(record.value())).isEqualTo("v" + record.offset());
                assertThat(record.timestamp()).isEqualTo(1_000 + record.offset());
                assertThat(record.headers()).extracting(h -> h.key()).containsExactly("h");
            } else {
                assertThat(record.headers()).extracting(h -> h.key()).containsExactly(FillerBatches.HEADER);
                assertThat(text(record.key())).isEqualTo(new String(FillerBatches.KEY, StandardCharsets.UTF_8));
                assertThat(record.value()).as("tombstone").isNull();
            }
        }
    }

    @Test
    void gapFillersShouldCarryTheSourceEpochOfTheBatchAfterTheGap() {
        // the epoch of the last offset mirrored is what the next fetch sends: a filler's must be its source neighbour's
        SourceBatch plain = compacted(40, 41, 40, 41);
        MutableRecordBatch stamped = MemoryRecords.readableRecords(plain.bytes().duplicate())
                .batches()
                .iterator()
                .next();
        stamped.setPartitionLeaderEpoch(7);

        BatchContinuity.Plan plan = BatchContinuity.plan(SourceBatch.of(stamped), 10);

        assertThat(plan.batches()).extracting(SourceBatch::baseOffset).containsExactly(10L, 40L);
        assertThat(plan.batches()).extracting(SourceBatch::partitionLeaderEpoch).containsExactly(7, 7);
    }

    @Test
    void gapBeforeABatchShouldBeFilledAndTheSameGapShouldAlwaysGiveTheSameBatches() {
        SourceBatch next = compacted(250_020, 250_021, 250_020, 250_021);

        BatchContinuity.Plan plan = BatchContinuity.plan(next, 10);

        assertThat(plan.batches())
                .extracting(SourceBatch::baseOffset)
                .containsExactly(10L, 100_010L, 200_010L, 250_020L);
        assertThat(plan.batches())
                .extracting(SourceBatch::lastOffset)
                .containsExactly(100_009L, 200_009L, 250_019L, 250_021L);
        assertThat(plan.batches().get(3)).isSameAs(next);
        assertThat(plan.nextOffset()).isEqualTo(250_022);
        SourceBatch again = BatchContinuity.plan(next, 200_010).batches().get(0);
        assertThat(RawFetch.sameContent(plan.batches().get(2), again))
                .as("deterministic, so a restart can check it")
                .isTrue();
    }
}
