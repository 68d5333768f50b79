package io.clustermirror.truncation;

import io.clustermirror.batches.ControlMarker;
import io.clustermirror.batches.FillerBatches;
import io.clustermirror.batches.RawFetch;
import io.clustermirror.batches.SourceBatch;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
        Map<Long, Record> theirs = new HashMap<>();
        records(source).forEach(r -> theirs.put(r.offset(), r));
        for (Record ours : records(destination)) {
            Record other = theirs.get(ours.offset());
            if (other == null) {
                continue; // removed on the source's side
            }
            boolean filler = FillerBatches.isFiller(ours);
            if (filler != FillerBatches.isFiller(other) || (!filler && !sameRecord(ours, other))) {
                return false;
            }
        }
        return true;
    }

    private static List<Record> records(SourceBatch batch) {
        RecordBatch decoded = MemoryRecords.readableRecords(batch.bytes().duplicate())
                .batches()
                .iterator()
                .next();
        List<Record> records = new ArrayList<>();
        try (CloseableIterator<Record> iterator = decoded.streamingIterator(BufferSupplier.NO_CACHING)) {
            iterator.forEachRemaining(records::add);
        }
        return records;
    }

    private static boolean sameRecord(Record a, Record b) {
        return a.timestamp() == b.timestamp()
                && Objects.equals(a.key(), b.key())
                && Objects.equals(a.value(), b.value())
                && Arrays.equals(a.headers(), b.headers());
    }
}
