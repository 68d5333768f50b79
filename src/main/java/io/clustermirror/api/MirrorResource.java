package io.clustermirror.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.clustermirror.coordinator.MirrorCoordinator;
import io.clustermirror.coordinator.ServiceInstance;
import io.clustermirror.coordinator.StateOwnership;
import io.clustermirror.mirror.ClusterMirrorOperation;
import io.clustermirror.mirror.MirrorConfigRules;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.MirrorName;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.sync.MirrorMetadataManager;
import io.smallrye.common.annotation.NonBlocking;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.PATCH;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/** Cluster mirror CRUD: the KIP's Create/List/Describe/DeleteClusterMirror and config alteration. */
@Path("/v1/mirrors")
@Tag(name = "Mirrors", description = "Create, list, describe, reconfigure and delete cluster mirrors")
@Produces(MediaType.APPLICATION_JSON)
public class MirrorResource {

    private final MirrorCoordinator coordinator;
    private final MirrorConfigRules rules;
    private final MirrorMetadataManager metadata;
    private final RequestCaller caller;

    private final ServiceInstance instance;
    private final OwnerRouting routing;
    private final ObjectMapper json;

    public MirrorResource(
            MirrorCoordinator coordinator,
            MirrorConfigRules rules,
            MirrorMetadataManager metadata,
            RequestCaller caller,
            ServiceInstance instance,
            OwnerRouting routing,
            ObjectMapper json) {
        this.instance = instance;
        this.routing = routing;
        this.json = json;
        this.coordinator = coordinator;
        this.rules = rules;
        this.metadata = metadata;
        this.caller = caller;
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(
            operationId = "createClusterMirror",
            summary = "Create a cluster mirror",
            description =
                    "Validates the config, contacts the source cluster (with a timeout) and records its cluster id. "
                            + "Nothing is persisted when any step fails.")
    @APIResponse(
            responseCode = "201",
            description = "Created; Location names the new mirror",
            content = @Content(schema = @Schema(implementation = MirrorDescription.class)))
    @APIResponse(
            responseCode = "400",
            description =
                    "INVALID_CLUSTER_MIRROR_NAME, INVALID_CONFIG (field names the config key) or INVALID_REQUEST (no body, "
                            + "malformed JSON, a wrong type, an unknown field)")
    @APIResponse(responseCode = "409", description = "CLUSTER_MIRROR_ALREADY_EXISTS")
    @APIResponse(
            responseCode = "422",
            description = "SOURCE_METADATA_NOT_AVAILABLE: the source cluster could not be described (reached, "
                    + "authenticated) within mirror.source.request.timeout.ms")
    @ClusterMirrorAccess(ClusterMirrorOperation.CREATE)
    public Uni<Response> create(CreateMirrorRequest request, @Context HttpServerRequest http) {
        requireBody(request);
        if (request.name() != null && http.getHeader(OwnerRouting.FORWARDED_BY) == null) {
            // applied by the owner of the name's state partition: it authorizes and audits the request, not this one
            var owner = instance.ownerOf(request.name());
            if (owner.isEmpty()) {
                throw new MirrorException(
                        MirrorError.COORDINATOR_NOT_AVAILABLE,
                        "No instance owns the state partition of mirror '" + request.name()
                                + "' right now (the state group is assigning it); retry");
            }
            if (!owner.get().id().equals(instance.id())) {
                caller.forwarded();
                return forward(http, owner.get(), request);
            }
        }
        caller.require(ClusterMirrorOperation.CREATE, String.valueOf(request.name()));
        return coordinator
                .create(request.name(), request.config())
                .map(mirror -> Response.created(URI.create("/v1/mirrors/" + mirror.name()))
                        .entity(MirrorDescription.of(
                                mirror, rules, coordinator.partitions(mirror.name()), instance.id()))
                        .build());
    }

    @GET
    @NonBlocking
    @Operation(
            operationId = "listClusterMirrors",
            summary = "List cluster mirrors",
            description = "Every mirror with its source bootstrap servers, source cluster id and topic count.")
    @APIResponse(
            responseCode = "200",
            description = "The mirrors, sorted by name",
            content = @Content(schema = @Schema(implementation = MirrorList.class)))
    @ClusterMirrorAccess(ClusterMirrorOperation.DESCRIBE)
    public Uni<Response> list(@Context HttpServerRequest http) {
        // a partition counts as this instance's part only when held both before and after the list was made (a take
        // merges its mirrors before it holds the partition, a give-up stops holding it before it drops them)
        Set<Integer> held = new TreeSet<>(coordinator.held().statePartitions());
        MirrorList mine = localList();
        held.retainAll(coordinator.held().statePartitions());
        var others = instance.members().stream()
                .filter(m -> !m.id().equals(instance.id()))
                .toList();
        if (http.getHeader(OwnerRouting.FORWARDED_BY) != null) {
            // a part of another instance's list: with the state partitions whose mirrors it holds
            return Uni.createFrom()
                    .item(Response.ok(mine)
                            .header(
                                    HELD_PARTITIONS,
                                    String.join(
                                            ",",
                                            held.stream().map(String::valueOf).toList()))
                            .build());
        }
        // every member lists the mirrors it holds, filtered by what the caller may describe there
        List<Uni<Part>> theirs = others.stream()
                .map(m -> Uni.createFrom()
                        .completionStage(() -> routing.forward(
                                        http,
                                        new StateOwnership.Owner(m.id(), m.url(), Set.copyOf(m.statePartitions())),
                                        Buffer.buffer())
                                .toCompletionStage())
                        .onFailure()
                        .transform(e -> new MirrorException(
                                MirrorError.COORDINATOR_NOT_AVAILABLE,
                                "Instance " + m.id() + " at " + m.url() + " did not answer the list: "
                                        + e.getMessage()))
                        .map(answer -> theirPart(m.id(), answer)))
                .toList();
        Uni<List<Part>> parts = theirs.isEmpty()
                ? Uni.createFrom().item(List.of())
                : Uni.join().all(theirs).andFailFast();
        return parts.map(list -> {
            List<MirrorSummary> all = new ArrayList<>(mine.mirrors());
            Set<Integer> covered = new TreeSet<>(held);
            list.forEach(part -> {
                all.addAll(part.mirrors().mirrors());
                covered.addAll(part.held());
            });
            int partitions = coordinator.held().statePartitionCount();
            if (covered.size() < partitions) {
                // a partition between owners: its mirrors are on no one's list, so the list would be short
                throw new MirrorException(
                        MirrorError.COORDINATOR_NOT_AVAILABLE,
                        (partitions - covered.size())
                                + " state partition(s) are moving between instances right now; retry for the whole list");
            }
            // a mirror whose partition moved while the members answered may be on two of their lists
            Map<String, MirrorSummary> byName = new TreeMap<>();
            all.forEach(m -> byName.putIfAbsent(m.name(), m));
            return Response.ok(new MirrorList(List.copyOf(byName.values()))).build();
        });
    }

    /** The header a member's part of the list carries: the state partitions whose mirrors it holds. */
    static final String HELD_PARTITIONS = "Cluster-Mirror-Held-Partitions";

    private record Part(MirrorList mirrors, Set<Integer> held) {}

    private Part theirPart(String member, OwnerRouting.Answer answer) {
        if (answer.status() != 200) {
            throw new MirrorException(
                    MirrorError.COORDINATOR_NOT_AVAILABLE,
                    "Instance " + member + " answered " + answer.status() + " to the list: " + answer.body());
        }
        Set<Integer> held = new TreeSet<>();
        String header = answer.headers().get(HELD_PARTITIONS);
        if (header != null && !header.isBlank()) {
            for (String p : header.split(",")) {
                held.add(Integer.parseInt(p.strip()));
            }
        }
        try {
            return new Part(json.readValue(answer.body().getBytes(), MirrorList.class), held);
        } catch (IOException e) {
            throw new MirrorException(
                    MirrorError.COORDINATOR_NOT_AVAILABLE, "Instance " + member + " answered no list: " + e);
        }
    }

    private Uni<Response> forward(HttpServerRequest http, StateOwnership.Owner owner, CreateMirrorRequest body) {
        Buffer buffer;
        try {
            buffer = Buffer.buffer(json.writeValueAsBytes(body));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        return Uni.createFrom()
                .completionStage(() -> routing.forward(http, owner, buffer).toCompletionStage())
                .onFailure()
                .transform(e -> new MirrorException(
                        MirrorError.COORDINATOR_NOT_AVAILABLE,
                        "The instance that owns it, " + owner.id() + " at " + owner.url() + ", did not answer: "
                                + e.getMessage()))
                .map(answer -> {
                    Response.ResponseBuilder response = Response.status(answer.status());
                    answer.headers().forEach(h -> response.header(h.getKey(), h.getValue()));
                    return response.entity(answer.body().getBytes()).build();
                });
    }

    private MirrorList localList() {
        return new MirrorList(coordinator.list().stream()
                .filter(m -> caller.allows(ClusterMirrorOperation.DESCRIBE, m.name()))
                .map(m -> MirrorSummary.of(m, (int) coordinator.partitions(m.name()).keySet().stream()
                        .map(MirrorPartition::topic)
                        .distinct()
                        .count()))
                .toList());
    }

    @GET
    @NonBlocking
    @Path("/{name}")
    @Operation(
            operationId = "describeClusterMirror",
            summary = "Describe a cluster mirror",
            description =
                    "The mirror's source, recorded cluster id and config (secrets masked), its topics' partition "
                            + "states, and its progress: lag, rates and ETA of its MIRRORING partitions and the slowest of them.")
    @APIResponse(
            responseCode = "200",
            description = "The mirror",
            content = @Content(schema = @Schema(implementation = MirrorDescription.class)))
    @ClusterMirrorAccess(ClusterMirrorOperation.DESCRIBE)
    public MirrorDescription describe(
            @Parameter(description = "Mirror name", example = "dr-east") @PathParam("name") String name,
            @Parameter(description = "Also say what the caller may do to this mirror (authorizedOperations)")
                    @QueryParam("includeAuthorizedOperations")
                    boolean includeAuthorizedOperations) {
        MirrorDescription description = MirrorDescription.of(
                coordinator.describe(MirrorName.validate(name)),
                rules,
                coordinator.partitions(name),
                instance.id(),
                coordinator.haltedReason(name),
                SyncStatus.of(metadata.status(name)),
                MirrorProgressDescription.of(coordinator.mirrorProgress(name)));
        return includeAuthorizedOperations
                ? description.withAuthorizedOperations(caller.operations(name))
                : description;
    }

    @PATCH
    @Path("/{name}/config")
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(
            operationId = "alterClusterMirrorConfig",
            summary = "Alter a cluster mirror's config",
            description =
                    "Sets and deletes config keys in one step. A change of the source connection is checked against the source: "
                            + "it must still reach the cluster the mirror was created for.")
    @APIResponse(
            responseCode = "200",
            description = "The altered mirror",
            content = @Content(schema = @Schema(implementation = MirrorDescription.class)))
    @APIResponse(
            responseCode = "400",
            description = "INVALID_CLUSTER_MIRROR_NAME, INVALID_CONFIG (field names the config key) or INVALID_REQUEST "
                    + "(no body, malformed JSON, a wrong type, an unknown field, nothing to alter)")
    @APIResponse(
            responseCode = "409",
            description = "INVALID_CLUSTER_MIRROR_STATE: changed concurrently by another request")
    @APIResponse(
            responseCode = "422",
            description = "SOURCE_METADATA_NOT_AVAILABLE: the new source connection could not be checked")
    @ClusterMirrorAccess(ClusterMirrorOperation.ALTER)
    public Uni<MirrorDescription> alterConfig(
            @Parameter(description = "Mirror name", example = "dr-east") @PathParam("name") String name,
            AlterMirrorConfigRequest request) {
        MirrorName.validate(name);
        requireBody(request);
        Map<String, String> set = request.set() == null ? Map.of() : request.set();
        List<String> deleteList = request.delete() == null ? List.of() : request.delete();
        if (set.isEmpty() && deleteList.isEmpty()) {
            throw new MirrorException(
                    MirrorError.INVALID_REQUEST, "Nothing to alter: give 'set' and/or 'delete'", "set");
        }
        if (deleteList.stream().anyMatch(Objects::isNull)) {
            throw new MirrorException(
                    MirrorError.INVALID_REQUEST, "'delete' must list config names, not null", "delete");
        }
        Set<String> delete = new LinkedHashSet<>(deleteList);
        requireSecretsWithNewAddress(coordinator.describe(name).config().values(), set, delete);
        return coordinator
                .alterConfig(name, set, delete)
                .map(mirror ->
                        MirrorDescription.of(mirror, rules, coordinator.partitions(mirror.name()), instance.id()));
    }

    @DELETE
    @Path("/{name}")
    // its only bodies are problems: a client that accepts just application/problem+json (what the document offers for
    // this operation, and what a generated client sends) is answered, not refused with 406
    @Produces({MediaType.APPLICATION_JSON, Problem.MEDIA_TYPE})
    @Operation(
            operationId = "deleteClusterMirror",
            summary = "Delete a cluster mirror",
            description = "Removes the mirror and its state. Refused while any of its topics is not STOPPED.")
    @APIResponse(responseCode = "204", description = "Deleted")
    @APIResponse(responseCode = "409", description = "CLUSTER_MIRROR_NOT_EMPTY: some topics are still mirrored")
    @ClusterMirrorAccess(ClusterMirrorOperation.DELETE)
    public Uni<Response> delete(
            @Parameter(description = "Mirror name", example = "dr-east") @PathParam("name") String name) {
        MirrorName.validate(name);
        return coordinator.delete(name).map(ignored -> Response.noContent().build());
    }

    /**
     * Re-pointing a mirror sends its stored credentials to the new address (the source check connects with them): so
     * whoever changes {@code bootstrap.servers} gives the secret settings again in the same request, or deletes them,
     * rather than handing credentials they never saw to a host of their choosing.
     */
    private void requireSecretsWithNewAddress(
            Map<String, String> current, Map<String, String> set, Set<String> delete) {
        String address = set.get("bootstrap.servers");
        if (address == null || address.equals(current.get("bootstrap.servers"))) {
            return;
        }
        List<String> kept = current.entrySet().stream()
                .filter(e -> rules.isSensitive(e.getKey()) && !e.getValue().isEmpty())
                .map(Map.Entry::getKey)
                .filter(key -> !set.containsKey(key) && !delete.contains(key))
                .sorted()
                .toList();
        if (!kept.isEmpty()) {
            throw new MirrorException(
                    MirrorError.INVALID_CONFIG,
                    "Changing bootstrap.servers would send the stored " + kept
                            + " to the new address: give them again in the same request, or delete them",
                    "set.bootstrap.servers");
        }
    }

    /** INVALID_REQUEST when a request needing a body came without one. */
    static void requireBody(Object request) {
        if (request == null) {
            throw new MirrorException(MirrorError.INVALID_REQUEST, "A JSON request body is required", null);
        }
    }
}
