package io.clustermirror.fetch;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.CloseableIterator;

/**
 * Whether a destination batch and the source batch at the same offsets say the same thing, for LOG_TRUNCATION's
 * prefix check and its search for the first divergent offset. Both logs may have been cleaned since the mirror wrote
 * the batch, each by its own cleaner: compaction drops records (and whole batches) but keeps every survivor at its
 * offset and every batch's offset range; the mirror filled the source's holes with filler tombstones. So a record
 * missing on either side, or a filler facing a missing record, contradicts nothing; two records at the same offset
 * must be equal (key, value, headers, timestamp), and a filler facing a record is a different history. Producer fields
 * are not compared: the mirror writes with its own.
 */
final class BatchAgreement {

    private BatchAgreement() {}

    /**
     * @param destination a batch of the destination log
     * @param source the first source batch holding {@code destination}'s base offset or a later one
     */
    static boolean agrees(SourceBatch destination, SourceBatch source) {
        if (source.baseOffset() > destination.lastOffset()) {
            return true; // the source's cleaner removed every record at these offsets: nothing to contradict
        }
        if (source.baseOffset() != destination.baseOffset()
                || source.lastOffset() != destination.lastOffset()
                || source.control() != destination.control()
                || source.transactional() != destination.transactional()) {
            return false;
        }
        if (source.control()) {
            // a marker written by the destination's coordinator carries its own epoch and time
            return ControlMarker.isCommit(destination).equals(ControlMarker.isCommit(source));
        }
        if (RawFetch.sameContent(destination, source)) {
            return true;
        }
        Map<Long, Record> theirs = records(source);
        for (Record ours : records(destination).values()) {
            Record other = theirs.get(ours.offset());
            if (other != null && isFiller(ours) != isFiller(other)) {
                return false;
            }
            if (other != null && !isFiller(ours) && !sameRecord(ours, other)) {
                return false;
            }
        }
        return true;
    }

    private static Map<Long, Record> records(SourceBatch batch) {
        RecordBatch decoded = MemoryRecords.readableRecords(batch.bytes().duplicate())
                .batches()
                .iterator()
                .next();
        Map<Long, Record> records = new TreeMap<>();
        try (CloseableIterator<Record> iterator = decoded.streamingIterator(BufferSupplier.NO_CACHING)) {
            iterator.forEachRemaining(r -> records.put(r.offset(), r));
        }
        return records;
    }

    static boolean isFiller(Record record) {
        Header[] headers = record.headers();
        return !record.hasValue()
                && headers.length == 1
                && FillerBatches.HEADER.equals(headers[0].key())
                && ByteBuffer.wrap(FillerBatches.KEY).equals(record.key());
    }

    private static boolean sameRecord(Record a, Record b) {
        return a.timestamp() == b.timestamp()
                && java.util.Objects.equals(a.key(), b.key())
                && java.util.Objects.equals(a.value(), b.value())
                && Arrays.equals(a.headers(), b.headers());
    }
}
