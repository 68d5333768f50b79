package io.clustermirror.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@JsonInclude(JsonInclude.Include.NON_NULL)
@Schema(
        name = "PartitionDescription",
        description = "One mirrored partition: its state and how far the destination is behind")
public record PartitionDescription(
        @Schema(example = "0") int partition,

        @Schema(description = "KIP-1279 partition state", example = "MIRRORING")
        String state,

        @Schema(description = "Source high watermark (-1 if the source did not answer)", example = "120000")
        long sourceOffset,

        @Schema(description = "Destination log end (-1 if the destination did not answer)", example = "119800")
        long destinationOffset,

        @Schema(description = "sourceOffset - destinationOffset, in records", example = "200")
        long lag,

        @Schema(description = "Source leader epoch of the last batch mirrored (-1 if none)", example = "3")
        int lastMirrorEpoch,

        @Schema(
                description = "Automatic retries of FAILED so far; -1 = retries exhausted, waiting for recover",
                example = "0")
        int retryAttempt,

        @Schema(
                description = "The last error",
                example = "source batch [40..42] was appended at destination offset 45 instead of 40: the destination "
                        + "was written by another producer (or lost data); mirroring stopped")
        String error,

        @Schema(
                description = "What the partition's move under way waits for (a stop waiting for the mirror's clients "
                        + "or for its data plane to release the partition; it is tried again every few seconds); "
                        + "absent when nothing waits. The error goes on saying why the partition is in its state",
                example = "stopping waits for the mirror's clients: Failed to resolve source.example:9092")
        String waiting,

        @Schema(
                description = "A sentence made of the structured fields: the LOG_TRUNCATION check under way, the rates "
                        + "and ETA while MIRRORING, else the last check's outcome",
                example = "mirroring 2,560 records/s, 2.5 MiB/s over the last 30 s; caught up (200 records in flight)")
        String progress,

        @Schema(
                description = "MIRRORING: log bytes per second the destination acknowledged over the last 30 s "
                        + "(sampled every 2 s); absent when not measured yet or not MIRRORING",
                example = "2621440.0")
        Double bytesPerSecond,

        @Schema(
                description = "MIRRORING: records per second the destination acknowledged over the last 30 s; absent "
                        + "when not measured yet or not MIRRORING",
                example = "2560.0")
        Double recordsPerSecond,

        @Schema(
                description = "MIRRORING: seconds to catch up the lag at the rate it shrank over the last 30 s (net of "
                        + "the source's growth, so a throttle or a busy source shows); 0 when caught up (lag 0, or "
                        + "less than the destination appends in a second); absent (null) when unknown or while the "
                        + "lag is not shrinking, and when not MIRRORING",
                example = "42")
        Integer etaSeconds,

        @Schema(description = "The LOG_TRUNCATION check under way, else the last one; absent before the first")
        TruncationDescription truncation,

        @Schema(
                description =
                        "Destination transactions held open because the source's are still open (a long-open one is a "
                                + "hanging source transaction); absent when none")
        List<OpenTransactionDescription> openTransactions,

        @Schema(
                description = "Recovery point in ms: the age of the oldest source record not on the destination yet "
                        + "(now minus its timestamp), 0 when the destination end equals the source end (also while "
                        + "idle); while the source cannot be read, an upper bound (rpoBound). Absent when STOPPED or not "
                        + "known yet. Timestamps are the log's: CreateTime is the producers' clocks",
                example = "1250")
        Long rpoMs,

        @Schema(
                description = "Whether rpoMs is an upper bound (the source could not be read: the time since its end "
                        + "was last seen, or the age of the oldest record not mirrored if larger); absent with rpoMs",
                example = "false")
        Boolean rpoBound,

        @Schema(description = "STOPPED: what the stop may have left on the source; absent otherwise")
        LossAtStopDescription lossAtStop) {}
