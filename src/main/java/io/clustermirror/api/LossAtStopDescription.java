package io.clustermirror.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.clustermirror.mirror.LossReport;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@JsonInclude(JsonInclude.Include.NON_NULL)
@Schema(
        name = "LossAtStop",
        description = "What the stop of a partition may have left on the source (the failover loss report): exact when "
                + "the source could be read at the stop, else counted from the last time the service saw the source's "
                + "end, with the RPO as an upper bound")
public record LossAtStopDescription(
        @Schema(example = "2026-12-01T10:00:02Z") String stoppedAt,

        @Schema(
                description = "Whether the source's end could be read at the stop (false: an unplanned failover)",
                example = "false")
        boolean sourceReachable,

        @Schema(
                description = "The source's end last seen: at the stop when reachable; -1 when never seen",
                example = "120000")
        long lastSourceEnd,

        @Schema(description = "When that end was seen; absent when never", example = "2026-12-01T09:59:41Z")
        String lastSourceEndSeenAt,

        @Schema(description = "The destination's end at the stop; -1 when it could not be read", example = "119800")
        long destinationEnd,

        @Schema(
                description = "Records between the destination end and the last source end seen (at least this many "
                        + "are not on the destination when the source was not reachable); -1 when unknown",
                example = "200")
        long records,

        @Schema(description = "The recovery point at the stop, in ms; -1 when it could not be told", example = "21000")
        long rpoMs,

        @Schema(
                description = "Whether rpoMs is an upper bound (the source could not be read) rather than measured",
                example = "true")
        boolean rpoBound) {

    static LossAtStopDescription of(LossReport r) {
        return r == null
                ? null
                : new LossAtStopDescription(
                        r.stoppedAt().toString(),
                        r.sourceReachable(),
                        r.lastSourceEnd(),
                        r.lastSourceEndSeenAt() == null
                                ? null
                                : r.lastSourceEndSeenAt().toString(),
                        r.destinationEnd(),
                        r.records(),
                        r.rpoMs(),
                        r.rpoBound());
    }
}
