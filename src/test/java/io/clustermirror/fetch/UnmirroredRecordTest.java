package io.clustermirror.fetch;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.batches.SourceBatch;
import io.clustermirror.mirror.MirrorPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

/** The oldest record not acknowledged yet, as the data plane publishes it for the recovery point (issue 21). */
class UnmirroredRecordTest {

    private final FetchPartition state = new FetchPartition(new MirrorPartition("t", 0), 10, 3, 1);

    private static SourceBatch batch(long offset, long firstTimestamp) {
        return SourceBatch.slices(MemoryRecords.withRecords(
                        offset,
                        Compression.NONE,
                        new SimpleRecord(firstTimestamp, "a".getBytes()),
                        new SimpleRecord(firstTimestamp + 5, "b".getBytes())))
                .get(0);
    }

    @Test
    void nothingFetchedShouldPublishNothing() {
        state.noteUnmirrored();

        assertThat(state.counts().unmirrored()).isNull();
        assertThat(state.counts().unmirroredTimestampAt(10)).isEqualTo(-1);
    }

    @Test
    void theQueuedBatchAtTheAcknowledgedEndShouldGiveItsFirstRecordsTimestamp() {
        state.enqueue(batch(10, 1_000));
        state.enqueue(batch(12, 2_000));
        state.noteUnmirrored();

        assertThat(state.counts().unmirroredTimestampAt(10)).isEqualTo(1_000);
    }

    @Test
    void onceTheFirstBatchIsAcknowledgedTheNextOneInFlightShouldBeTheOldest() {
        SourceBatch first = batch(10, 1_000);
        SourceBatch second = batch(12, 2_000);
        state.inFlight.add(new FetchPartition.Sent(first, 1, null));
        state.inFlight.add(new FetchPartition.Sent(second, 1, null));
        state.enqueue(batch(14, 3_000));
        state.noteUnmirrored();
        assertThat(state.counts().unmirroredTimestampAt(10)).isEqualTo(1_000);

        state.ackedEnd = 12; // the first acknowledged, still at the head of the in-flight queue
        state.noteUnmirrored();

        assertThat(state.counts().unmirroredTimestampAt(12)).isEqualTo(2_000);
        assertThat(state.counts().unmirroredTimestampAt(10)).isEqualTo(-1);
    }

    @Test
    void aBatchWaitingForItsRetryShouldCount() {
        state.unconfirmed.put(10L, new FetchPartition.Sent(batch(10, 1_000), 1, null));
        state.noteUnmirrored();

        assertThat(state.counts().unmirroredTimestampAt(10)).isEqualTo(1_000);
    }

    @Test
    void aLogAppendTimeBatchShouldGiveTheBrokersTime() {
        SourceBatch appended = SourceBatch.slices(MemoryRecords.withRecords(
                        RecordBatch.CURRENT_MAGIC_VALUE,
                        10,
                        Compression.NONE,
                        TimestampType.LOG_APPEND_TIME,
                        new SimpleRecord(1_000, "a".getBytes())))
                .get(0);

        assertThat(appended.recordTimestamp()).isEqualTo(appended.bytes().getLong(35)); // the max timestamp field
        assertThat(appended.recordTimestamp()).isNotEqualTo(1_000);
    }

    @Test
    void aLegacyRecordShouldGiveItsOwnTimestamp() {
        SourceBatch legacy = SourceBatch.slices(MemoryRecords.withRecords(
                        RecordBatch.MAGIC_VALUE_V1,
                        10,
                        Compression.NONE,
                        TimestampType.CREATE_TIME,
                        new SimpleRecord(4_242, "a".getBytes())))
                .get(0);

        assertThat(legacy.recordTimestamp()).isEqualTo(4_242);
    }
}
