package io.clustermirror.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.clustermirror.mirror.VerificationReport;
import java.time.Instant;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@JsonInclude(JsonInclude.Include.NON_NULL)
@Schema(
        name = "Verification",
        description = "A consistency verification: the records both clusters hold, compared offset by offset")
public record VerificationDescription(
        @Schema(example = "5f0c6a3e-8d7e-4b7e-9a43-0c2b1f6f3c11")
        String id,

        @Schema(example = "dr-east") String mirror,

        @Schema(
                description =
                        "RUNNING, DONE, or FAILED (a partition could not be compared to its end and none differed)",
                enumeration = {"RUNNING", "DONE", "FAILED"},
                example = "DONE")
        String state,

        @Schema(
                description = "Once ended: DIFFERENT when any partition differs (also when it FAILED after finding the"
                        + " difference), IDENTICAL when it is DONE and none differs",
                enumeration = {"IDENTICAL", "DIFFERENT"},
                example = "IDENTICAL")
        String verdict,

        @Schema(
                description = "Why it FAILED",
                example = "some partitions could not be compared to their end (INCOMPLETE)")
        String failure,

        Instant startedAt,
        Instant finishedAt,
        Progress progress,
        List<Partition> partitions) {

    @JsonInclude(JsonInclude.Include.NON_NULL)
    @Schema(name = "VerificationProgress", description = "Bytes of both clusters compared")
    public record Progress(
            @Schema(example = "73400320") long bytesCompared,

            @Schema(
                    description = "Until DONE an estimate: the bytes compared so far over the offsets compared, times "
                            + "all offsets to compare",
                    example = "146800640")
            long bytesTotal,

            @Schema(description = "Bytes of both clusters compared per second since it started", example = "52428800.0")
            double bytesPerSecond,

            @Schema(
                    description = "Seconds to compare the rest at that rate (0 once ended; absent while unknown)",
                    example = "2")
            Long eta) {}

    @JsonInclude(JsonInclude.Include.NON_NULL)
    @Schema(name = "VerificationPartition", description = "One partition's comparison")
    public record Partition(
            @Schema(example = "orders") String topic,
            @Schema(example = "0") int partition,

            @Schema(
                    description = "First offset compared: the larger log start (or where the last verification ended, "
                            + "with from=last); -1 when the logs could not be read",
                    example = "0")
            long from,

            @Schema(
                    description = "End of the range (exclusive): the smaller high watermark when it started",
                    example = "100000")
            long to,

            @Schema(description = "Compared up to here (exclusive)", example = "100000")
            long verifiedTo,

            @Schema(description = "Batches compared", example = "1000")
            long batches,

            @Schema(description = "Records compared (as the source batches count them)", example = "100000")
            long records,

            @Schema(
                    description =
                            "IDENTICAL, DIFFERENT or INCOMPLETE (could not be read to its end); absent while it runs",
                    enumeration = {"IDENTICAL", "DIFFERENT", "INCOMPLETE"},
                    example = "IDENTICAL")
            String result,

            @Schema(description = "Where the logs first differ (DIFFERENT), or why INCOMPLETE")
            Difference firstDifference) {}

    @JsonInclude(JsonInclude.Include.NON_NULL)
    @Schema(name = "VerificationDifference", description = "Where and why")
    public record Difference(
            @Schema(description = "The first offset that differs (-1: none, an INCOMPLETE partition)", example = "4711")
            long offset,

            @Schema(example = "value") String reason) {}

    static VerificationDescription of(VerificationReport r) {
        return new VerificationDescription(
                r.id(),
                r.mirror(),
                r.state().name(),
                r.verdict() == null ? null : r.verdict().name(),
                r.failure(),
                r.startedAt(),
                r.finishedAt(),
                new Progress(
                        r.bytesCompared(),
                        r.bytesTotal(),
                        r.bytesPerSecond(),
                        r.etaSeconds() < 0 ? null : r.etaSeconds()),
                r.partitions().stream()
                        .map(p -> new Partition(
                                p.partition().topic(),
                                p.partition().partition(),
                                p.from(),
                                p.to(),
                                p.verifiedTo(),
                                p.batches(),
                                p.records(),
                                p.result() == null ? null : p.result().name(),
                                p.reason() == null ? null : new Difference(p.differenceOffset(), p.reason())))
                        .toList());
    }
}
