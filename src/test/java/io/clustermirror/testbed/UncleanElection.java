package io.clustermirror.testbed;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;

/**
 * Leaves a stopped single-node broker's partition log as an unclean leader election leaves it: the log
 * from some batch on belongs to a new leader epoch (a replica that had not replicated the tail became leader and
 * wrote its own history there). One node cannot elect uncleanly, so the log files are edited while the broker is
 * down; its index, producer-state snapshots and epoch cache are rebuilt from the batches when it starts again.
 */
public final class UncleanElection {

    /** Records per batch the new leader writes (a producer's batches would be cut like this too). */
    private static final int BATCH = 50;

    private UncleanElection() {}

    /**
     * The new leader lacked every batch from {@code fromOffset} on and wrote {@code records} of its own there, in
     * batches of 50.
     * Returns the offset where the new history starts (the first batch boundary at or after {@code fromOffset}).
     */
    public static long replaceTail(Path partitionDir, long fromOffset, List<SimpleRecord> records) {
        return edit(partitionDir, fromOffset, (file, cut, position, epoch) -> {
            file.truncateTo(position);
            for (int i = 0; i < records.size(); i += BATCH) {
                append(file, cut + i, epoch, records.subList(i, Math.min(records.size(), i + BATCH)));
            }
        });
    }

    private static void append(FileRecords file, long baseOffset, int epoch, List<SimpleRecord> records)
            throws IOException {
        file.append(MemoryRecords.withRecords(
                RecordBatch.MAGIC_VALUE_V2,
                baseOffset,
                Compression.NONE,
                TimestampType.CREATE_TIME,
                RecordBatch.NO_PRODUCER_ID,
                RecordBatch.NO_PRODUCER_EPOCH,
                RecordBatch.NO_SEQUENCE,
                epoch,
                false,
                records.toArray(SimpleRecord[]::new)));
    }

    private interface Edit {
        void apply(FileRecords file, long cut, int position, int newEpoch) throws IOException;
    }

    private static long edit(Path partitionDir, long fromOffset, Edit edit) {
        try {
            File segment;
            try (Stream<Path> files = Files.list(partitionDir)) {
                segment = files.filter(f -> f.toString().endsWith(".log"))
                        .sorted()
                        .reduce((a, b) -> b)
                        .orElseThrow()
                        .toFile();
            }
            long cut = -1;
            int position = -1;
            int newEpoch = 0;
            try (FileRecords file = FileRecords.open(segment)) {
                for (FileChannelRecordBatch batch : file.batches()) {
                    newEpoch = Math.max(newEpoch, batch.partitionLeaderEpoch() + 1);
                    if (cut < 0 && batch.baseOffset() >= fromOffset) {
                        cut = batch.baseOffset();
                        position = batch.position();
                    }
                }
                if (cut < 0) {
                    throw new IllegalStateException("no batch at or after offset " + fromOffset + " in " + segment);
                }
                edit.apply(file, cut, position, newEpoch);
                file.flush();
            }
            try (Stream<Path> files = Files.list(partitionDir)) {
                for (Path f : files.filter(f -> f.toString().matches(".*\\.(index|timeindex|snapshot|txnindex)$"))
                        .toList()) {
                    Files.delete(f); // rebuilt from the batches at start-up
                }
            }
            return cut;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
