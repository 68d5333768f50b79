package io.clustermirror.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.clustermirror.client.ApiClient;
import io.clustermirror.client.ApiException;
import io.clustermirror.client.api.InstancesApi;
import io.clustermirror.client.api.MirrorsApi;
import io.clustermirror.client.api.TopicsApi;
import io.clustermirror.client.model.AlterMirrorConfigRequest;
import io.clustermirror.client.model.CreateMirrorRequest;
import io.clustermirror.client.model.InstanceList;
import io.clustermirror.client.model.MirrorDescription;
import io.clustermirror.client.model.MirrorList;
import io.clustermirror.client.model.MirrorSummary;
import io.clustermirror.client.model.PartitionDescription;
import io.clustermirror.client.model.PromoteResponse;
import io.clustermirror.client.model.PromoteTopicsRequest;
import io.clustermirror.client.model.Promotion;
import io.clustermirror.client.model.StartTopicsRequest;
import io.clustermirror.client.model.TopicDescription;
import io.clustermirror.client.model.TopicOutcome;
import io.clustermirror.client.model.TopicSummary;
import io.clustermirror.client.model.TopicsRequest;
import io.clustermirror.client.model.TopicsResponse;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Each action as calls of the generated client ({@code MirrorsApi}, {@code TopicsApi}) and what it prints: results on
 * stdout, errors on stderr, one line each. Nothing here decides what the service would: every refusal is the
 * service's own problem+json, passed on as one line.
 */
final class Commands {

    /** Longer than the service's own deadline of a start or a topic verb ({@code mirror.flow.timeout.ms}, 5 min). */
    static final Duration READ_TIMEOUT = Duration.ofSeconds(330);

    /** What the command line asked for, checked. */
    record Request(
            Verb verb,
            String mirror,
            TopicArguments topics,
            List<String> exclude,
            Map<String, String> mirrorConfig,
            List<String> deleteConfig,
            boolean json,
            boolean failed,
            boolean adoptExisting,
            boolean overrideExclude,
            Long timeoutMs,
            boolean noFenceSource) {}

    private final ServiceConnection service;
    private final PrintWriter out;
    private final PrintWriter err;

    Commands(ServiceConnection service, PrintWriter out, PrintWriter err) {
        this.service = service;
        this.out = out;
        this.err = err;
    }

    /** Runs the request; its exit code ({@link ExitCodes}). */
    int run(Request r) {
        ApiClient client = service.client(readTimeout(r));
        ObjectMapper json = client.getObjectMapper();
        MirrorsApi mirrors = new MirrorsApi(client);
        TopicsApi topics = new TopicsApi(client);
        try {
            return switch (r.verb()) {
                case CREATE ->
                    created(mirrors.createClusterMirror(
                            new CreateMirrorRequest().name(r.mirror()).config(r.mirrorConfig())));
                case ALTER -> altered(r, mirrors.alterClusterMirrorConfig(r.mirror(), alteration(r)));
                case DELETE -> {
                    mirrors.deleteClusterMirror(r.mirror());
                    out.println("Deleted cluster mirror " + r.mirror());
                    yield ExitCodes.OK;
                }
                case LIST -> list(mirrors.listClusterMirrors(), r.json(), json);
                case DESCRIBE -> describe(r, mirrors, topics, json);
                case START -> outcomes(topics.startMirrorTopics(r.mirror(), start(r)));
                case STOP -> outcomes(topics.stopMirrorTopics(r.mirror(), names(r)));
                case PAUSE -> outcomes(topics.pauseMirrorTopics(r.mirror(), names(r)));
                case RESUME -> outcomes(topics.resumeMirrorTopics(r.mirror(), names(r)));
                case RECOVER -> outcomes(topics.recoverMirrorTopics(r.mirror(), names(r)));
                case PROMOTE -> promoted(topics.promoteMirrorTopics(r.mirror(), promote(r)));
                case INSTANCES -> instances(new InstancesApi(client).listInstances(), r.json(), json);
            };
        } catch (ApiException e) {
            Failure failure = Failure.of(e, service.url(), json);
            err.println(failure.line());
            return failure.exitCode();
        }
    }

    /** A promote waits up to its timeoutMs (default 60 s) for lag 0, then rolls back: its answer comes after that. */
    static Duration readTimeout(Request r) {
        if (r.verb() == Verb.PROMOTE && r.timeoutMs() != null) {
            Duration promote = Duration.ofMillis(r.timeoutMs()).plusSeconds(60);
            return promote.compareTo(READ_TIMEOUT) > 0 ? promote : READ_TIMEOUT;
        }
        return READ_TIMEOUT;
    }

    private int created(MirrorDescription m) {
        out.println("Created cluster mirror " + m.getName() + " of source cluster " + m.getSourceClusterId() + " ("
                + m.getSourceBootstrapServers() + ")");
        return ExitCodes.OK;
    }

    private static AlterMirrorConfigRequest alteration(Request r) {
        AlterMirrorConfigRequest alter = new AlterMirrorConfigRequest();
        if (r.mirrorConfig() != null) {
            alter.set(r.mirrorConfig());
        }
        if (r.deleteConfig() != null) {
            alter.delete(r.deleteConfig());
        }
        return alter;
    }

    private int altered(Request r, MirrorDescription m) {
        List<String> changes = new ArrayList<>();
        if (r.mirrorConfig() != null && !r.mirrorConfig().isEmpty()) {
            changes.add("set "
                    + String.join(
                            ", ", r.mirrorConfig().keySet().stream().sorted().toList()));
        }
        if (r.deleteConfig() != null && !r.deleteConfig().isEmpty()) {
            changes.add("deleted " + String.join(", ", r.deleteConfig()));
        }
        out.println(
                "Altered cluster mirror " + m.getName() + (changes.isEmpty() ? "" : ": " + String.join("; ", changes)));
        return ExitCodes.OK;
    }

    private int instances(InstanceList instances, boolean asJson, ObjectMapper json) {
        if (asJson) {
            return print(instances, json);
        }
        Tables.instances(instances).forEach(out::println);
        return ExitCodes.OK;
    }

    private int list(MirrorList list, boolean asJson, ObjectMapper json) {
        if (asJson) {
            return print(list, json);
        }
        Tables.list(list.getMirrors()).forEach(out::println);
        return ExitCodes.OK;
    }

    /**
     * describeMirrorTopic for every topic asked for: the topics named with --topics, or every topic of --mirror (from
     * describeClusterMirror), or of every mirror (listClusterMirrors). With --json, the answers as one JSON array.
     */
    private int describe(Request r, MirrorsApi mirrors, TopicsApi topics, ObjectMapper json) throws ApiException {
        List<String> mirrorNames = new ArrayList<>();
        if (r.mirror() != null) {
            mirrorNames.add(r.mirror());
        } else {
            for (MirrorSummary m : mirrors.listClusterMirrors().getMirrors()) {
                mirrorNames.add(m.getName());
            }
        }
        List<TopicDescription> described = new ArrayList<>();
        for (String mirror : mirrorNames) {
            List<String> topicNames = new ArrayList<>(r.topics().names());
            if (topicNames.isEmpty()) {
                for (TopicSummary t :
                        mirrors.describeClusterMirror(mirror, null).getTopics()) {
                    topicNames.add(t.getTopic());
                }
            }
            for (String topic : topicNames) {
                TopicDescription d = topics.describeMirrorTopic(mirror, topic);
                if (r.failed()) {
                    List<PartitionDescription> failed = d.getPartitions().stream()
                            .filter(p -> Tables.FAILED.equals(p.getState()))
                            .toList();
                    if (failed.isEmpty()) {
                        continue;
                    }
                    d.setPartitions(new ArrayList<>(failed));
                }
                described.add(d);
            }
        }
        if (r.json()) {
            return print(described, json);
        }
        Tables.describe(described, r.failed()).forEach(out::println);
        return ExitCodes.OK;
    }

    private int print(Object answer, ObjectMapper json) {
        try {
            out.println(json.writerWithDefaultPrettyPrinter().writeValueAsString(answer));
            return ExitCodes.OK;
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("the answer could not be written as JSON", e);
        }
    }

    private static StartTopicsRequest start(Request r) {
        StartTopicsRequest start = new StartTopicsRequest();
        if (!r.topics().names().isEmpty()) {
            start.topics(r.topics().names());
        }
        if (!r.topics().patterns().isEmpty()) {
            start.include(r.topics().patterns());
        }
        if (r.exclude() != null && !r.exclude().isEmpty()) {
            start.exclude(r.exclude());
        }
        if (r.adoptExisting()) {
            start.adoptExisting(true);
        }
        if (r.overrideExclude()) {
            start.overrideExclude(true);
        }
        return start;
    }

    private static TopicsRequest names(Request r) {
        return new TopicsRequest().topics(r.topics().namesOnly(r.verb()));
    }

    private static PromoteTopicsRequest promote(Request r) {
        PromoteTopicsRequest promote = new PromoteTopicsRequest();
        if (!r.topics().names().isEmpty()) {
            promote.topics(r.topics().names());
        }
        if (!r.topics().patterns().isEmpty()) {
            promote.include(r.topics().patterns());
        }
        if (r.exclude() != null && !r.exclude().isEmpty()) {
            promote.exclude(r.exclude());
        }
        if (r.timeoutMs() != null) {
            promote.timeoutMs(r.timeoutMs());
        }
        if (r.noFenceSource()) {
            promote.fenceSource(false);
        }
        return promote;
    }

    /** One line per topic: what it moved to on stdout, or its errorCode on stderr (then the exit code is 1). */
    private int outcomes(TopicsResponse response) {
        int exit = ExitCodes.OK;
        for (TopicOutcome t : response.getTopics()) {
            if (t.getErrorCode() != null) {
                err.println("Error: " + t.getErrorCode() + " for topic " + t.getTopic() + ": "
                        + Tables.oneLine(t.getError()));
                exit = ExitCodes.REFUSED;
            } else {
                out.println(t.getTopic() + ": " + t.getResult()
                        + (t.getPartitions() == null ? "" : " (" + t.getPartitions() + " partitions)"));
            }
        }
        return exit;
    }

    private int promoted(PromoteResponse response) {
        for (Promotion p : response.getTopics()) {
            out.println(p.getTopic() + ": " + p.getPhase() + " ("
                    + p.getPartitions().size()
                    + " partitions, source and destination ending at the same offsets"
                    + (p.getSourceFence() == null ? "" : "; " + p.getSourceFence()) + ")");
        }
        if (response.getGroupsSkippedActive() != null
                && !response.getGroupsSkippedActive().isEmpty()) {
            out.println("Groups not synced, active on the destination: "
                    + String.join(", ", response.getGroupsSkippedActive()));
        }
        if (response.getGroupSyncErrors() != null) {
            for (String error : response.getGroupSyncErrors()) {
                err.println("Warning: final group sync: " + Tables.oneLine(error));
            }
        }
        return ExitCodes.OK;
    }
}
