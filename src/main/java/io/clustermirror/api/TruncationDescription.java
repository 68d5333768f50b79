package io.clustermirror.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.clustermirror.mirror.TruncationProgress;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@JsonInclude(JsonInclude.Include.NON_NULL)
@Schema(
        name = "TruncationProgress",
        description = "The partition's LOG_TRUNCATION check: the one under way (LOG_TRUNCATION, EPOCH_FENCING, a "
                + "resume's check), else the last one, which says where mirroring started")
public record TruncationDescription(
        @Schema(
                description = "LOG_START_ALIGNMENT: an empty destination filled up to the source log start; "
                        + "DIVERGENCE_CHECK: the destination's last batch compared with the source's at the same offsets; "
                        + "DIVERGENCE_SEARCH: the search for the first offset where the two logs differ",
                enumeration = {"LOG_START_ALIGNMENT", "DIVERGENCE_CHECK", "DIVERGENCE_SEARCH"},
                example = "LOG_START_ALIGNMENT")
        String step,

        @Schema(
                description = "Whether the step finished with the destination a prefix of the source (mirroring "
                        + "starts at its end)",
                example = "false")
        boolean complete,

        @Schema(description = "Source log start offset as the check read it", example = "5000000")
        long sourceLogStart,

        @Schema(description = "Source log end offset as the check read it", example = "5200000")
        long sourceLogEnd,

        @Schema(description = "Destination log start offset as the check read it", example = "0")
        long destinationLogStart,

        @Schema(description = "Destination log end offset as the check read it", example = "0")
        long destinationLogEnd,

        @Schema(
                description = "How far the step is: LOG_START_ALIGNMENT, destination offsets written towards the "
                        + "source log start; DIVERGENCE_SEARCH, offsets of the searched range settled; absent for "
                        + "DIVERGENCE_CHECK (one batch compared)",
                example = "3000000")
        Long offsetsDone,

        @Schema(
                description = "The offsets the step covers (up to the source log start, or the searched range); "
                        + "absent for DIVERGENCE_CHECK",
                example = "5000000")
        Long offsetsTotal) {

    static TruncationDescription of(TruncationProgress progress) {
        if (progress == null) {
            return null;
        }
        return new TruncationDescription(
                progress.step().name(),
                progress.complete(),
                progress.sourceLogStart(),
                progress.sourceLogEnd(),
                progress.destinationLogStart(),
                progress.destinationLogEnd(),
                progress.offsetsDone() < 0 ? null : progress.offsetsDone(),
                progress.offsetsTotal() < 0 ? null : progress.offsetsTotal());
    }
}
