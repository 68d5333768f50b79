package io.clustermirror.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.eclipse.microprofile.openapi.models.Operation;
import org.eclipse.microprofile.openapi.models.responses.APIResponse;
import org.junit.jupiter.api.Test;

/** The rule by which the OpenAPI document's standard problem responses are added (decisions §39). */
class ProblemResponsesTest {

    private static final String PROBLEM_REF = "#/components/schemas/Problem";

    @Test
    void aTopicVerbShouldGetEveryStandardProblemAndKeepItsOwnConflict() {
        Operation stop = OASFactory.createOperation()
                .requestBody(OASFactory.createRequestBody())
                .responses(OASFactory.createAPIResponses()
                        .addAPIResponse("200", OASFactory.createAPIResponse().description("One outcome per topic"))
                        .addAPIResponse(
                                "409", OASFactory.createAPIResponse().description("INVALID_MIRROR_PARTITION_STATE")));

        filter(Map.of("/v1/mirrors/{name}/topics:stop", stop));

        Map<String, APIResponse> responses = stop.getResponses().getAPIResponses();
        assertThat(responses).containsOnlyKeys("200", "400", "401", "403", "404", "409", "503");
        assertThat(responses.keySet()).containsExactly("200", "400", "401", "403", "404", "409", "503");
        assertThat(responses.get("400").getDescription())
                .startsWith("INVALID_CLUSTER_MIRROR_NAME, INVALID_TOPIC_EXCEPTION")
                .contains("or INVALID_REQUEST (no body");
        assertThat(responses.get("404").getDescription())
                .contains("UNKNOWN_CLUSTER_MIRROR", "TOPIC_NOT_IN_CLUSTER_MIRROR");
        assertThat(responses.get("409").getDescription()).isEqualTo("INVALID_MIRROR_PARTITION_STATE");
        assertThat(responses.get("401").getHeaders()).containsKey("WWW-Authenticate");
        assertThat(responses.get("503").getHeaders()).containsKey("Retry-After");
        responses.forEach((code, response) -> {
            if (code.startsWith("2")) {
                assertThat(response.getContent()).as(code).isNull();
            } else {
                assertThat(response.getContent()
                                .getMediaType(Problem.MEDIA_TYPE)
                                .getSchema()
                                .getRef())
                        .as(code)
                        .isEqualTo(PROBLEM_REF);
            }
        });
    }

    @Test
    void anOperationWithoutInputShouldGetNoBadRequestAndAServiceWideOneNoNotFound() {
        Operation list = OASFactory.createOperation()
                .responses(OASFactory.createAPIResponses()
                        .addAPIResponse("200", OASFactory.createAPIResponse().description("The settings")));

        filter(Map.of("/v1/config", list));

        Map<String, APIResponse> responses = list.getResponses().getAPIResponses();
        assertThat(responses).containsOnlyKeys("200", "401", "403", "503");
        assertThat(responses.get("403").getDescription()).contains("mirror-admin role");
    }

    @Test
    void aMirrorPathShouldGetNotFoundAndTheMirrorNameAsBadRequest() {
        Operation describe = OASFactory.createOperation()
                .responses(OASFactory.createAPIResponses()
                        .addAPIResponse("200", OASFactory.createAPIResponse().description("The mirror")));

        filter(Map.of("/v1/mirrors/{name}", describe));

        Map<String, APIResponse> responses = describe.getResponses().getAPIResponses();
        assertThat(responses).containsOnlyKeys("200", "400", "401", "403", "404", "503");
        assertThat(responses.get("400").getDescription()).isEqualTo("INVALID_CLUSTER_MIRROR_NAME");
        assertThat(responses.get("404").getDescription()).isEqualTo("UNKNOWN_CLUSTER_MIRROR");
        assertThat(responses.get("403").getDescription()).contains("on this mirror");
    }

    @Test
    void aDeclaredResponseShouldKeepItsDescriptionAndItsContent() {
        APIResponse ownBadRequest = OASFactory.createAPIResponse().description("INVALID_CONFIG: an unknown key");
        APIResponse ownContent = OASFactory.createAPIResponse()
                .description("UNKNOWN_CLUSTER_MIRROR only")
                .content(OASFactory.createContent()
                        .addMediaType("text/plain", OASFactory.createMediaType().schema(OASFactory.createSchema())));
        Operation alter = OASFactory.createOperation()
                .requestBody(OASFactory.createRequestBody())
                .responses(OASFactory.createAPIResponses()
                        .addAPIResponse("400", ownBadRequest)
                        .addAPIResponse("404", ownContent));

        filter(Map.of("/v1/mirrors/{name}/config", alter));

        assertThat(alter.getResponses().getAPIResponse("400").getDescription())
                .isEqualTo("INVALID_CONFIG: an unknown key");
        assertThat(alter.getResponses().getAPIResponse("400").getContent().getMediaType(Problem.MEDIA_TYPE))
                .isNotNull();
        assertThat(alter.getResponses().getAPIResponse("404").getContent().getMediaTypes())
                .containsOnlyKeys("text/plain");
    }

    @Test
    void pathsOutsideTheApiShouldBeLeftAlone() {
        Operation health = OASFactory.createOperation()
                .responses(OASFactory.createAPIResponses()
                        .addAPIResponse("200", OASFactory.createAPIResponse().description("UP")));

        filter(Map.of("/q/health", health));

        assertThat(health.getResponses().getAPIResponses()).containsOnlyKeys("200");
    }

    @Test
    void aDocumentWithoutTheProblemSchemaShouldFailTheBuild() {
        OpenAPI document = OASFactory.createOpenAPI().paths(OASFactory.createPaths());

        assertThatThrownBy(() -> new ProblemResponses().filterOpenAPI(document))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'Problem' schema");
    }

    private static void filter(Map<String, Operation> posts) {
        OpenAPI document = OASFactory.createOpenAPI()
                .components(OASFactory.createComponents().addSchema("Problem", OASFactory.createSchema()))
                .paths(OASFactory.createPaths());
        posts.forEach((path, operation) -> document.getPaths()
                .addPathItem(path, OASFactory.createPathItem().POST(operation)));
        new ProblemResponses().filterOpenAPI(document);
    }
}
