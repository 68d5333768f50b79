package io.clustermirror.batches;

import java.util.Optional;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;

/** Reads a source control batch: which transaction marker it is. */
public final class ControlMarker {

    private ControlMarker() {}

    /** COMMIT or ABORT for a transaction marker; empty for any other control record. */
    public static Optional<Boolean> isCommit(SourceBatch batch) {
        RecordBatch control = MemoryRecords.readableRecords(batch.bytes().duplicate())
                .batches()
                .iterator()
                .next();
        for (Record record : control) {
            ControlRecordType type = ControlRecordType.parse(record.key());
            if (type == ControlRecordType.COMMIT || type == ControlRecordType.ABORT) {
                return Optional.of(type == ControlRecordType.COMMIT);
            }
        }
        return Optional.empty();
    }
}
