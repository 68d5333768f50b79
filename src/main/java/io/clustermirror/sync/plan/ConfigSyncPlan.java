package io.clustermirror.sync.plan;

import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The IncrementalAlterConfigs that bring a destination topic's configs in line with the source's: set what the
 * source sets (and the destination lacks or holds differently), delete what only the destination sets. Excluded
 * configs and the mirror-owned ones are never touched.
 */
public record ConfigSyncPlan(Map<String, String> set, Set<String> delete) {

    public ConfigSyncPlan {
        set = Map.copyOf(new TreeMap<>(set));
        delete = Set.copyOf(new TreeSet<>(delete));
    }

    /**
     * @param source the source topic's explicitly set (non-default) configs
     * @param destination the destination topic's explicitly set configs
     */
    public static ConfigSyncPlan diff(
            Map<String, String> source,
            Map<String, String> destination,
            Collection<String> excluded,
            Collection<String> owned) {
        Map<String, String> set = new TreeMap<>();
        Set<String> delete = new TreeSet<>();
        source.forEach((key, value) -> {
            if (!excluded.contains(key) && !owned.contains(key) && !Objects.equals(destination.get(key), value)) {
                set.put(key, value);
            }
        });
        destination.keySet().forEach(key -> {
            if (!source.containsKey(key) && !excluded.contains(key) && !owned.contains(key)) {
                delete.add(key);
            }
        });
        return new ConfigSyncPlan(set, delete);
    }

    public boolean isEmpty() {
        return set.isEmpty() && delete.isEmpty();
    }
}
