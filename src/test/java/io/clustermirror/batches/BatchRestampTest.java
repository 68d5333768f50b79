package io.clustermirror.batches;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.kafka.ProducerIdentity;
import java.nio.ByteBuffer;
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
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;

class BatchRestampTest {

    private static SourceBatch sourceBatch(Compression compression, long baseOffset, int count) {
        MemoryRecordsBuilder builder = MemoryRecords.builder(
                ByteBuffer.allocate(4096),
                RecordBatch.CURRENT_MAGIC_VALUE,
                compression,
                TimestampType.CREATE_TIME,
                baseOffset,
                1_000L,
                77L,
                (short) 3,
                40,
                false,
                12);
        for (int i = 0; i < count; i++) {
            builder.appendWithOffset(
                    baseOffset + i, 1_000L + i, ("k" + i).getBytes(), ("v" + i).getBytes(), new RecordHeader[] {
                        new RecordHeader("h", new byte[] {(byte) i})
                    });
        }
        return SourceBatch.of(builder.build().batches().iterator().next());
    }

    @Test
    void restampShouldChangeOnlyOffsetProducerAndCrcAndKeepTheCompressedRecords() {
        SourceBatch source = sourceBatch(Compression.lz4().build(), 1_000, 5);

        ByteBuffer restamped = BatchRestamp.restamp(source, new ProducerIdentity(4242L, (short) 7), 99);

        MutableRecordBatch batch =
                MemoryRecords.readableRecords(restamped).batches().iterator().next();
        batch.ensureValid();
        assertThat(batch.baseOffset()).isZero();
        assertThat(batch.lastOffset()).isEqualTo(4);
        assertThat(batch.producerId()).isEqualTo(4242L);
        assertThat(batch.producerEpoch()).isEqualTo((short) 7);
        assertThat(batch.baseSequence()).isEqualTo(99);
        assertThat(batch.partitionLeaderEpoch()).isEqualTo(12);
        assertThat(batch.sizeInBytes()).isEqualTo(source.sizeInBytes());
        assertThat(restamped.duplicate().position(SourceBatch.RECORDS_OFFSET).slice())
                .isEqualTo(source.recordsSection());
        List<String> values = new ArrayList<>();
        for (Record record : batch) {
            values.add(new String(Utils.toArray(record.value())) + "@" + record.offset());
        }
        assertThat(values).containsExactly("v0@0", "v1@1", "v2@2", "v3@3", "v4@4");
    }

    @Test
    void restampShouldNotTouchTheSourceBuffer() {
        SourceBatch source = sourceBatch(Compression.NONE, 5, 2);
        ByteBuffer before = ByteBuffer.allocate(source.sizeInBytes())
                .put(source.bytes().duplicate())
                .flip();

        BatchRestamp.restamp(source, new ProducerIdentity(1L, (short) 0), 0);

        assertThat(source.bytes()).isEqualTo(before);
        assertThat(source.baseOffset()).isEqualTo(5);
        assertThat(source.partitionLeaderEpoch()).isEqualTo(12);
    }

    @Test
    void slicesShouldFindEveryCompleteBatchWithoutCopying() {
        SourceBatch first = sourceBatch(Compression.lz4().build(), 100, 3);
        SourceBatch second = sourceBatch(Compression.NONE, 103, 2);
        ByteBuffer response = ByteBuffer.allocate(first.sizeInBytes() + second.sizeInBytes() + 20);
        response.put(first.bytes().duplicate())
                .put(second.bytes().duplicate())
                .put(new byte[20])
                .flip(); // + a partial batch

        List<SourceBatch> slices = SourceBatch.slices(MemoryRecords.readableRecords(response));

        assertThat(slices).hasSize(2);
        assertThat(slices.get(0).baseOffset()).isEqualTo(100);
        assertThat(slices.get(0).lastOffset()).isEqualTo(102);
        assertThat(slices.get(0).recordCount()).isEqualTo(3);
        assertThat(slices.get(0).partitionLeaderEpoch()).isEqualTo(12);
        assertThat(slices.get(1).bytes()).isEqualTo(second.bytes());
        assertThat(slices.get(1).lastOffset()).isEqualTo(104);

        BatchRestamp.restampInPlace(slices.get(1), new ProducerIdentity(5L, (short) 0), 0);
        MemoryRecords.readableRecords(response.duplicate()
                        .position(first.sizeInBytes())
                        .limit(first.sizeInBytes() + second.sizeInBytes())
                        .slice())
                .batches()
                .iterator()
                .next()
                .ensureValid();
        assertThat(response.getLong(first.sizeInBytes() + SourceBatch.PRODUCER_ID_OFFSET))
                .as("restamped in place")
                .isEqualTo(5L);
    }

    @Test
    void fillerBatchShouldHoldKeyedTombstonesWithTheFillerHeader() {
        SourceBatch fillers = FillerBatches.of(1_000);

        assertThat(fillers.recordCount()).isEqualTo(1_000);
        assertThat(fillers.lastOffset()).isEqualTo(999);
        assertThat(fillers.hasHoles()).isFalse();
        MutableRecordBatch batch = MemoryRecords.readableRecords(fillers.bytes().duplicate())
                .batches()
                .iterator()
                .next();
        Record first = batch.iterator().next();
        assertThat(first.hasValue()).isFalse();
        assertThat(first.headers()[0].key()).isEqualTo(FillerBatches.HEADER);
        assertThat(batch.compressionType().name).isEqualTo("zstd");
    }

    @Test
    void sameContentShouldCompareRecordsNotProducerFields() {
        SourceBatch a = sourceBatch(Compression.gzip().build(), 0, 3);
        SourceBatch restamped = SourceBatch.of(
                MemoryRecords.readableRecords(BatchRestamp.restamp(a, new ProducerIdentity(9L, (short) 1), 5))
                        .batches()
                        .iterator()
                        .next());
        SourceBatch movedBack = new SourceBatch(0, 2, 3, 0, false, false, (byte) 2, restamped.bytes());
        SourceBatch other = sourceBatch(Compression.gzip().build(), 0, 2);

        assertThat(RawFetch.sameContent(a, movedBack)).isTrue();
        assertThat(RawFetch.sameContent(a, other)).isFalse();
    }
}
