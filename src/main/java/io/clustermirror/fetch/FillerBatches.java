package io.clustermirror.fetch;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.TimestampType;

/**
 * Filler records that occupy offsets the source no longer has (below its log start), so that the
 * destination's next offset equals the source's: tombstones under a reserved key with a
 * {@code mirror.filler} header, zstd-compressed (a 100,000-record batch is a few hundred KB).
 * They are deleted right after with DeleteRecords, or by the cleaner on compacted topics.
 */
public final class FillerBatches {

    public static final int MAX_RECORDS_PER_BATCH = 100_000;
    public static final byte[] KEY = "__cluster_mirror_filler".getBytes(StandardCharsets.UTF_8);
    public static final String HEADER = "mirror.filler";
    private static final Header[] HEADERS = { new RecordHeader(HEADER, new byte[0]) };

    private FillerBatches() {
    }

    /** A batch of {@code count} filler records (1..{@value #MAX_RECORDS_PER_BATCH}). */
    public static SourceBatch of(int count) {
        if (count < 1 || count > MAX_RECORDS_PER_BATCH) {
            throw new IllegalArgumentException("count must be in 1.." + MAX_RECORDS_PER_BATCH);
        }
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(64 * 1024), Compression.zstd().build(),
                TimestampType.CREATE_TIME, 0L);
        long now = System.currentTimeMillis();
        for (int i = 0; i < count; i++) {
            builder.appendWithOffset(i, now, KEY, null, HEADERS);
        }
        return SourceBatch.of(builder.build().batches().iterator().next());
    }
}
