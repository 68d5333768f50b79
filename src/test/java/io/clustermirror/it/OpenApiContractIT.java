package io.clustermirror.it;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The committed {@code openapi/openapi.yaml} is the contract: it must equal what the service serves.
 * After a deliberate API change, refresh it with {@code cp target/openapi/openapi.yaml openapi/}.
 */
class OpenApiContractIT extends ServiceIT {

    @Test
    void committedSpecShouldEqualTheServedOne() throws Exception {
        String committed = Files.readString(Path.of(System.getProperty("testbed.openapi.file")));
        String served = given().baseUri(bed.service().baseUri().toString())
                .get("/q/openapi?format=yaml")
                .then()
                .statusCode(200)
                .extract()
                .asString();

        ObjectMapper yaml = new ObjectMapper(new YAMLFactory());

        // compared as documents: key order is not part of the contract
        assertThat(yaml.readTree(served))
                .as("served /q/openapi differs from the committed openapi/openapi.yaml; if the change is intended run: "
                        + "./mvnw package -DskipTests && cp target/openapi/openapi.yaml openapi/")
                .isEqualTo(yaml.readTree(committed));
    }

    @Test
    void everyOperationShouldHaveASummaryAndDocumentedErrors() throws Exception {
        JsonNode spec = servedJson();
        List<String> problems = new ArrayList<>();
        spec.path("paths")
                .properties()
                .forEach(path -> path.getValue().properties().forEach(op -> {
                    String id = op.getKey().toUpperCase() + " " + path.getKey();
                    if (op.getValue().path("summary").asText().isBlank()) {
                        problems.add(id + " has no summary");
                    }
                    boolean documentsErrors = false;
                    for (Iterator<String> codes =
                                    op.getValue().path("responses").fieldNames();
                            codes.hasNext(); ) {
                        String code = codes.next();
                        if (code.startsWith("4") || code.startsWith("5")) {
                            documentsErrors = true;
                        }
                    }
                    if (!documentsErrors) {
                        problems.add(id + " documents no error response");
                    }
                }));
        assertThat(problems).isEmpty();
        assertThat(spec.path("paths").size()).isGreaterThanOrEqualTo(3);
    }

    /** Generated clients name their methods after these: one per operation, each once (decisions §39). */
    @Test
    void everyOperationShouldHaveItsOwnOperationId() throws Exception {
        List<String> ids = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        servedJson()
                .path("paths")
                .properties()
                .forEach(path -> path.getValue().properties().forEach(op -> {
                    String id = op.getValue().path("operationId").asText();
                    if (id.isBlank()) {
                        missing.add(op.getKey().toUpperCase() + " " + path.getKey());
                    } else {
                        ids.add(id);
                    }
                }));
        assertThat(missing).isEmpty();
        assertThat(ids)
                .doesNotHaveDuplicates()
                .contains("createClusterMirror", "stopMirrorTopics", "describeMirrorTopic", "listServiceConfigs");
    }

    /** api/ProblemResponses: the standard problems on every operation, every error as problem+json. */
    @Test
    void everyErrorResponseShouldBeAProblem() throws Exception {
        List<String> problems = new ArrayList<>();
        servedJson()
                .path("paths")
                .properties()
                .forEach(path -> path.getValue().properties().forEach(op -> {
                    String id = op.getKey().toUpperCase() + " " + path.getKey();
                    JsonNode responses = op.getValue().path("responses");
                    for (String standard : List.of("401", "403", "503")) {
                        if (!responses.has(standard)) {
                            problems.add(id + " lacks " + standard);
                        }
                    }
                    responses.properties().forEach(response -> {
                        boolean error = !response.getKey().startsWith("2");
                        String ref = response.getValue()
                                .path("content")
                                .path("application/problem+json")
                                .path("schema")
                                .path("$ref")
                                .asText();
                        if (error && !ref.equals("#/components/schemas/Problem")) {
                            problems.add(id + " " + response.getKey() + " is not problem+json");
                        }
                    });
                }));
        assertThat(problems).isEmpty();
    }

    @Test
    void everySchemaPropertyShouldHaveAnExample() throws Exception {
        JsonNode schemas = servedJson().path("components").path("schemas");
        List<String> missing = new ArrayList<>();
        for (Map.Entry<String, JsonNode> schema : schemas.properties()) {
            for (Map.Entry<String, JsonNode> property :
                    schema.getValue().path("properties").properties()) {
                JsonNode value = property.getValue();
                boolean described = value.has("example")
                        || value.has("examples")
                        || value.has("$ref")
                        || value.path("items").has("$ref");
                if (!described) {
                    missing.add(schema.getKey() + "." + property.getKey());
                }
            }
        }
        assertThat(schemas.size()).isGreaterThanOrEqualTo(5);
        assertThat(missing).isEmpty();
    }

    private static JsonNode servedJson() throws Exception {
        String json = given().baseUri(bed.service().baseUri().toString())
                .accept("application/json")
                .get("/q/openapi?format=json")
                .then()
                .statusCode(200)
                .extract()
                .asString();
        return new ObjectMapper().readTree(json);
    }
}
