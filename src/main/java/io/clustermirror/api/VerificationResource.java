package io.clustermirror.api;

import io.clustermirror.coordinator.MirrorCoordinator;
import io.clustermirror.mirror.ClusterMirrorOperation;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.MirrorName;
import io.smallrye.common.annotation.NonBlocking;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.net.URI;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/** Consistency verification on demand (decisions §46): start one, follow it, list the recent ones. */
@Path("/v1/mirrors/{name}/verifications")
@Tag(name = "Verifications", description = "Compare the source and destination logs record by record")
@Produces(MediaType.APPLICATION_JSON)
public class VerificationResource {

    private final MirrorCoordinator coordinator;
    private final RequestCaller caller;

    public VerificationResource(MirrorCoordinator coordinator, RequestCaller caller) {
        this.coordinator = coordinator;
        this.caller = caller;
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(
            operationId = "startVerification",
            summary = "Verify that the destination holds the source's records",
            description = "Compares, per partition, the offsets both logs hold now (from the larger log start to the "
                    + "smaller high watermark): batch bounds, control and transactional flags, transaction markers by "
                    + "type, and every record's offset, timestamp, key, value and headers. Producer fields and CRCs are "
                    + "not compared (the mirror writes with its own producer). On a compacted topic a record either "
                    + "cleaner removed is no difference; a filler facing a record is. Topics in any state may be "
                    + "verified. Runs in the background on the mirror's workers, paced by "
                    + "mirror.replication.throttled.rate.")
    @APIResponse(
            responseCode = "202",
            description = "Started; Location names it",
            content = @Content(schema = @Schema(implementation = VerificationDescription.class)))
    @APIResponse(
            responseCode = "400",
            description = "INVALID_CLUSTER_MIRROR_NAME or INVALID_REQUEST (no body, no topics and no include patterns, "
                    + "a malformed pattern, no topic matching, from not start or last)")
    @APIResponse(responseCode = "404", description = "UNKNOWN_CLUSTER_MIRROR or TOPIC_NOT_IN_CLUSTER_MIRROR")
    @ClusterMirrorAccess(ClusterMirrorOperation.ALTER)
    public Uni<Response> start(
            @Parameter(description = "Mirror name", example = "dr-east") @PathParam("name") String name,
            StartVerificationRequest request) {
        MirrorName.validate(name);
        MirrorResource.requireBody(request);
        List<String> topics = list(request.topics(), "topics");
        List<String> include = list(request.include(), "include");
        String from = request.from() == null ? "start" : request.from();
        if (!from.equals("start") && !from.equals("last")) {
            throw new MirrorException(MirrorError.INVALID_REQUEST, "'from' is 'start' or 'last'", "from");
        }
        return coordinator
                .startVerification(name, topics, include, from.equals("last"))
                .map(report -> Response.accepted(VerificationDescription.of(report))
                        .location(URI.create("/v1/mirrors/" + name + "/verifications/" + report.id()))
                        .build());
    }

    @GET
    @NonBlocking
    @Operation(
            operationId = "listVerifications",
            summary = "List a mirror's recent verifications",
            description = "The last 20 verifications this instance ran for the mirror, newest first.")
    @APIResponse(
            responseCode = "200",
            description = "The verifications",
            content = @Content(schema = @Schema(implementation = VerificationList.class)))
    @APIResponse(responseCode = "404", description = "UNKNOWN_CLUSTER_MIRROR")
    @ClusterMirrorAccess(ClusterMirrorOperation.DESCRIBE)
    public VerificationList list(
            @Parameter(description = "Mirror name", example = "dr-east") @PathParam("name") String name) {
        MirrorName.validate(name);
        return new VerificationList(coordinator.verifications(name).stream()
                .map(VerificationDescription::of)
                .toList());
    }

    @GET
    @NonBlocking
    @Path("/{id}")
    @Operation(
            operationId = "describeVerification",
            summary = "Describe a verification",
            description = "Its state, verdict, progress and each partition's result with its first difference.")
    @APIResponse(
            responseCode = "200",
            description = "The verification",
            content = @Content(schema = @Schema(implementation = VerificationDescription.class)))
    @APIResponse(responseCode = "404", description = "UNKNOWN_CLUSTER_MIRROR, or NOT_FOUND: no verification of that id")
    @ClusterMirrorAccess(ClusterMirrorOperation.DESCRIBE)
    public VerificationDescription describe(
            @Parameter(description = "Mirror name", example = "dr-east") @PathParam("name") String name,
            @Parameter(description = "Verification id") @PathParam("id") String id) {
        MirrorName.validate(name);
        return VerificationDescription.of(coordinator.verification(name, id));
    }

    /** A list of the body, recorded for the audit line. */
    private List<String> list(List<String> values, String field) {
        if (values == null) {
            return List.of();
        }
        if (values.stream().anyMatch(v -> v == null || v.isBlank())) {
            throw new MirrorException(
                    MirrorError.INVALID_REQUEST, "'" + field + "' must not hold null or blank entries", field);
        }
        caller.topics(values);
        return values;
    }
}
