package io.clustermirror.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class OwnershipPlanTest {

    private static final int PARTITIONS = 50;

    @Test
    void aLoneMemberGetsEveryPartition() {
        Map<String, Set<Integer>> plan = OwnershipPlan.assign(PARTITIONS, Map.of("a", Set.of()), Map.of());

        assertThat(plan).containsOnlyKeys("a");
        assertThat(plan.get("a")).hasSize(PARTITIONS);
    }

    @Test
    void thirtyMirrorsHashedOntoFiftyPartitionsSpreadTenPlusOrMinusTwoOverThreeMembers() {
        Random random = new Random(42);
        for (int run = 0; run < 200; run++) {
            Map<Integer, Integer> weights = new HashMap<>();
            for (int mirror = 0; mirror < 30; mirror++) {
                weights.merge(random.nextInt(PARTITIONS), 1, Integer::sum);
            }
            // the three members start at once (nothing owned), or one owned everything and two joined
            Map<String, Set<Integer>> fresh = converge(Map.of("a", Set.of(), "b", Set.of(), "c", Set.of()), weights);
            Map<String, Set<Integer>> joined = converge(Map.of("a", all(), "b", Set.of(), "c", Set.of()), weights);

            for (Map<String, Set<Integer>> plan : List.of(fresh, joined)) {
                plan.values().forEach(ps -> assertThat(mirrors(ps, weights)).isBetween(8, 12));
                assertThat(plan.values().stream().mapToInt(Set::size).sum()).isEqualTo(PARTITIONS);
            }
        }
    }

    @Test
    void aPartitionStaysWithItsOwnerWhenNothingIsToGain() {
        Map<Integer, Integer> weights = Map.of(1, 1, 30, 1);
        Map<String, Set<Integer>> owned = new TreeMap<>();
        owned.put("a", range(0, 25));
        owned.put("b", range(25, 50));

        assertThat(OwnershipPlan.assign(PARTITIONS, owned, weights)).isEqualTo(owned);
    }

    @Test
    void aPartitionThatMovesIsWithheldFromEveryoneUntilItsOwnerGaveItUp() {
        Map<String, Set<Integer>> owned = new TreeMap<>();
        owned.put("a", all());
        owned.put("b", Set.of());

        Map<String, Set<Integer>> first = OwnershipPlan.assign(PARTITIONS, owned, Map.of());

        // the cooperative protocol: b gets nothing this round; a keeps half, and gives the rest up
        assertThat(first.get("b")).isEmpty();
        assertThat(first.get("a")).hasSize(25);

        Map<String, Set<Integer>> second = OwnershipPlan.assign(PARTITIONS, first, Map.of());

        assertThat(second.get("a")).isEqualTo(first.get("a"));
        assertThat(second.get("b")).hasSize(25).doesNotContainAnyElementsOf(first.get("a"));
    }

    @Test
    void aLeavingMembersPartitionsGoToTheOthersHeaviestFirst() {
        Map<Integer, Integer> weights = Map.of(0, 5, 1, 1);
        Map<String, Set<Integer>> owned = new TreeMap<>();
        owned.put("a", range(2, 26));
        owned.put("b", range(26, 50));

        Map<String, Set<Integer>> plan = OwnershipPlan.assign(PARTITIONS, owned, weights);

        assertThat(plan.get("a")).contains(0);
        assertThat(plan.get("b")).contains(1);
        assertThat(plan.get("a").size() + plan.get("b").size()).isEqualTo(PARTITIONS);
    }

    @Test
    void aPartitionClaimedTwiceStaysWithOneMember() {
        Map<String, Set<Integer>> owned = new TreeMap<>();
        owned.put("a", Set.of(7));
        owned.put("b", Set.of(7));

        Map<String, Set<Integer>> plan = OwnershipPlan.assign(PARTITIONS, owned, Map.of());

        assertThat(plan.get("a")).contains(7);
        assertThat(plan.get("b")).doesNotContain(7);
    }

    /** Rounds of the cooperative protocol until the plan holds still: each round's answer is the next round's owned. */
    private static Map<String, Set<Integer>> converge(Map<String, Set<Integer>> owned, Map<Integer, Integer> weights) {
        Map<String, Set<Integer>> current = new TreeMap<>(owned);
        for (int round = 0; round < 10; round++) {
            Map<String, Set<Integer>> next = OwnershipPlan.assign(PARTITIONS, current, weights);
            if (next.equals(current)) {
                return current;
            }
            current = next;
        }
        throw new AssertionError("no stable plan after 10 rounds: " + current);
    }

    private static int mirrors(Set<Integer> partitions, Map<Integer, Integer> weights) {
        return partitions.stream().mapToInt(p -> weights.getOrDefault(p, 0)).sum();
    }

    private static Set<Integer> all() {
        return range(0, PARTITIONS);
    }

    private static Set<Integer> range(int from, int to) {
        return IntStream.range(from, to).boxed().collect(Collectors.toCollection(HashSet::new));
    }
}
