package io.clustermirror.api;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.ws.rs.HttpMethod;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every REST method names the ClusterMirror operation it performs: the access filter fails closed on the others. */
class ClusterMirrorAccessTest {

    @Test
    void everyRestMethodShouldNameItsOperation() {
        List<Method> rest = List.of(
                        MirrorResource.class,
                        TopicResource.class,
                        ServiceConfigResource.class,
                        VerificationResource.class)
                .stream()
                .flatMap(c -> Arrays.stream(c.getDeclaredMethods()))
                .filter(m -> Arrays.stream(m.getAnnotations())
                        .anyMatch(a -> a.annotationType().isAnnotationPresent(HttpMethod.class)))
                .toList();

        assertThat(rest).hasSize(18);
        assertThat(rest)
                .allSatisfy(m -> assertThat(m.getAnnotation(ClusterMirrorAccess.class))
                        .as(m.getName())
                        .isNotNull());
    }
}
