package io.clustermirror.api;

import io.clustermirror.config.MirrorServiceConfig;
import io.clustermirror.coordinator.LiveProgress;
import io.clustermirror.coordinator.MirrorCoordinator;
import io.clustermirror.coordinator.PartitionOffsets;
import io.clustermirror.coordinator.TopicPromotes;
import io.clustermirror.coordinator.TopicVerb;
import io.clustermirror.mirror.ClusterMirrorOperation;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.MirrorName;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionProgress;
import io.clustermirror.mirror.PartitionStatus;
import io.clustermirror.mirror.RecoveryPoint;
import io.clustermirror.mirror.TopicNames;
import io.clustermirror.mirror.TopicSelection;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/** The KIP's Start/Stop/Pause/Resume/RecoverMirrorTopics, and the per-partition view of a mirrored topic. */
@Path("/v1/mirrors/{name}")
@Tag(name = "Topics", description = "Start, stop, pause, resume and recover mirrored topics; describe their partitions")
@Produces(MediaType.APPLICATION_JSON)
public class TopicResource {

    private final MirrorCoordinator coordinator;
    private final RequestCaller caller;
    private final int maxTopicsPerRequest;

    public TopicResource(MirrorCoordinator coordinator, RequestCaller caller, MirrorServiceConfig config) {
        this.coordinator = coordinator;
        this.caller = caller;
        this.maxTopicsPerRequest = config.http().maxTopicsPerRequest();
    }

    @POST
    @Path("/topics:start")
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(
            operationId = "startMirrorTopics",
            summary = "Start mirroring topics",
            description =
                    "Creates each missing destination topic like the source's and moves its partitions UNKNOWN (or STOPPED) -> "
                            + "LOG_TRUNCATION -> MIRRORING. Each topic has its own outcome: UNKNOWN_TOPIC_OR_PARTITION (not on the source), "
                            + "TOPIC_ALREADY_IN_CLUSTER_MIRROR (mirrored, or being started by another request), TOPIC_ALREADY_EXISTS (a destination "
                            + "topic this mirror did not create: untouched unless adoptExisting), INVALID_TOPIC_EXCEPTION (an illegal name, Kafka's "
                            + "internal topics, the state topic: never mirrored), INVALID_REQUEST (named but excluded by mirror.topics.exclude, "
                            + "unless overrideExclude).")
    @APIResponse(
            responseCode = "200",
            description = "One outcome per topic",
            content = @Content(schema = @Schema(implementation = TopicsResponse.class)))
    @APIResponse(
            responseCode = "400",
            description = "INVALID_CLUSTER_MIRROR_NAME or INVALID_REQUEST (no body, malformed JSON, a wrong type, an "
                    + "unknown field, no topics and no include patterns, a malformed pattern); a topic that cannot be "
                    + "mirrored is that topic's outcome")
    @APIResponse(
            responseCode = "404",
            description = "UNKNOWN_CLUSTER_MIRROR; a topic missing on the source is that topic's outcome "
                    + "(UNKNOWN_TOPIC_OR_PARTITION)")
    @APIResponse(
            responseCode = "422",
            description = "SOURCE_METADATA_NOT_AVAILABLE: the source topics could not be listed")
    @ClusterMirrorAccess(ClusterMirrorOperation.ALTER)
    public Uni<TopicsResponse> start(
            @Parameter(description = "Mirror name", example = "dr-east") @PathParam("name") String name,
            StartTopicsRequest request) {
        requireNameAndBody(name, request);
        return coordinator
                .startTopics(
                        name,
                        new TopicSelection(
                                list(request.topics(), "topics"),
                                list(request.include(), "include"),
                                list(request.exclude(), "exclude"),
                                Boolean.TRUE.equals(request.adoptExisting()),
                                Boolean.TRUE.equals(request.overrideExclude())))
                .map(TopicsResponse::new);
    }

    @POST
    @Path("/topics:stop")
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(
            operationId = "stopMirrorTopics",
            summary = "Stop mirroring topics",
            description =
                    "Fetching ends for good, the mirror-owned configs are restored to the "
                            + "source's values, and the destination topic becomes an ordinary writable topic (STOPPING -> STOPPED).")
    @APIResponse(
            responseCode = "200",
            description = "One outcome per topic",
            content = @Content(schema = @Schema(implementation = TopicsResponse.class)))
    @APIResponse(responseCode = "409", description = "MIRROR_TOPIC_ALREADY_STOPPED or INVALID_MIRROR_PARTITION_STATE")
    @ClusterMirrorAccess(ClusterMirrorOperation.ALTER)
    public Uni<TopicsResponse> stop(
            @Parameter(description = "Mirror name", example = "dr-east") @PathParam("name") String name,
            TopicsRequest request) {
        return verb(name, TopicVerb.STOP, request);
    }

    @POST
    @Path("/topics:pause")
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(
            operationId = "pauseMirrorTopics",
            summary = "Pause mirroring topics",
            description = "MIRRORING -> PAUSING -> PAUSED: no more fetching; resume continues "
                    + "at the destination log end.")
    @APIResponse(
            responseCode = "200",
            description = "One outcome per topic",
            content = @Content(schema = @Schema(implementation = TopicsResponse.class)))
    @APIResponse(responseCode = "409", description = "INVALID_MIRROR_PARTITION_STATE")
    @ClusterMirrorAccess(ClusterMirrorOperation.ALTER)
    public Uni<TopicsResponse> pause(
            @Parameter(description = "Mirror name", example = "dr-east") @PathParam("name") String name,
            TopicsRequest request) {
        return verb(name, TopicVerb.PAUSE, request);
    }

    @POST
    @Path("/topics:resume")
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(
            operationId = "resumeMirrorTopics",
            summary = "Resume paused topics",
            description = "PAUSED -> MIRRORING from the destination log end.")
    @APIResponse(
            responseCode = "200",
            description = "One outcome per topic",
            content = @Content(schema = @Schema(implementation = TopicsResponse.class)))
    @APIResponse(responseCode = "409", description = "INVALID_MIRROR_PARTITION_STATE")
    @ClusterMirrorAccess(ClusterMirrorOperation.ALTER)
    public Uni<TopicsResponse> resume(
            @Parameter(description = "Mirror name", example = "dr-east") @PathParam("name") String name,
            TopicsRequest request) {
        return verb(name, TopicVerb.RESUME, request);
    }

    @POST
    @Path("/topics:recover")
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(
            operationId = "recoverMirrorTopics",
            summary = "Recover failed partitions",
            description = "FAILED -> LOG_TRUNCATION with the retry count reset; "
                    + "partitions in other states are left as they are.")
    @APIResponse(
            responseCode = "200",
            description = "One outcome per topic",
            content = @Content(schema = @Schema(implementation = TopicsResponse.class)))
    @APIResponse(responseCode = "409", description = "INVALID_MIRROR_PARTITION_STATE")
    @ClusterMirrorAccess(ClusterMirrorOperation.ALTER)
    public Uni<TopicsResponse> recover(
            @Parameter(description = "Mirror name", example = "dr-east") @PathParam("name") String name,
            TopicsRequest request) {
        return verb(name, TopicVerb.RECOVER, request);
    }

    @POST
    @Path("/topics:promote")
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(
            operationId = "promoteMirrorTopics",
            summary = "Promote topics (planned switchover)",
            description =
                    "Fences writes on the source topics (a DENY WRITE ACL for User:*, unless fenceSource is false), "
                            + "waits until every partition's destination log end equals the source's with no source transaction "
                            + "open, copies the synced groups' offsets one last time, then stops the topics: writable here, with "
                            + "the per-partition proof in the answer, in describe and in __mirror_state. The source fence stays "
                            + "(no split brain) until this mirror starts the topic again. On timeout or any failure before the "
                            + "stop, the fence is lifted, the topics keep MIRRORING and the answer is 409 with the lag per "
                            + "partition.")
    @APIResponse(
            responseCode = "200",
            description = "Promoted: per topic the zero-loss proof",
            content = @Content(schema = @Schema(implementation = PromoteResponse.class)))
    @APIResponse(
            responseCode = "409",
            description = "REQUEST_TIMED_OUT (rolled back, with the lag per partition), SECURITY_DISABLED or "
                    + "CLUSTER_AUTHORIZATION_FAILED (the source cannot be fenced: nothing changed), "
                    + "INVALID_MIRROR_PARTITION_STATE (a partition is not MIRRORING) or INVALID_CLUSTER_MIRROR_STATE")
    @ClusterMirrorAccess(ClusterMirrorOperation.ALTER)
    public Uni<PromoteResponse> promote(
            @Parameter(description = "Mirror name", example = "dr-east") @PathParam("name") String name,
            PromoteTopicsRequest request) {
        requireNameAndBody(name, request);
        List<String> topics = namedTopics(request.topics());
        long timeoutMs = request.timeoutMs() == null ? 60_000 : request.timeoutMs();
        if (timeoutMs < 1 || timeoutMs > 3_600_000) {
            throw new MirrorException(
                    MirrorError.INVALID_REQUEST,
                    "timeoutMs must be between 1 and 3600000, not " + timeoutMs,
                    "timeoutMs");
        }
        return coordinator
                .promote(
                        name,
                        new TopicPromotes.Request(
                                topics,
                                list(request.include(), "include"),
                                list(request.exclude(), "exclude"),
                                timeoutMs,
                                !Boolean.FALSE.equals(request.fenceSource())))
                .map(outcome -> new PromoteResponse(
                        name,
                        outcome.topics().stream().map(PromotionDescription::of).toList(),
                        outcome.groups() == null ? List.of() : outcome.groups().groupsSkippedActive(),
                        outcome.groups() == null ? List.of() : outcome.groups().errors()));
    }

    @GET
    @Path("/topics/{topic}")
    @Operation(
            operationId = "describeMirrorTopic",
            summary = "Describe a mirrored topic",
            description = "Every partition: state, source high watermark, destination log end, "
                    + "lag, last mirrored epoch, retry attempt, last error, and its progress: the LOG_TRUNCATION "
                    + "check's step and how far, while MIRRORING the rates of the last 30 s and the time to catch up.")
    @APIResponse(
            responseCode = "200",
            description = "The topic's partitions",
            content = @Content(schema = @Schema(implementation = TopicDescription.class)))
    @ClusterMirrorAccess(ClusterMirrorOperation.DESCRIBE)
    public Uni<TopicDescription> describe(
            @Parameter(description = "Mirror name", example = "dr-east") @PathParam("name") String name,
            @Parameter(description = "Topic name", example = "orders") @PathParam("topic") String topic) {
        MirrorName.validate(name);
        validTopic(topic, "topic");
        coordinator.describe(name);
        Map<MirrorPartition, PartitionStatus> statuses = coordinator.partitions(name);
        if (statuses.keySet().stream().noneMatch(p -> p.topic().equals(topic))) {
            throw new MirrorException(
                    MirrorError.TOPIC_NOT_IN_CLUSTER_MIRROR, "Topic '" + topic + "' is not in mirror '" + name + "'");
        }
        return Uni.createFrom()
                .item(() -> {
                    Map<MirrorPartition, PartitionOffsets> read = coordinator.offsets(name, topic);
                    return new EndsRead(read, coordinator.recoveryPoints(name, read));
                })
                .runSubscriptionOn(Infrastructure.getDefaultWorkerPool())
                .map(ends -> {
                    Map<MirrorPartition, PartitionOffsets> offsets = ends.offsets();
                    // read again: partitions added while the offsets were read (a source partition expansion) have a
                    // status by now,
                    // and one without (not yet persisted) is left out rather than failing the request
                    Map<MirrorPartition, PartitionStatus> current = coordinator.partitions(name);
                    List<PartitionDescription> partitions = new ArrayList<>();
                    offsets.forEach((p, o) -> {
                        PartitionStatus s = current.get(p);
                        if (s == null) {
                            return;
                        }
                        var live = coordinator.liveProgress(name, p);
                        int lme = live.map(LiveProgress::lastMirroredEpoch)
                                .filter(e -> e >= 0)
                                .orElse(s.lastMirroredEpoch());
                        List<OpenTransactionDescription> open = live.map(x -> x.openTransactions().stream()
                                        .map(t -> new OpenTransactionDescription(
                                                t.sourceProducerId(),
                                                t.destinationTransactionalId(),
                                                t.firstOffset(),
                                                t.openSince().toString()))
                                        .toList())
                                .filter(l -> !l.isEmpty())
                                .orElse(null);
                        PartitionProgress progress = coordinator.progress(name, p, s.state(), o.lag());
                        RecoveryPoint rpo = s.state() == MirrorPartitionState.STOPPED
                                ? null
                                : ends.rpos().get(p);
                        partitions.add(new PartitionDescription(
                                p.partition(),
                                s.state().name(),
                                o.sourceEnd(),
                                o.destinationEnd(),
                                o.lag(),
                                lme,
                                s.retryAttempt(),
                                s.error(),
                                s.waiting(),
                                progress.sentence(),
                                progress.bytesPerSecond(),
                                progress.recordsPerSecond(),
                                progress.etaSeconds(),
                                TruncationDescription.of(progress.truncation()),
                                open,
                                rpo == null ? null : rpo.millis(),
                                rpo == null ? null : rpo.bound(),
                                LossAtStopDescription.of(s.lossAtStop())));
                    });
                    var promotion = coordinator.promotions(name).get(topic);
                    return new TopicDescription(
                            name,
                            topic,
                            partitions,
                            promotion == null
                                    ? null
                                    : PromotionDescription.of(
                                            promotion,
                                            coordinator
                                                    .fenceLiftError(name, topic)
                                                    .orElse(null)),
                            coordinator
                                    .divergence(name, topic)
                                    .map(DivergenceDescription::of)
                                    .orElse(null));
                });
    }

    /** A topic's ends as describe read them, and the recovery points they give. */
    private record EndsRead(Map<MirrorPartition, PartitionOffsets> offsets, Map<MirrorPartition, RecoveryPoint> rpos) {}

    private Uni<TopicsResponse> verb(String name, TopicVerb verb, TopicsRequest request) {
        requireNameAndBody(name, request);
        List<String> topics = namedTopics(request.topics());
        return coordinator.topicVerb(name, verb, topics).map(TopicsResponse::new);
    }

    private static void requireNameAndBody(String name, Object request) {
        MirrorName.validate(name);
        MirrorResource.requireBody(request);
    }

    /** The topics a verb names, each a legal name. */
    private List<String> namedTopics(List<String> topics) {
        List<String> named = list(topics, "topics");
        named.forEach(topic -> validTopic(topic, "topics"));
        return named;
    }

    /** A verb or describe names topics already in the mirror: an illegal name is a malformed request (all or nothing). */
    private static void validTopic(String topic, String field) {
        String reason = TopicNames.invalidReason(topic);
        if (reason != null) {
            throw new MirrorException(MirrorError.INVALID_TOPIC_EXCEPTION, reason, field);
        }
    }

    /** A list of the body, recorded for the audit line; all lists of a request together hold at most the limit. */
    private List<String> list(List<String> values, String field) {
        if (values == null) {
            return List.of();
        }
        if (values.stream().anyMatch(v -> v == null || v.isBlank())) {
            throw new MirrorException(
                    MirrorError.INVALID_REQUEST, "'" + field + "' must not hold null or blank entries", field);
        }
        caller.topics(values);
        if (caller.topics().size() > maxTopicsPerRequest) {
            throw new MirrorException(
                    MirrorError.INVALID_REQUEST,
                    "A request may name at most " + maxTopicsPerRequest
                            + " topics and patterns (mirror.http.max.topics.per.request)",
                    field);
        }
        return values;
    }
}
