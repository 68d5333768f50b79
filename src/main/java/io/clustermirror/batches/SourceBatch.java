package io.clustermirror.batches;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.record.DefaultRecordBatch;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.Records;

/**
 * One record batch as fetched from the source, kept as its original bytes (still compressed).
 *
 * @param bytes the whole batch, position 0, limit = its size
 */
public record SourceBatch(
        long baseOffset,
        long lastOffset,
        int recordCount,
        int partitionLeaderEpoch,
        boolean transactional,
        boolean control,
        byte magic,
        ByteBuffer bytes) {

    // Fields of a v2 batch header that kafka-clients keeps package-private (DefaultRecordBatch); the public ones are
    // used as is
    static final int PARTITION_LEADER_EPOCH_OFFSET = 12;
    static final int ATTRIBUTES_OFFSET = 21;
    static final int FIRST_TIMESTAMP_OFFSET = 27;
    static final int MAX_TIMESTAMP_OFFSET = 35;
    static final int PRODUCER_ID_OFFSET = 43;
    static final int PRODUCER_EPOCH_OFFSET = 51;
    static final int BASE_SEQUENCE_OFFSET = 53;
    static final int CRC_OFFSET = DefaultRecordBatch.CRC_OFFSET;
    static final int RECORDS_OFFSET = DefaultRecordBatch.RECORD_BATCH_OVERHEAD;
    private static final int TRANSACTIONAL_FLAG = 0x10;
    private static final int CONTROL_FLAG = 0x20;
    private static final int LOG_APPEND_TIME_FLAG = 0x08;

    public static SourceBatch of(RecordBatch batch) {
        ByteBuffer bytes = ByteBuffer.allocate(batch.sizeInBytes());
        batch.writeTo(bytes);
        bytes.flip();
        int count =
                batch.countOrNull() == null ? (int) (batch.lastOffset() - batch.baseOffset() + 1) : batch.countOrNull();
        return new SourceBatch(
                batch.baseOffset(),
                batch.lastOffset(),
                count,
                batch.partitionLeaderEpoch(),
                batch.isTransactional(),
                batch.isControlBatch(),
                batch.magic(),
                bytes);
    }

    /**
     * The complete batches of a fetch response, as views of the response's own buffer (no copy). The
     * views belong to the caller: the hot path restamps them in place.
     */
    public static List<SourceBatch> slices(MemoryRecords records) {
        ByteBuffer buffer = records.buffer();
        List<SourceBatch> batches = new ArrayList<>();
        int position = buffer.position();
        int limit = buffer.limit();
        while (position + Records.HEADER_SIZE_UP_TO_MAGIC <= limit) {
            int size = buffer.getInt(position + Records.SIZE_OFFSET) + Records.LOG_OVERHEAD;
            if (size < Records.HEADER_SIZE_UP_TO_MAGIC || position + size > limit) {
                break; // a partial batch at the end of a fetch response
            }
            ByteBuffer bytes =
                    buffer.duplicate().position(position).limit(position + size).slice();
            byte magic = bytes.get(Records.MAGIC_OFFSET);
            long baseOffset = bytes.getLong(Records.OFFSET_OFFSET);
            if (magic < RecordBatch.MAGIC_VALUE_V2 || size < DefaultRecordBatch.RECORD_BATCH_OVERHEAD) {
                batches.add(new SourceBatch(baseOffset, baseOffset, 1, -1, false, false, magic, bytes));
            } else {
                short attributes = bytes.getShort(ATTRIBUTES_OFFSET);
                batches.add(new SourceBatch(
                        baseOffset,
                        baseOffset + bytes.getInt(DefaultRecordBatch.LAST_OFFSET_DELTA_OFFSET),
                        bytes.getInt(DefaultRecordBatch.RECORDS_COUNT_OFFSET),
                        bytes.getInt(PARTITION_LEADER_EPOCH_OFFSET),
                        (attributes & TRANSACTIONAL_FLAG) != 0,
                        (attributes & CONTROL_FLAG) != 0,
                        magic,
                        bytes));
            }
            position += size;
        }
        return batches;
    }

    public int sizeInBytes() {
        return bytes.remaining();
    }

    /** Offsets the batch spans without a record: holes left by compaction. */
    public boolean hasHoles() {
        return recordCount != lastOffset - baseOffset + 1;
    }

    /** The records section: what must be byte-identical on both sides (the header carries producer and CRC). */
    public ByteBuffer recordsSection() {
        return bytes.duplicate().position(RECORDS_OFFSET).slice();
    }

    /** The source producer id in the batch header (v2; -1 when none). */
    public long producerId() {
        return bytes.getLong(PRODUCER_ID_OFFSET);
    }

    /** The batch header's first timestamp (v2). */
    public long firstTimestamp() {
        return bytes.getLong(FIRST_TIMESTAMP_OFFSET);
    }

    /**
     * The time of the batch's first record as the log holds it: a LogAppendTime batch carries the broker's append time
     * (its max timestamp, for every record), a CreateTime batch the producer's first timestamp; a legacy (v0/v1) entry
     * its own timestamp, -1 for v0, which has none.
     */
    public long recordTimestamp() {
        if (isV2()) {
            return (bytes.getShort(ATTRIBUTES_OFFSET) & LOG_APPEND_TIME_FLAG) != 0
                    ? bytes.getLong(MAX_TIMESTAMP_OFFSET)
                    : firstTimestamp();
        }
        var legacy = MemoryRecords.readableRecords(bytes.duplicate()).batches().iterator();
        return legacy.hasNext() ? legacy.next().maxTimestamp() : RecordBatch.NO_TIMESTAMP;
    }

    public boolean isV2() {
        return magic >= RecordBatch.MAGIC_VALUE_V2 && bytes.remaining() >= DefaultRecordBatch.RECORD_BATCH_OVERHEAD;
    }
}
