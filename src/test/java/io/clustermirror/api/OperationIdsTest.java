package io.clustermirror.api;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.ws.rs.HttpMethod;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.junit.jupiter.api.Test;

/**
 * Every REST method names its operation for generated clients after the KIP's operations: a verb and the KIP's noun
 * in lower camel case (createClusterMirror, stopMirrorTopics, ...), each name once.
 */
class OperationIdsTest {

    @Test
    void everyRestMethodShouldHaveItsOwnOperationIdInTheKipStyle() {
        List<String> ids = List.of(
                        MirrorResource.class,
                        TopicResource.class,
                        ServiceConfigResource.class,
                        VerificationResource.class)
                .stream()
                .flatMap(c -> Arrays.stream(c.getDeclaredMethods()))
                .filter(m -> Arrays.stream(m.getAnnotations())
                        .anyMatch(a -> a.annotationType().isAnnotationPresent(HttpMethod.class)))
                .map(OperationIdsTest::operationId)
                .toList();

        assertThat(ids).hasSize(18).doesNotHaveDuplicates().allMatch(id -> id.matches("[a-z]+([A-Z][a-z]+)+"));
        assertThat(ids)
                .containsExactlyInAnyOrder(
                        "createClusterMirror",
                        "listClusterMirrors",
                        "describeClusterMirror",
                        "alterClusterMirrorConfig",
                        "deleteClusterMirror",
                        "startMirrorTopics",
                        "stopMirrorTopics",
                        "pauseMirrorTopics",
                        "resumeMirrorTopics",
                        "recoverMirrorTopics",
                        "promoteMirrorTopics",
                        "describeMirrorTopic",
                        "listServiceConfigs",
                        "alterServiceConfig",
                        "resetServiceConfig",
                        "startVerification",
                        "listVerifications",
                        "describeVerification");
    }

    private static String operationId(Method method) {
        Operation operation = method.getAnnotation(Operation.class);
        assertThat(operation).as(method.getName() + " has @Operation").isNotNull();
        return operation.operationId();
    }
}
