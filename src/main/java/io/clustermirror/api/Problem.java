package io.clustermirror.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.PartitionLag;
import java.util.List;
import java.util.Locale;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** An RFC 9457 problem document, with the KIP error name in {@code errorCode} and the offending request field. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@Schema(name = "Problem", description = "RFC 9457 problem details; errorCode carries the KIP-1279 error name")
public record Problem(
        @Schema(example = "urn:cluster-mirror:problem:unknown-cluster-mirror")
        String type,

        @Schema(example = "Unknown cluster mirror") String title,
        @Schema(example = "404") int status,

        @Schema(example = "Cluster mirror 'dr-east' does not exist")
        String detail,

        @Schema(example = "/v1/mirrors/dr-east") String instance,
        @Schema(example = "UNKNOWN_CLUSTER_MIRROR") String errorCode,

        @Schema(description = "The request field at fault, for input errors", example = "config.bootstrap.servers")
        String field,

        @Schema(
                description =
                        "Per partition, where a promote stood when it gave up and rolled back (topics:promote only)",
                nullable = true)
        List<PartitionLagDescription> lag) {

    public static final String MEDIA_TYPE = "application/problem+json";

    /** A problem for an HTTP-level refusal (405, 413, 415, ...) whose status is not the error's own. */
    public static Problem of(MirrorError error, int status, String detail, String instance) {
        Problem problem = of(error, detail, instance, null);
        return new Problem(problem.type(), problem.title(), status, detail, instance, problem.errorCode(), null, null);
    }

    public static Problem of(MirrorError error, String detail, String instance, String field) {
        return new Problem(
                "urn:cluster-mirror:problem:"
                        + error.name().toLowerCase(Locale.ROOT).replace('_', '-'),
                error.title(),
                error.httpStatus(),
                detail,
                instance,
                error.name(),
                field,
                null);
    }

    /** The same problem with a promote's lag per partition. */
    public Problem withLag(List<PartitionLag> partitions) {
        return new Problem(
                type,
                title,
                status,
                detail,
                instance,
                errorCode,
                field,
                partitions.stream().map(PartitionLagDescription::of).toList());
    }
}
