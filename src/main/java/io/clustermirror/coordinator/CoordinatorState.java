package io.clustermirror.coordinator;

import io.clustermirror.mirror.AclEntry;
import io.clustermirror.mirror.Frozen;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.PartitionStatus;
import io.clustermirror.mirror.TopicDivergence;
import io.clustermirror.mirror.TopicPromotion;
import io.clustermirror.state.StateSnapshot;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * Everything the coordinator knows, as one immutable value: the mirrors, each mirror's partition statuses, the ACLs
 * each mirror created, its topics' promotions and divergences, and the service settings changed at runtime. A change is written to the state topic first, then a new value is swapped in, so readers on
 * any thread see one consistent state without waiting.
 */
record CoordinatorState(
        Map<String, Mirror> mirrors,
        Map<String, Map<MirrorPartition, PartitionStatus>> partitions,
        Map<String, Set<AclEntry>> createdAcls,
        Map<String, Map<String, TopicPromotion>> promotions,
        Map<String, Map<String, TopicDivergence>> divergences,
        Map<String, String> serviceConfigs,
        Map<String, Map<MirrorPartition, Long>> verified) {

    static final CoordinatorState EMPTY =
            new CoordinatorState(Map.of(), Map.of(), Map.of(), Map.of(), Map.of(), Map.of(), Map.of());

    CoordinatorState {
        mirrors = Map.copyOf(mirrors);
        partitions = Map.copyOf(partitions);
        createdAcls = Map.copyOf(createdAcls);
        promotions = Map.copyOf(promotions);
        divergences = Map.copyOf(divergences);
        serviceConfigs = Map.copyOf(serviceConfigs);
        verified = Map.copyOf(verified);
    }

    /** The state a replay of the state topic yields. */
    static CoordinatorState of(StateSnapshot snapshot) {
        return new CoordinatorState(
                snapshot.mirrors(),
                snapshot.partitions(),
                snapshot.createdAcls(),
                snapshot.promotions(),
                snapshot.divergences(),
                snapshot.serviceConfigs(),
                snapshot.verified());
    }

    /** The mirror's partitions (none for an unknown mirror). */
    Map<MirrorPartition, PartitionStatus> partitions(String mirror) {
        return partitions.getOrDefault(mirror, Map.of());
    }

    /** The mirror's topic promotions, by topic (none for an unknown mirror). */
    Map<String, TopicPromotion> promotions(String mirror) {
        return promotions.getOrDefault(mirror, Map.of());
    }

    /** What the mirror's topics held when last recreated for diverging, by topic. */
    Map<String, TopicDivergence> divergences(String mirror) {
        return divergences.getOrDefault(mirror, Map.of());
    }

    /** With the topic's divergence recorded (replacing an earlier one). */
    CoordinatorState withDivergence(String mirror, TopicDivergence divergence) {
        Map<String, TopicDivergence> ofMirror = new HashMap<>(divergences(mirror));
        ofMirror.put(divergence.topic(), divergence);
        Map<String, Map<String, TopicDivergence>> next = new HashMap<>(divergences);
        next.put(mirror, Frozen.map(ofMirror));
        return new CoordinatorState(mirrors, partitions, createdAcls, promotions, next, serviceConfigs, verified);
    }

    Set<AclEntry> createdAcls(String mirror) {
        return createdAcls.getOrDefault(mirror, Set.of());
    }

    /** With the mirror added or replaced. */
    CoordinatorState with(Mirror mirror) {
        Map<String, Mirror> next = new HashMap<>(mirrors);
        next.put(mirror.name(), mirror);
        return new CoordinatorState(next, partitions, createdAcls, promotions, divergences, serviceConfigs, verified);
    }

    /** Without the mirror, its partitions and its ACL bookkeeping. */
    CoordinatorState without(String mirror) {
        Map<String, Mirror> nextMirrors = new HashMap<>(mirrors);
        nextMirrors.remove(mirror);
        Map<String, Map<MirrorPartition, PartitionStatus>> nextPartitions = new HashMap<>(partitions);
        nextPartitions.remove(mirror);
        Map<String, Set<AclEntry>> nextAcls = new HashMap<>(createdAcls);
        nextAcls.remove(mirror);
        Map<String, Map<String, TopicPromotion>> nextPromotions = new HashMap<>(promotions);
        nextPromotions.remove(mirror);
        Map<String, Map<String, TopicDivergence>> nextDivergences = new HashMap<>(divergences);
        nextDivergences.remove(mirror);
        Map<String, Map<MirrorPartition, Long>> nextVerified = new HashMap<>(verified);
        nextVerified.remove(mirror);
        return new CoordinatorState(
                nextMirrors, nextPartitions, nextAcls, nextPromotions, nextDivergences, serviceConfigs, nextVerified);
    }

    /**
     * With what state partitions just taken over hold: their mirrors and what belongs to them (records of a mirror all
     * live in its one partition, so nothing here is replaced), and the service settings if the part has any.
     */
    CoordinatorState merge(CoordinatorState part) {
        Map<String, String> configs = part.serviceConfigs.isEmpty() ? serviceConfigs : part.serviceConfigs;
        return new CoordinatorState(
                union(mirrors, part.mirrors),
                union(partitions, part.partitions),
                union(createdAcls, part.createdAcls),
                union(promotions, part.promotions),
                union(divergences, part.divergences),
                configs,
                union(verified, part.verified));
    }

    private static <V> Map<String, V> union(Map<String, V> mine, Map<String, V> theirs) {
        Map<String, V> all = new HashMap<>(mine);
        all.putAll(theirs);
        return all;
    }

    /** Without these mirrors and everything of theirs (their state partitions went to another instance). */
    CoordinatorState withoutMirrors(Set<String> names) {
        CoordinatorState left = this;
        for (String name : names) {
            left = left.without(name);
        }
        return left;
    }

    /** With these partition statuses of the mirror changed (or added); the others as they are. */
    CoordinatorState withPartitions(String mirror, Map<MirrorPartition, PartitionStatus> changed) {
        Map<MirrorPartition, PartitionStatus> ofMirror = new HashMap<>(partitions(mirror));
        ofMirror.putAll(changed);
        Map<String, Map<MirrorPartition, PartitionStatus>> next = new HashMap<>(partitions);
        // this method's own copy, wrapped rather than copied again: a start of 10,000 partitions makes 10,000 of these
        // changes, one per partition leaving LOG_TRUNCATION, each copying the mirror's map (JFR, bench/partitions.sh)
        next.put(mirror, Collections.unmodifiableMap(ofMirror));
        return new CoordinatorState(mirrors, next, createdAcls, promotions, divergences, serviceConfigs, verified);
    }

    CoordinatorState withCreatedAcls(String mirror, Set<AclEntry> acls) {
        Map<String, Set<AclEntry>> next = new HashMap<>(createdAcls);
        next.put(mirror, Set.copyOf(acls));
        return new CoordinatorState(mirrors, partitions, next, promotions, divergences, serviceConfigs, verified);
    }

    /** With a service setting's runtime value set, or removed when {@code value} is null. */
    CoordinatorState withServiceConfig(String name, String value) {
        Map<String, String> next = new HashMap<>(serviceConfigs);
        if (value == null) {
            next.remove(name);
        } else {
            next.put(name, value);
        }
        return new CoordinatorState(mirrors, partitions, createdAcls, promotions, divergences, next, verified);
    }

    /** With the service settings another instance wrote (it owns their state partition). */
    CoordinatorState withServiceConfigs(Map<String, String> configs) {
        return new CoordinatorState(mirrors, partitions, createdAcls, promotions, divergences, configs, verified);
    }

    /** With these topic promotions of the mirror changed (a null value removes the topic's). */
    CoordinatorState withPromotions(String mirror, Map<String, TopicPromotion> changed) {
        Map<String, TopicPromotion> ofMirror = new HashMap<>(promotions(mirror));
        changed.forEach((topic, promotion) -> {
            if (promotion == null) {
                ofMirror.remove(topic);
            } else {
                ofMirror.put(topic, promotion);
            }
        });
        Map<String, Map<String, TopicPromotion>> next = new HashMap<>(promotions);
        next.put(mirror, Frozen.map(ofMirror));
        return new CoordinatorState(mirrors, partitions, createdAcls, next, divergences, serviceConfigs, verified);
    }

    /** Where a verification last confirmed each of the mirror's partitions identical up to (exclusive). */
    Map<MirrorPartition, Long> verified(String mirror) {
        return verified.getOrDefault(mirror, Map.of());
    }

    /** Without these partitions' verified-up-to offsets. */
    CoordinatorState withoutVerified(String mirror, Collection<MirrorPartition> forgotten) {
        Map<MirrorPartition, Long> ofMirror = new HashMap<>(verified(mirror));
        forgotten.forEach(ofMirror::remove);
        Map<String, Map<MirrorPartition, Long>> next = new HashMap<>(verified);
        next.put(mirror, Frozen.map(ofMirror));
        return new CoordinatorState(mirrors, partitions, createdAcls, promotions, divergences, serviceConfigs, next);
    }

    /** With these partitions' verified-up-to offsets changed (or added). */
    CoordinatorState withVerified(String mirror, Map<MirrorPartition, Long> changed) {
        Map<MirrorPartition, Long> ofMirror = new HashMap<>(verified(mirror));
        ofMirror.putAll(changed);
        Map<String, Map<MirrorPartition, Long>> next = new HashMap<>(verified);
        next.put(mirror, Frozen.map(ofMirror));
        return new CoordinatorState(mirrors, partitions, createdAcls, promotions, divergences, serviceConfigs, next);
    }
}
