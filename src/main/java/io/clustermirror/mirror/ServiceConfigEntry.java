package io.clustermirror.mirror;

import java.util.List;
import java.util.Objects;

/**
 * One service setting as an operator reads it, the way Kafka's DescribeConfigs answers for a broker: the value in
 * force, the level it comes from, and every level that sets it, in precedence order (Kafka's synonyms; the last is
 * always the default). Deleting the dynamic value returns to the next synonym.
 */
public record ServiceConfigEntry(
        String name, String value, Source source, List<Synonym> synonyms, String documentation) {

    /** Where a value comes from, in precedence order. */
    public enum Source {
        /** Set at runtime ({@code PUT /v1/config/{key}}), kept in {@code __mirror_state}. */
        DYNAMIC,
        /** The application config ({@code application.properties}, {@code -D}, environment). */
        STATIC,
        /** The service's default. */
        DEFAULT
    }

    /** The value one level sets. */
    public record Synonym(Source source, String value) {
        public Synonym {
            Objects.requireNonNull(source, "source");
            Objects.requireNonNull(value, "value");
        }
    }

    public ServiceConfigEntry {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(source, "source");
        synonyms = List.copyOf(synonyms);
    }
}
