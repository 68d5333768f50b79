package io.clustermirror.fetch;

import java.nio.ByteBuffer;

import org.apache.kafka.common.record.DefaultRecordBatch;
import org.apache.kafka.common.record.RecordBatch;

/**
 * One record batch as fetched from the source, kept as its original bytes (still compressed).
 *
 * @param bytes the whole batch, position 0, limit = its size
 */
public record SourceBatch(long baseOffset, long lastOffset, int recordCount, int partitionLeaderEpoch, boolean transactional,
        boolean control, byte magic, ByteBuffer bytes) {

    /** Offset of the producer id field in a v2 batch header. */
    static final int PRODUCER_ID_OFFSET = 43;
    static final int PRODUCER_EPOCH_OFFSET = 51;
    static final int BASE_SEQUENCE_OFFSET = 53;
    static final int CRC_OFFSET = 17;
    static final int ATTRIBUTES_OFFSET = 21;
    static final int RECORDS_OFFSET = 61;

    public static SourceBatch of(RecordBatch batch) {
        ByteBuffer bytes = ByteBuffer.allocate(batch.sizeInBytes());
        batch.writeTo(bytes);
        bytes.flip();
        int count = batch.countOrNull() == null ? (int) (batch.lastOffset() - batch.baseOffset() + 1) : batch.countOrNull();
        return new SourceBatch(batch.baseOffset(), batch.lastOffset(), count, batch.partitionLeaderEpoch(), batch.isTransactional(),
                batch.isControlBatch(), batch.magic(), bytes);
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

    public boolean isV2() {
        return magic >= RecordBatch.MAGIC_VALUE_V2 && bytes.remaining() >= DefaultRecordBatch.RECORD_BATCH_OVERHEAD;
    }
}
