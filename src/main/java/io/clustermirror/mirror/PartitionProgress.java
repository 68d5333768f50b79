package io.clustermirror.mirror;

import java.util.Locale;
import java.util.Objects;

/**
 * What describe says of how far a partition is: its last LOG_TRUNCATION check ({@code truncation}, null before the
 * first), and while MIRRORING the window's rates and the time to catch up. {@link #sentence()} words it: the only
 * place describe's free-text {@code progress} comes from.
 *
 * @param lag records the destination is behind (-1: unknown)
 * @param rates the data plane's rates over the window; null while the partition is not in the data plane or the window
 *     is too short
 * @param etaSeconds see {@link CatchUpWindow#etaSeconds}; null unless MIRRORING
 */
public record PartitionProgress(
        MirrorPartitionState state,
        long lag,
        TruncationProgress truncation,
        CatchUpWindow.Rates rates,
        Integer etaSeconds) {

    public PartitionProgress {
        Objects.requireNonNull(state, "state");
    }

    /** The progress of a partition in {@code state}; rates count only while MIRRORING (then the ETA is worked out). */
    public static PartitionProgress of(
            MirrorPartitionState state, long lag, TruncationProgress truncation, CatchUpWindow.Rates rates) {
        if (state != MirrorPartitionState.MIRRORING) {
            return new PartitionProgress(state, lag, truncation, null, null);
        }
        return new PartitionProgress(state, lag, truncation, rates, CatchUpWindow.etaSeconds(lag, rates));
    }

    /** Bytes per second acknowledged by the destination over the window; null when not measured. */
    public Double bytesPerSecond() {
        return rates == null ? null : round(rates.bytesPerSecond());
    }

    /** Records per second acknowledged by the destination over the window; null when not measured. */
    public Double recordsPerSecond() {
        return rates == null ? null : round(rates.recordsPerSecond());
    }

    /** Whether a LOG_TRUNCATION check is what the partition is doing now (not just what it did last). */
    private boolean checking() {
        return state == MirrorPartitionState.LOG_TRUNCATION
                || state == MirrorPartitionState.EPOCH_FENCING
                || (state == MirrorPartitionState.MIRRORING && truncation != null && !truncation.complete());
    }

    /**
     * The human sentence: the check under way (LOG_TRUNCATION, EPOCH_FENCING, a resume's check), else while MIRRORING
     * the rates and the ETA, else the last check's outcome; null when there is nothing to say.
     */
    public String sentence() {
        if (checking() || state != MirrorPartitionState.MIRRORING) {
            return truncation == null ? null : truncation.sentence();
        }
        StringBuilder text = new StringBuilder("mirroring");
        if (rates == null) {
            text.append(" (rates not measured yet)");
        } else {
            text.append(String.format(
                    Locale.ROOT,
                    " %s records/s, %s/s over the last %d s",
                    number(rates.recordsPerSecond()),
                    bytes(rates.bytesPerSecond()),
                    Math.round(rates.spanMs() / 1000.0)));
        }
        if (etaSeconds != null && etaSeconds == 0) {
            text.append(lag == 0 ? "; caught up" : "; caught up (" + lag + " records in flight)");
        } else if (lag < 0) {
            text.append("; lag unknown");
        } else if (etaSeconds != null) {
            text.append("; ")
                    .append(lag)
                    .append(" records behind, caught up in about ")
                    .append(duration(etaSeconds));
        } else if (rates != null) {
            text.append("; ").append(lag).append(" records behind and not catching up");
        } else {
            text.append("; ").append(lag).append(" records behind");
        }
        return text.toString();
    }

    private static double round(double value) {
        return Math.round(value * 10) / 10.0;
    }

    private static String number(double value) {
        return value >= 100 ? String.format(Locale.ROOT, "%,.0f", value) : String.format(Locale.ROOT, "%.1f", value);
    }

    private static String bytes(double perSecond) {
        String[] units = {"B", "KiB", "MiB", "GiB"};
        int unit = 0;
        double value = perSecond;
        while (value >= 1024 && unit < units.length - 1) {
            value /= 1024;
            unit++;
        }
        return String.format(Locale.ROOT, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
    }

    private static String duration(int seconds) {
        if (seconds < 120) {
            return seconds + " s";
        }
        if (seconds < 7200) {
            return Math.round(seconds / 60.0) + " min";
        }
        return String.format(Locale.ROOT, "%.1f h", seconds / 3600.0);
    }
}
