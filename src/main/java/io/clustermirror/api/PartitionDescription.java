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

        @Schema(description = "The last error", example = "transactional batches at offset 42 are not supported yet")
        String error,

        @Schema(
                description = "Progress of the current step (e.g. log start alignment)",
                example = "aligned to the source log start 5000")
        String progress,

        @Schema(
                description =
                        "Destination transactions held open because the source's are still open (a long-open one is a "
                                + "hanging source transaction); absent when none")
        List<OpenTransactionDescription> openTransactions) {}
