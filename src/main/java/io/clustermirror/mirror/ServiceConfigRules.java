package io.clustermirror.mirror;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The service settings that may change while the service runs ({@code /v1/config}), what each accepts, and how its
 * value resolves: a value set at runtime (DYNAMIC) over the application config's (STATIC) over the default, as a Kafka
 * broker's dynamic configs resolve. Pure: the coordinator keeps the dynamic values, the caller gives the static ones.
 */
public final class ServiceConfigRules {

    public static final String REPLICATION_THROTTLED_RATE = "mirror.replication.throttled.rate";
    /** No limit: Kafka's value for an unthrottled replication rate ({@code Long.MAX_VALUE}). */
    public static final long UNLIMITED = Long.MAX_VALUE;

    private enum Setting {
        REPLICATION_THROTTLED_RATE(
                ServiceConfigRules.REPLICATION_THROTTLED_RATE,
                Long.toString(UNLIMITED),
                "Bytes per second this instance fetches from every source, all mirrors together (KIP-1279); "
                        + UNLIMITED + " is unlimited") {
            @Override
            String normalize(String value) {
                long rate;
                try {
                    rate = Long.parseLong(value.trim());
                } catch (NumberFormatException e) {
                    rate = 0;
                }
                if (rate <= 0) {
                    throw new MirrorException(
                            MirrorError.INVALID_CONFIG,
                            name + " must be a positive whole number of bytes per second (" + UNLIMITED
                                    + ": unlimited), not '" + value + "'",
                            name);
                }
                return Long.toString(rate);
            }
        };

        final String name;
        final String defaultValue;
        final String documentation;

        Setting(String name, String defaultValue, String documentation) {
            this.name = name;
            this.defaultValue = defaultValue;
            this.documentation = documentation;
        }

        /** The value as kept and shown; INVALID_CONFIG naming the key when it is not one this setting takes. */
        abstract String normalize(String value);
    }

    private ServiceConfigRules() {}

    /** The value as it is kept (e.g. {@code " 2097152"} as {@code "2097152"}); INVALID_CONFIG naming the key otherwise. */
    public static String validate(String key, String value) {
        return setting(key).normalize(value == null ? "" : value);
    }

    /** INVALID_CONFIG naming the key unless it is a setting that changes at runtime. */
    public static void requireKnown(String key) {
        setting(key);
    }

    /**
     * Every setting that changes at runtime, sorted by name.
     *
     * @param dynamic the values set at runtime, by key
     * @param statics the application config's values, by key (already validated)
     */
    public static List<ServiceConfigEntry> describe(Map<String, String> dynamic, Map<String, String> statics) {
        return Arrays.stream(Setting.values())
                .map(s -> resolve(s.name, dynamic, statics))
                .sorted(Comparator.comparing(ServiceConfigEntry::name))
                .toList();
    }

    /** The setting's value in force and where it comes from. */
    public static ServiceConfigEntry resolve(String key, Map<String, String> dynamic, Map<String, String> statics) {
        Setting setting = setting(key);
        List<ServiceConfigEntry.Synonym> synonyms = new ArrayList<>();
        Optional.ofNullable(dynamic.get(key))
                .ifPresent(v -> synonyms.add(new ServiceConfigEntry.Synonym(ServiceConfigEntry.Source.DYNAMIC, v)));
        Optional.ofNullable(statics.get(key))
                .ifPresent(v -> synonyms.add(new ServiceConfigEntry.Synonym(ServiceConfigEntry.Source.STATIC, v)));
        synonyms.add(new ServiceConfigEntry.Synonym(ServiceConfigEntry.Source.DEFAULT, setting.defaultValue));
        ServiceConfigEntry.Synonym inForce = synonyms.get(0);
        return new ServiceConfigEntry(key, inForce.value(), inForce.source(), synonyms, setting.documentation);
    }

    private static Setting setting(String key) {
        for (Setting setting : Setting.values()) {
            if (setting.name.equals(key)) {
                return setting;
            }
        }
        throw new MirrorException(
                MirrorError.INVALID_CONFIG,
                "Unknown service config '" + key + "'; the settings that change at runtime: "
                        + String.join(
                                ", ",
                                Arrays.stream(Setting.values()).map(s -> s.name).toList()),
                key);
    }
}
