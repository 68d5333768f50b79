package io.clustermirror.api;

import io.clustermirror.coordinator.MirrorCoordinator;
import io.clustermirror.mirror.ClusterMirrorOperation;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.ServiceConfigRules;
import io.smallrye.common.annotation.NonBlocking;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * The service settings that change at runtime, like a Kafka broker's dynamic configs (kafka-configs' describe, alter
 * and delete): today {@code mirror.replication.throttled.rate}. They act on every mirror at once: mirror-admin only.
 */
@Path("/v1/config")
@Tag(name = "Service config", description = "Describe, set and reset the service settings that change at runtime")
@Produces(MediaType.APPLICATION_JSON)
public class ServiceConfigResource {

    private final MirrorCoordinator coordinator;

    public ServiceConfigResource(MirrorCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @GET
    @NonBlocking
    @Operation(
            operationId = "listServiceConfigs",
            summary = "Describe the service settings that change at runtime",
            description = "Each with the value in force, where it comes from (DYNAMIC, STATIC, DEFAULT) and every "
                    + "level's value.")
    @APIResponse(
            responseCode = "200",
            description = "The settings, sorted by name",
            content = @Content(schema = @Schema(implementation = ServiceConfigList.class)))
    @ClusterMirrorAccess(value = ClusterMirrorOperation.DESCRIBE, serviceWide = true)
    public ServiceConfigList list() {
        return new ServiceConfigList(coordinator.settings().describe().stream()
                .map(ServiceConfigDescription::of)
                .toList());
    }

    @PUT
    @Path("/{key}")
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(
            operationId = "alterServiceConfig",
            summary = "Set a service setting at runtime",
            description = "Kept in __mirror_state, so that the instance that replays the state (after a restart, or "
                    + "another taking over) applies it too; overrides the application config's value.")
    @APIResponse(
            responseCode = "200",
            description = "The setting as it now stands (source DYNAMIC)",
            content = @Content(schema = @Schema(implementation = ServiceConfigDescription.class)))
    @APIResponse(
            responseCode = "400",
            description = "INVALID_CONFIG (an unknown key, or a value the setting does not take; field names the key) "
                    + "or INVALID_REQUEST (no value, malformed JSON)")
    @ClusterMirrorAccess(value = ClusterMirrorOperation.ALTER, serviceWide = true)
    public Uni<ServiceConfigDescription> set(
            @Parameter(description = "The setting", example = ServiceConfigRules.REPLICATION_THROTTLED_RATE)
                    @PathParam("key")
                    String key,
            ServiceConfigValue request) {
        ServiceConfigRules.requireKnown(key);
        MirrorResource.requireBody(request);
        if (request.value() == null) {
            throw new MirrorException(
                    MirrorError.INVALID_REQUEST, "Give the new value as {\"value\":\"...\"}", "value");
        }
        return coordinator.settings().set(key, request.value()).map(ServiceConfigDescription::of);
    }

    @DELETE
    @Path("/{key}")
    @Operation(
            operationId = "resetServiceConfig",
            summary = "Return a service setting to its configured value",
            description = "Removes the value set at runtime: the application config's value applies again, or the "
                    + "default. Removing one that was not set changes nothing.")
    @APIResponse(
            responseCode = "200",
            description = "The setting as it now stands (source STATIC or DEFAULT)",
            content = @Content(schema = @Schema(implementation = ServiceConfigDescription.class)))
    @APIResponse(responseCode = "400", description = "INVALID_CONFIG: an unknown key (field names it)")
    @ClusterMirrorAccess(value = ClusterMirrorOperation.ALTER, serviceWide = true)
    public Uni<ServiceConfigDescription> delete(
            @Parameter(description = "The setting", example = ServiceConfigRules.REPLICATION_THROTTLED_RATE)
                    @PathParam("key")
                    String key) {
        return coordinator.settings().delete(key).map(ServiceConfigDescription::of);
    }
}
