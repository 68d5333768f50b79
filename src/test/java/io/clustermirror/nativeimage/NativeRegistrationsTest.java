package io.clustermirror.nativeimage;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.quarkus.runtime.annotations.RegisterForReflection;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A native executable keeps for reflection only what is registered, and a missing class shows only there, at run time
 * (a state record that cannot be read back, a body serialized as {}): every record that Jackson reads or writes through
 * our own mappers, the {@code __mirror_state} records and the API bodies, is in {@link NativeRegistrations}.
 */
class NativeRegistrationsTest {

    @Test
    void everyStateRecordAndApiBodyShouldBeRegisteredForReflection() {
        List<Class<?>> registered = Arrays.asList(NativeRegistrations.class
                .getAnnotation(RegisterForReflection.class)
                .targets());

        List<String> bodies = Stream.concat(
                        records("io.clustermirror.state")
                                .filter(c -> c.getSimpleName().endsWith("Record")
                                        || c.getSimpleName().equals("StateKey")),
                        records("io.clustermirror.api")
                                .filter(c -> c.getEnclosingClass().isEmpty()))
                .map(JavaClass::getName)
                .toList();

        assertThat(bodies).hasSizeGreaterThan(25); // the scan found the packages
        assertThat(registered.stream().map(Class::getName)).containsAll(bodies);
    }

    private static Stream<JavaClass> records(String pkg) {
        return new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages(pkg).stream()
                        .filter(c -> c.getPackageName().equals(pkg))
                        .filter(c -> c.reflect().isRecord())
                        .filter(c -> !c.getModifiers().contains(com.tngtech.archunit.core.domain.JavaModifier.PRIVATE));
    }
}
