package io.clustermirror.coordinator;

import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.IntStream;

/**
 * Which member of the state group owns which partition of {@code __mirror_state}: the group leader's assignment
 * ({@link MirrorStateAssignor}), as a pure function. A partition's weight is the number of mirrors whose records live in
 * it, so the members end up with about as many mirrors each, not only as many partitions (hashing 30 mirror names onto
 * 50 partitions gives each of three members 10 ± 5 mirrors by partition count alone).
 *
 * <ol>
 *   <li>Sticky: a partition stays with the member that owns it.
 *   <li>Partitions without a live owner go, heaviest first, to the member with the fewest mirrors (then partitions).
 *   <li>While the most loaded member holds a partition lighter than its lead over the least loaded, the heaviest such
 *       partition moves (each move lowers the spread, so this ends); then partitions without mirrors move from the
 *       member with the most partitions to the one with the fewest while they differ by more than one.
 *   <li>Cooperative: a partition that moves from one live member to another is withheld this round. Its owner gives it
 *       up (stopping its mirrors), which starts the next rebalance, where it is unowned and placed.
 * </ol>
 */
final class OwnershipPlan {

    private OwnershipPlan() {}

    /**
     * @param partitions the state topic's partition count
     * @param owned each member (by member id) with the partitions it owns now; a partition claimed twice stays with the
     *     first member in id order
     * @param weights mirrors per partition (a partition left out weighs 0)
     * @return each member with the partitions it gets this round
     */
    static Map<String, Set<Integer>> assign(
            int partitions, Map<String, Set<Integer>> owned, Map<Integer, Integer> weights) {
        Map<String, Set<Integer>> target = new TreeMap<>();
        Map<Integer, String> ownerNow = new HashMap<>();
        new TreeMap<>(owned).forEach((member, claims) -> {
            Set<Integer> kept = new TreeSet<>();
            for (int p : claims) {
                if (p >= 0 && p < partitions && ownerNow.putIfAbsent(p, member) == null) {
                    kept.add(p);
                }
            }
            target.put(member, kept);
        });
        if (target.isEmpty()) {
            return Map.of();
        }
        Load load = new Load(target, weights);
        IntStream.range(0, partitions)
                .filter(p -> !ownerNow.containsKey(p))
                .boxed()
                .sorted(Comparator.comparingInt((Integer p) -> -load.weight(p)).thenComparing(p -> p))
                .forEach(p -> target.get(load.lightest()).add(p));
        load.spreadMirrors();
        load.spreadEmptyPartitions();
        Map<String, Set<Integer>> round = new TreeMap<>();
        target.forEach((member, ps) -> {
            Set<Integer> mine = new TreeSet<>();
            for (int p : ps) {
                String now = ownerNow.get(p);
                if (now == null || now.equals(member)) {
                    mine.add(p);
                }
            }
            round.put(member, mine);
        });
        return round;
    }

    /** The members' partitions and what they weigh, as the plan changes them. */
    private record Load(Map<String, Set<Integer>> target, Map<Integer, Integer> weights) {

        int weight(int partition) {
            return weights.getOrDefault(partition, 0);
        }

        int mirrors(String member) {
            return target.get(member).stream().mapToInt(this::weight).sum();
        }

        private Comparator<String> byLoad() {
            return Comparator.comparingInt(this::mirrors)
                    .thenComparingInt(m -> target.get(m).size())
                    .thenComparing(Comparator.naturalOrder());
        }

        String lightest() {
            return target.keySet().stream().min(byLoad()).orElseThrow();
        }

        void spreadMirrors() {
            while (true) {
                List<String> members = target.keySet().stream().sorted(byLoad()).toList();
                String light = members.get(0);
                String heavy = members.get(members.size() - 1);
                int lead = mirrors(heavy) - mirrors(light);
                Integer move = target.get(heavy).stream()
                        .filter(p -> weight(p) > 0 && weight(p) < lead)
                        .max(Comparator.comparingInt(this::weight).thenComparing(p -> -p))
                        .orElse(null);
                if (move == null) {
                    return;
                }
                target.get(heavy).remove(move);
                target.get(light).add(move);
            }
        }

        void spreadEmptyPartitions() {
            Comparator<String> byCount = Comparator.comparingInt(
                            (String m) -> target.get(m).size())
                    .thenComparing(Comparator.naturalOrder());
            while (true) {
                List<String> members = target.keySet().stream().sorted(byCount).toList();
                String few = members.get(0);
                String most = members.get(members.size() - 1);
                if (target.get(most).size() - target.get(few).size() <= 1) {
                    return;
                }
                Integer move = target.get(most).stream()
                        .filter(p -> weight(p) == 0)
                        .max(Comparator.naturalOrder())
                        .orElse(null);
                if (move == null) {
                    return;
                }
                target.get(most).remove(move);
                target.get(few).add(move);
            }
        }
    }
}
