package io.clustermirror.mirror;

import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * A mirror's progress over its MIRRORING partitions: the total lag, the summed rates, the mirror's ETA (the slowest
 * partition's) and its slowest partitions.
 *
 * @param lag records behind, summed over the partitions whose lag is known
 * @param etaSeconds the largest ETA of a partition; 0 when every one is caught up; null when a partition's is unknown
 *     or not shrinking, or none is MIRRORING
 * @param slowest the partitions that are not caught up, slowest first: those not catching up (or unknown) by lag, then
 *     by ETA, then by lag
 */
public record MirrorProgress(
        long lag,
        double bytesPerSecond,
        double recordsPerSecond,
        Integer etaSeconds,
        int mirroringPartitions,
        List<MirrorProgress.Partition> slowest) {

    /** How many of the slowest partitions the summary names. */
    public static final int SLOWEST = 5;

    /** One MIRRORING partition's share. */
    public record Partition(MirrorPartition partition, PartitionProgress progress) {
        public Partition {
            Objects.requireNonNull(partition, "partition");
            Objects.requireNonNull(progress, "progress");
        }

        boolean caughtUp() {
            return Integer.valueOf(0).equals(progress.etaSeconds());
        }
    }

    public MirrorProgress {
        slowest = List.copyOf(slowest);
    }

    /** The summary of the mirror's MIRRORING partitions, naming at most {@code top} of the slowest. */
    public static MirrorProgress of(Collection<Partition> mirroring, int top) {
        long lag = 0;
        double bytes = 0;
        double records = 0;
        Integer eta = mirroring.isEmpty() ? null : 0;
        boolean unknown = false;
        for (Partition p : mirroring) {
            PartitionProgress progress = p.progress();
            lag += Math.max(0, progress.lag());
            if (progress.rates() != null) {
                bytes += progress.rates().bytesPerSecond();
                records += progress.rates().recordsPerSecond();
            }
            if (progress.etaSeconds() == null) {
                unknown = true;
            } else if (eta != null) {
                eta = Math.max(eta, progress.etaSeconds());
            }
        }
        List<Partition> slowest = mirroring.stream()
                .filter(p -> !p.caughtUp())
                .sorted(SLOWEST_FIRST)
                .limit(top)
                .toList();
        return new MirrorProgress(lag, round(bytes), round(records), unknown ? null : eta, mirroring.size(), slowest);
    }

    private static final Comparator<Partition> SLOWEST_FIRST = Comparator.<Partition, Boolean>comparing(
                    p -> p.progress().etaSeconds() != null)
            .thenComparing(
                    p -> p.progress().etaSeconds() == null ? 0 : p.progress().etaSeconds(), Comparator.reverseOrder())
            .thenComparing(p -> p.progress().lag(), Comparator.reverseOrder())
            .thenComparing(Partition::partition);

    private static double round(double value) {
        return Math.round(value * 10) / 10.0;
    }
}
