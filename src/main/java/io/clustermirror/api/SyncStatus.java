package io.clustermirror.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.clustermirror.sync.SyncReport;
import java.time.Instant;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** The outcome of a mirror's last metadata sync cycle, for describe. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@Schema(name = "SyncStatus", description = "The mirror's last metadata sync cycle")
public record SyncStatus(
        @Schema(example = "2026-11-29T10:00:00Z") Instant lastCycleAt,

        @Schema(description = "Duration of the last cycle", example = "42")
        long lastCycleMs,

        @Schema(
                description = "Errors of the last cycle, per item; empty when it went through",
                example = "[\"topic config orders: TopicAuthorizationException\"]")
        List<String> errors,

        @Schema(
                description =
                        "Groups whose offsets were not synced in the last cycle because they are active on the destination",
                example = "[\"billing\"]")
        List<String> groupsSkippedActive,

        @Schema(description = "Cycles run since this instance started", example = "17")
        long cycles,

        @Schema(
                description = "ACL sync and read-only enforcement",
                example = "read-only enforced; 3 ACL(s) created by this mirror")
        String acls) {

    public SyncStatus {
        errors = List.copyOf(errors);
        groupsSkippedActive = List.copyOf(groupsSkippedActive);
    }

    /** The sync's report as the API shows it; null before the first cycle. */
    public static SyncStatus of(SyncReport report) {
        return report == null
                ? null
                : new SyncStatus(
                        report.lastCycleAt(),
                        report.lastCycleMs(),
                        report.errors(),
                        report.groupsSkippedActive(),
                        report.cycles(),
                        report.acls());
    }
}
