package io.clustermirror.mirror;

import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Unmodifiable copies for collections keyed by partitions or topic names, in place of {@code Map.copyOf} and
 * {@code Set.copyOf}. The JDK's immutable collections probe linearly from the key's raw {@code hashCode}, and the hash
 * codes of partitions ({@code 31 * topic.hashCode() + partition}) and of names that differ in their last characters
 * lie close together: they collide in runs. At 10,000 partitions one look-up in a view of the leaders compared
 * hundreds of keys, and the data plane's rounds over its partitions took 50 to 80 ms instead of a few
 * (bench/partitions.sh, profiled with JFR). {@link HashMap} spreads the hash and bounds a bin by a tree.
 */
public final class Frozen {

    private Frozen() {}

    /** An unmodifiable hashed copy of {@code map}. */
    public static <K, V> Map<K, V> map(Map<? extends K, ? extends V> map) {
        return map.isEmpty() ? Map.of() : Collections.unmodifiableMap(new HashMap<>(map));
    }

    /** An unmodifiable hashed copy of {@code elements}. */
    public static <E> Set<E> set(Collection<? extends E> elements) {
        return elements.isEmpty() ? Set.of() : Collections.unmodifiableSet(new HashSet<>(elements));
    }
}
