package io.clustermirror.api;

import io.quarkus.smallrye.openapi.OpenApiFilter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.eclipse.microprofile.openapi.models.Operation;
import org.eclipse.microprofile.openapi.models.PathItem;
import org.eclipse.microprofile.openapi.models.headers.Header;
import org.eclipse.microprofile.openapi.models.media.Content;
import org.eclipse.microprofile.openapi.models.media.Schema;
import org.eclipse.microprofile.openapi.models.responses.APIResponse;
import org.eclipse.microprofile.openapi.models.responses.APIResponses;

/**
 * The problem+json responses the operations share, added to the OpenAPI document in this one place instead of
 * repeated on every resource method (decisions §39). For each operation under {@code /v1}:
 *
 * <ul>
 *   <li>401 AUTHENTICATION_FAILED (with its WWW-Authenticate challenges) and 403 CLUSTER_MIRROR_AUTHORIZATION_FAILED:
 *       every operation, since every one is protected ({@link ClusterMirrorAccess}, checked by ClusterMirrorAccessTest);
 *       on {@code /v1/config} the 403 names the mirror-admin role its service-wide settings need;
 *   <li>503 COORDINATOR_NOT_AVAILABLE (with Retry-After): every operation, since each needs the coordinator's state;
 *   <li>400 when the operation takes input, naming what its inputs can be refused with: INVALID_CLUSTER_MIRROR_NAME
 *       for a {@code {name}} path, INVALID_TOPIC_EXCEPTION under the mirror's topics, INVALID_REQUEST for a body;
 *   <li>404 on paths with {@code {name}}: UNKNOWN_CLUSTER_MIRROR, and TOPIC_NOT_IN_CLUSTER_MIRROR under its topics.
 * </ul>
 *
 * Conflicts (409) and the other statuses an operation has of its own (422) are not guessed from the path: the
 * operation declares them with a one-line {@code @APIResponse} naming its error codes. A response the operation
 * declares itself keeps its description, so a specific annotation overrides the rule; this filter then only gives it
 * the problem+json content, as it does every 4xx and 5xx response without content. Run when the application is built,
 * so the document served at /q/openapi and the one stored in target/openapi are the same.
 */
@OpenApiFilter(stages = OpenApiFilter.RunStage.BUILD)
public class ProblemResponses implements OASFilter {

    static final String PROBLEM_SCHEMA = "Problem";

    private static final String API_PATHS = "/v1/";
    /** The service-wide resources: only the mirror-admin role reaches them ({@code ClusterMirrorAccess.serviceWide}). */
    private static final List<String> SERVICE_WIDE_PATHS = List.of("/v1/config", "/v1/instances");

    @Override
    public void filterOpenAPI(OpenAPI openAPI) {
        if (openAPI.getComponents() == null
                || openAPI.getComponents().getSchemas() == null
                || !openAPI.getComponents().getSchemas().containsKey(PROBLEM_SCHEMA)) {
            throw new IllegalStateException("The OpenAPI document has no '" + PROBLEM_SCHEMA
                    + "' schema for its problem responses: is Problem still annotated with @Schema(name = \""
                    + PROBLEM_SCHEMA + "\")?");
        }
        if (openAPI.getPaths() == null || openAPI.getPaths().getPathItems() == null) {
            return;
        }
        openAPI.getPaths().getPathItems().forEach((path, item) -> {
            if (path.startsWith(API_PATHS)) {
                item.getOperations().forEach((method, operation) -> complete(path, method, operation));
            }
        });
    }

    /** The operation with the standard problem responses it lacks, and problem+json content on every error. */
    static void complete(String path, PathItem.HttpMethod method, Operation operation) {
        APIResponses responses =
                operation.getResponses() == null ? OASFactory.createAPIResponses() : operation.getResponses();
        standard(path, operation).forEach((code, description) -> {
            if (!responses.hasAPIResponse(code)) {
                responses.addAPIResponse(code, OASFactory.createAPIResponse().description(description));
            }
        });
        Map<String, APIResponse> sorted =
                new TreeMap<>(responses.getAPIResponses() == null ? Map.of() : responses.getAPIResponses());
        sorted.forEach((code, response) -> {
            if (isError(code)
                    && (response.getContent() == null
                            || response.getContent().getMediaTypes() == null
                            || response.getContent().getMediaTypes().isEmpty())) {
                response.setContent(problemContent());
            }
        });
        header(
                sorted.get("401"),
                "WWW-Authenticate",
                "A challenge per configured mechanism that can be answered in HTTP (Basic, Bearer)");
        header(sorted.get("503"), "Retry-After", "Seconds after which the request is worth sending again");
        responses.setAPIResponses(new LinkedHashMap<>(sorted));
        operation.setResponses(responses);
    }

    /** The standard responses of one operation, by the rule above: status to description. */
    static Map<String, String> standard(String path, Operation operation) {
        boolean mirror = path.contains("{name}");
        boolean topics = mirror && path.contains("/topics");
        Map<String, String> standard = new LinkedHashMap<>();

        List<String> refused = new ArrayList<>();
        if (mirror) {
            refused.add("INVALID_CLUSTER_MIRROR_NAME");
        }
        if (topics) {
            refused.add("INVALID_TOPIC_EXCEPTION (not a legal Kafka topic name)");
        }
        if (operation.getRequestBody() != null) {
            refused.add(
                    "INVALID_REQUEST (no body, malformed JSON, a wrong type, an unknown field, a value out of range)");
        }
        if (!refused.isEmpty()) {
            standard.put("400", oneOf(refused));
        }
        standard.put("401", "AUTHENTICATION_FAILED: no credentials, or none a configured mechanism accepts");
        standard.put(
                "403",
                SERVICE_WIDE_PATHS.stream().anyMatch(path::startsWith)
                        ? "CLUSTER_MIRROR_AUTHORIZATION_FAILED: the caller does not hold the mirror-admin role "
                                + "(service-wide: the service's settings and instances)"
                        : "CLUSTER_MIRROR_AUTHORIZATION_FAILED: the caller may not perform this operation on this "
                                + "mirror");
        if (mirror) {
            standard.put(
                    "404",
                    topics
                            ? "UNKNOWN_CLUSTER_MIRROR, or TOPIC_NOT_IN_CLUSTER_MIRROR: a named topic is not in the "
                                    + "mirror"
                            : "UNKNOWN_CLUSTER_MIRROR");
        }
        standard.put(
                "503",
                "COORDINATOR_NOT_AVAILABLE: mirror state not loaded yet, this instance was fenced, a state write timed "
                        + "out, or the instance that owns the mirror is changing or does not answer (retry after "
                        + "Retry-After)");
        return standard;
    }

    private static String oneOf(List<String> codes) {
        if (codes.size() == 1) {
            return codes.get(0);
        }
        return String.join(", ", codes.subList(0, codes.size() - 1)) + " or " + codes.get(codes.size() - 1);
    }

    private static boolean isError(String code) {
        return code.startsWith("4") || code.startsWith("5");
    }

    private static Content problemContent() {
        return OASFactory.createContent()
                .addMediaType(
                        Problem.MEDIA_TYPE,
                        OASFactory.createMediaType()
                                .schema(OASFactory.createSchema().ref("#/components/schemas/" + PROBLEM_SCHEMA)));
    }

    private static void header(APIResponse response, String name, String description) {
        if (response == null
                || (response.getHeaders() != null && response.getHeaders().containsKey(name))) {
            return;
        }
        Header header = OASFactory.createHeader()
                .description(description)
                .schema(OASFactory.createSchema().addType(Schema.SchemaType.STRING));
        response.addHeader(name, header);
    }
}
