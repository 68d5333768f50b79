package io.clustermirror.batches;

import io.clustermirror.kafka.ProducerIdentity;
import java.nio.ByteBuffer;
import org.apache.kafka.common.record.Records;
import org.apache.kafka.common.utils.Crc32C;

/**
 * The only change a mirrored batch goes through: a copy of its header with base offset 0 (the broker
 * assigns offsets and refuses others from clients), the mirror's own producer id, epoch and base
 * sequence, and the CRC32C recomputed. The compressed records are not touched.
 */
public final class BatchRestamp {

    private BatchRestamp() {}

    /** A restamped copy; the source batch is left as it was. */
    public static ByteBuffer restamp(SourceBatch batch, ProducerIdentity identity, int baseSequence) {
        ByteBuffer copy = ByteBuffer.allocate(batch.sizeInBytes());
        copy.put(batch.bytes().duplicate());
        copy.flip();
        return stamp(copy, identity, baseSequence);
    }

    /** Restamps the batch's own bytes (the hot path: no copy); returns a view of them. */
    public static ByteBuffer restampInPlace(SourceBatch batch, ProducerIdentity identity, int baseSequence) {
        return stamp(batch.bytes().duplicate(), identity, baseSequence);
    }

    private static ByteBuffer stamp(ByteBuffer copy, ProducerIdentity identity, int baseSequence) {
        copy.putLong(Records.OFFSET_OFFSET, 0L);
        copy.putLong(SourceBatch.PRODUCER_ID_OFFSET, identity.producerId());
        copy.putShort(SourceBatch.PRODUCER_EPOCH_OFFSET, identity.producerEpoch());
        copy.putInt(SourceBatch.BASE_SEQUENCE_OFFSET, baseSequence);
        long crc = Crc32C.compute(copy, SourceBatch.ATTRIBUTES_OFFSET, copy.limit() - SourceBatch.ATTRIBUTES_OFFSET);
        copy.putInt(SourceBatch.CRC_OFFSET, (int) crc);
        return copy;
    }
}
