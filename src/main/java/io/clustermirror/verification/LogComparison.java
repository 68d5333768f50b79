package io.clustermirror.verification;

import io.clustermirror.batches.ControlMarker;
import io.clustermirror.batches.FillerBatches;
import io.clustermirror.batches.RawFetch;
import io.clustermirror.batches.SourceBatch;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.TreeMap;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.CloseableIterator;

/**
 * Whether the source and the destination log hold the same records at the same offsets, judged one answer of each
 * side at a time (decisions §46). Pure: batches in, a verdict on the offsets both answers cover out.
 *
 * <p>The rules. Batches that cover common offsets must have the same bounds, the same control and transactional
 * flags and the same timestamp type. A transaction marker is compared by its control type (COMMIT or ABORT) only: the
 * destination's coordinator wrote it with its own epoch and time. Every other record is compared field by field
 * (offset, timestamp, key, value, headers); byte-identical records sections settle a batch without decoding it. The
 * batch CRC and the producer fields are never compared: the mirror restamps producer id, epoch and sequence, which
 * the CRC covers. A record one side holds and the other does not is no difference when the missing side is compacted
 * (its cleaner removed it, the rule of LOG_TRUNCATION's {@code BatchAgreement}); a filler on the destination (what
 * the mirror writes where the source had nothing, {@link FillerBatches}) facing nothing is none either; a filler facing
 * a record is.
 */
final class LogComparison {

    private LogComparison() {}

    /** Which sides' cleaners may have removed records: a missing record on such a side is no difference. */
    record Cleaning(boolean sourceCompacted, boolean destinationCompacted) {}

    /** Where and why the two logs first differ. */
    record Difference(long offset, String reason) {}

    /**
     * What one comparison judged.
     *
     * @param next the first offset not judged yet: where the next answers of both sides start
     * @param bytes the bytes of both sides' batches judged
     * @param difference the first difference, or null
     */
    record Step(long next, int batches, long records, long bytes, Difference difference) {

        boolean different() {
            return difference != null;
        }
    }

    /**
     * Compares the offsets {@code [from, to)} that both answers cover.
     *
     * @param source the batches a fetch of the source at {@code from} answered (the first may start below it)
     * @param destination the same for the destination
     * @return where the comparison got to; {@code next} below {@code to} when an answer ended first (fetch again from
     *     there)
     */
    static Step compare(
            long from, long to, List<SourceBatch> source, List<SourceBatch> destination, Cleaning cleaning) {
        List<SourceBatch> s = within(source, from, to);
        List<SourceBatch> d = within(destination, from, to);
        // an empty answer: that side holds nothing up to its high watermark, at or above to
        long limit = Math.min(
                to - 1,
                Math.min(
                        s.isEmpty() ? to - 1 : s.get(s.size() - 1).lastOffset(),
                        d.isEmpty() ? to - 1 : d.get(d.size() - 1).lastOffset()));
        int i = 0;
        int j = 0;
        long next = from;
        int batches = 0;
        long records = 0;
        long bytes = 0;
        boolean cut = false;
        while (true) {
            SourceBatch a = i < s.size() && s.get(i).baseOffset() <= limit ? s.get(i) : null;
            SourceBatch b = j < d.size() && d.get(j).baseOffset() <= limit ? d.get(j) : null;
            if (a == null && b == null) {
                break;
            }
            if (a != null && b != null && a.baseOffset() <= b.lastOffset() && b.baseOffset() <= a.lastOffset()) {
                Difference difference = pair(from, a, b, cleaning);
                if (difference != null) {
                    return new Step(next, batches, records, bytes, difference);
                }
                batches++;
                records += a.recordCount();
                bytes += a.sizeInBytes() + b.sizeInBytes();
                next = Math.max(next, a.lastOffset() + 1);
                i++;
                j++;
                continue;
            }
            boolean fromSource = b == null || (a != null && a.baseOffset() < b.baseOffset());
            SourceBatch alone = fromSource ? a : b;
            if (alone.lastOffset() > limit) {
                cut = true; // its counterpart may be in the other side's next answer
                next = Math.max(next, alone.baseOffset());
                break;
            }
            Difference difference = fromSource ? sourceOnly(alone, cleaning) : destinationOnly(alone, cleaning);
            if (difference != null) {
                return new Step(next, batches, records, bytes, difference);
            }
            batches++;
            records += alone.recordCount();
            bytes += alone.sizeInBytes();
            next = Math.max(next, alone.lastOffset() + 1);
            if (fromSource) {
                i++;
            } else {
                j++;
            }
        }
        if (!cut) {
            next = Math.max(next, limit + 1);
        }
        return new Step(next, batches, records, bytes, null);
    }

    private static List<SourceBatch> within(List<SourceBatch> batches, long from, long to) {
        List<SourceBatch> kept = new ArrayList<>(batches.size());
        for (SourceBatch batch : batches) {
            if (batch.lastOffset() >= from && batch.baseOffset() < to) {
                kept.add(batch);
            }
        }
        return kept;
    }

    /** Two batches covering common offsets. */
    private static Difference pair(long from, SourceBatch source, SourceBatch destination, Cleaning cleaning) {
        if (source.baseOffset() != destination.baseOffset() || source.lastOffset() != destination.lastOffset()) {
            Difference bounds = source.baseOffset() != destination.baseOffset()
                    ? new Difference(Math.min(source.baseOffset(), destination.baseOffset()), "batch bounds")
                    : new Difference(Math.min(source.lastOffset(), destination.lastOffset()) + 1, "batch bounds");
            bounds = new Difference(
                    bounds.offset(), "batch bounds: source " + bounds(source) + ", destination " + bounds(destination));
            if (source.control() || destination.control()) {
                return bounds;
            }
            // a record that differs inside the offsets both batches cover comes first (a record written straight into
            // the destination, in a batch of its own, facing the source's batch)
            Difference inside = recordsDiffer(
                    Math.max(from, Math.max(source.baseOffset(), destination.baseOffset())),
                    Math.min(source.lastOffset(), destination.lastOffset()),
                    decode(source),
                    decode(destination),
                    cleaning);
            return inside != null && inside.offset() < bounds.offset() ? inside : bounds;
        }
        if (source.control() != destination.control()) {
            return new Difference(source.baseOffset(), "a control batch facing a data batch");
        }
        if (source.transactional() != destination.transactional()) {
            return new Difference(source.baseOffset(), "transactional flag");
        }
        if (source.control()) {
            return ControlMarker.isCommit(source).equals(ControlMarker.isCommit(destination))
                    ? null
                    : new Difference(source.baseOffset(), "control record type");
        }
        if (RawFetch.sameContent(source, destination)) {
            return null;
        }
        RecordBatch ours = decode(source);
        RecordBatch theirs = decode(destination);
        if (ours.timestampType() != theirs.timestampType()) {
            return new Difference(source.baseOffset(), "timestamp type");
        }
        return recordsDiffer(from, source.lastOffset(), ours, theirs, cleaning);
    }

    /** The first offset in {@code [from, to]} where the two batches' records differ, or null. */
    private static Difference recordsDiffer(
            long from, long to, RecordBatch source, RecordBatch destination, Cleaning cleaning) {
        TreeMap<Long, Record[]> byOffset = new TreeMap<>();
        records(source).forEach(r -> byOffset.computeIfAbsent(r.offset(), o -> new Record[2])[0] = r);
        records(destination).forEach(r -> byOffset.computeIfAbsent(r.offset(), o -> new Record[2])[1] = r);
        for (var entry : byOffset.subMap(from, true, to, true).entrySet()) {
            String reason = records(entry.getValue()[0], entry.getValue()[1], cleaning);
            if (reason != null) {
                return new Difference(entry.getKey(), reason);
            }
        }
        return null;
    }

    /** Why a source record and the destination record at its offset differ (either may be missing), or null. */
    static String records(Record source, Record destination, Cleaning cleaning) {
        if (source == null) {
            return destination == null || FillerBatches.isFiller(destination) || cleaning.sourceCompacted()
                    ? null
                    : "a record the source does not hold";
        }
        if (destination == null) {
            return cleaning.destinationCompacted() ? null : "missing on the destination";
        }
        if (FillerBatches.isFiller(destination) != FillerBatches.isFiller(source)) {
            return "a filler facing a record";
        }
        if (source.timestamp() != destination.timestamp()) {
            return "timestamp";
        }
        if (!Objects.equals(source.key(), destination.key())) {
            return "key";
        }
        if (!Objects.equals(source.value(), destination.value())) {
            return "value";
        }
        if (!Arrays.equals(source.headers(), destination.headers())) {
            return "headers";
        }
        return null;
    }

    /** A source batch with nothing at its offsets on the destination. */
    private static Difference sourceOnly(SourceBatch batch, Cleaning cleaning) {
        if (cleaning.destinationCompacted() || batch.recordCount() == 0) {
            return null;
        }
        return new Difference(batch.baseOffset(), "missing on the destination");
    }

    /** A destination batch with nothing at its offsets on the source: fillers, or records the source's cleaner removed. */
    private static Difference destinationOnly(SourceBatch batch, Cleaning cleaning) {
        if (cleaning.sourceCompacted() || batch.recordCount() == 0) {
            return null;
        }
        if (batch.control()) {
            return new Difference(batch.baseOffset(), "a control record the source does not hold");
        }
        for (Record record : records(decode(batch))) {
            if (!FillerBatches.isFiller(record)) {
                return new Difference(record.offset(), "a record the source does not hold");
            }
        }
        return null;
    }

    private static String bounds(SourceBatch batch) {
        return "[" + batch.baseOffset() + ".." + batch.lastOffset() + "]";
    }

    private static RecordBatch decode(SourceBatch batch) {
        return MemoryRecords.readableRecords(batch.bytes().duplicate())
                .batches()
                .iterator()
                .next();
    }

    private static List<Record> records(RecordBatch batch) {
        List<Record> records = new ArrayList<>();
        try (CloseableIterator<Record> iterator = batch.streamingIterator(BufferSupplier.NO_CACHING)) {
            iterator.forEachRemaining(records::add);
        }
        return records;
    }
}
