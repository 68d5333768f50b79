package io.clustermirror.batches;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.CloseableIterator;

/**
 * Offsets a compacted source no longer has a record at. A client cannot produce a batch with holes
 * (the broker refuses "Inconsistent batch offset range"), so such a batch is rewritten into one
 * contiguous batch: every surviving record with its key, value, headers and timestamp, a filler
 * tombstone at each hole, the source's codec, producer fields and transactional flag. Whole batches
 * removed between two survivors become filler batches. Both are deterministic functions of the source,
 * so a destination written this way can be checked against the source again after a restart.
 */
public final class CompactionHoles {

    private CompactionHoles() {}

    /**
     * Filler batches for the source offsets {@code [from, to)} that hold no batch, stamped with {@code timestamp} and
     * the source leader epoch of the batch after the gap.
     */
    public static List<SourceBatch> gap(long from, long to, long timestamp, int partitionLeaderEpoch) {
        List<SourceBatch> fillers = new ArrayList<>();
        for (long offset = from; offset < to; offset += FillerBatches.MAX_RECORDS_PER_BATCH) {
            fillers.add(FillerBatches.at(
                    offset,
                    (int) Math.min(FillerBatches.MAX_RECORDS_PER_BATCH, to - offset),
                    timestamp,
                    partitionLeaderEpoch));
        }
        return fillers;
    }

    /** {@code batch} rewritten with a filler at every offset of its range that has no record. */
    public static SourceBatch fill(SourceBatch batch) {
        RecordBatch original = MemoryRecords.readableRecords(batch.bytes().duplicate())
                .batches()
                .iterator()
                .next();
        List<Record> records = new ArrayList<>();
        try (CloseableIterator<Record> iterator = original.streamingIterator(BufferSupplier.create())) {
            iterator.forEachRemaining(records::add);
        }
        MemoryRecordsBuilder builder = MemoryRecords.builder(
                ByteBuffer.allocate(Math.max(1024, 2 * batch.sizeInBytes())),
                RecordBatch.CURRENT_MAGIC_VALUE,
                Compression.of(original.compressionType()).build(),
                TimestampType.CREATE_TIME,
                original.baseOffset(),
                RecordBatch.NO_TIMESTAMP,
                original.producerId(),
                original.producerEpoch(),
                original.baseSequence(),
                original.isTransactional(),
                original.partitionLeaderEpoch());
        long next = original.baseOffset();
        long fillerTimestamp = records.isEmpty()
                ? Math.max(0, original.maxTimestamp())
                : records.get(0).timestamp();
        for (Record record : records) {
            for (; next < record.offset(); next++) {
                builder.appendWithOffset(next, fillerTimestamp, FillerBatches.KEY, null, FillerBatches.HEADERS);
            }
            builder.appendWithOffset(
                    record.offset(), record.timestamp(), record.key(), record.value(), record.headers());
            fillerTimestamp = record.timestamp();
            next = record.offset() + 1;
        }
        for (; next <= original.lastOffset(); next++) {
            builder.appendWithOffset(next, fillerTimestamp, FillerBatches.KEY, null, FillerBatches.HEADERS);
        }
        return SourceBatch.of(builder.build().batches().iterator().next());
    }
}
