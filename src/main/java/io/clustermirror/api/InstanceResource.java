package io.clustermirror.api;

import io.clustermirror.coordinator.ServiceInstance;
import io.clustermirror.mirror.ClusterMirrorOperation;
import io.smallrye.common.annotation.NonBlocking;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.Comparator;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/** The service instances that share this destination's mirrors, and which one answered. */
@Path("/v1/instances")
@Tag(name = "Instances", description = "The service instances of this destination and what each runs")
@Produces(MediaType.APPLICATION_JSON)
public class InstanceResource {

    private final ServiceInstance instance;

    public InstanceResource(ServiceInstance instance) {
        this.instance = instance;
    }

    @GET
    @NonBlocking
    @Operation(
            operationId = "listInstances",
            summary = "List the service instances",
            description = "Each instance with its id, advertised URL, the state topic partitions it owns and how many "
                    + "mirrors it runs, and the id of the instance that answered: every member of the state group "
                    + "of this destination, as the answering instance last saw the group's assignment.")
    @APIResponse(
            responseCode = "200",
            description = "The instances, sorted by id",
            content = @Content(schema = @Schema(implementation = InstanceList.class)))
    @ClusterMirrorAccess(value = ClusterMirrorOperation.DESCRIBE, serviceWide = true)
    public InstanceList list() {
        return new InstanceList(
                instance.id(),
                instance.members().stream()
                        .map(InstanceDescription::of)
                        .sorted(Comparator.comparing(InstanceDescription::id))
                        .toList());
    }
}
