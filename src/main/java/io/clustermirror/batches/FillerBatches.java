package io.clustermirror.batches;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;

/**
 * Filler records that occupy offsets the source has no record at (below its log start, or removed by
 * compaction), so that every source record keeps its offset on the destination: tombstones under a
 * reserved key with a {@code mirror.filler} header, zstd-compressed (a 100,000-record batch is a few
 * hundred KB). Below the log start they are deleted right after with DeleteRecords; on compacted
 * topics the destination's cleaner removes them once {@code delete.retention.ms} has passed.
 */
public final class FillerBatches {

    public static final int MAX_RECORDS_PER_BATCH = 100_000;
    public static final byte[] KEY = "__cluster_mirror_filler".getBytes(StandardCharsets.UTF_8);
    public static final String HEADER = "mirror.filler";
    static final Header[] HEADERS = {new RecordHeader(HEADER, new byte[0])};

    /**
     * Whether a record is one this class writes: a tombstone under the reserved key with the one filler header (what
     * LOG_TRUNCATION's agreement and a verification tell from a source record).
     */
    public static boolean isFiller(Record record) {
        Header[] headers = record.headers();
        return !record.hasValue()
                && headers.length == 1
                && HEADER.equals(headers[0].key())
                && ByteBuffer.wrap(KEY).equals(record.key());
    }

    private FillerBatches() {}

    /** A batch of {@code count} filler records (1..{@value #MAX_RECORDS_PER_BATCH}) stamped now. */
    public static SourceBatch of(int count) {
        return at(0, count, System.currentTimeMillis(), RecordBatch.NO_PARTITION_LEADER_EPOCH);
    }

    /**
     * Filler records for offsets {@code [baseOffset, baseOffset + count)}, all with {@code timestamp}
     * (taken from the source, so that the same gap always yields the same batch) and the source leader epoch of
     * the batch after the gap: the destination stamps its own epoch anyway, but the data plane remembers it as the
     * epoch of the last offset mirrored, which it sends with its next fetch.
     */
    public static SourceBatch at(long baseOffset, int count, long timestamp, int partitionLeaderEpoch) {
        if (count < 1 || count > MAX_RECORDS_PER_BATCH) {
            throw new IllegalArgumentException("count must be in 1.." + MAX_RECORDS_PER_BATCH);
        }
        MemoryRecordsBuilder builder = MemoryRecords.builder(
                ByteBuffer.allocate(64 * 1024),
                RecordBatch.CURRENT_MAGIC_VALUE,
                Compression.zstd().build(),
                TimestampType.CREATE_TIME,
                baseOffset);
        for (int i = 0; i < count; i++) {
            builder.appendWithOffset(baseOffset + i, timestamp, KEY, null, HEADERS);
        }
        MutableRecordBatch batch = builder.build().batches().iterator().next();
        if (partitionLeaderEpoch >= 0) {
            batch.setPartitionLeaderEpoch(partitionLeaderEpoch); // outside the CRC
        }
        return SourceBatch.of(batch);
    }
}
