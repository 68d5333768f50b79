package io.clustermirror.mirror;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * The KIP-1279 partition states and the one table of legal moves between them (a self-move is always legal).
 *
 * <pre>
 *  UNKNOWN ──► LOG_TRUNCATION ──► MIRRORING ──► PAUSING ──► PAUSED
 *                 ▲    ▲            │  ▲  ▲                   │
 *                 │    │            ▼  │  └───── resume ──────┘
 *   STOPPED ──────┘    │       EPOCH_FENCING
 *      ▲               │
 *   STOPPING ◄── LOG_TRUNCATION, EPOCH_FENCING, MIRRORING, PAUSING, PAUSED, FAILED
 *   FAILED   ◄── any;  FAILED ──► LOG_TRUNCATION (retry / recover), MIRRORING
 * </pre>
 */
public enum MirrorPartitionState {
    UNKNOWN(0),
    LOG_TRUNCATION(1),
    MIRRORING(2),
    EPOCH_FENCING(3),
    PAUSING(4),
    PAUSED(5),
    STOPPING(6),
    STOPPED(7),
    FAILED(8);

    private static final Map<MirrorPartitionState, Set<MirrorPartitionState>> LEGAL_SOURCES = Map.of(
            UNKNOWN, EnumSet.noneOf(MirrorPartitionState.class),
            LOG_TRUNCATION, EnumSet.of(UNKNOWN, STOPPED, FAILED),
            MIRRORING, EnumSet.of(LOG_TRUNCATION, EPOCH_FENCING, PAUSED, FAILED),
            EPOCH_FENCING, EnumSet.of(MIRRORING),
            PAUSING, EnumSet.of(MIRRORING),
            PAUSED, EnumSet.of(PAUSING),
            STOPPING, EnumSet.of(LOG_TRUNCATION, EPOCH_FENCING, MIRRORING, PAUSING, PAUSED, FAILED),
            STOPPED, EnumSet.of(STOPPING),
            FAILED, EnumSet.allOf(MirrorPartitionState.class));

    private final int code;

    MirrorPartitionState(int code) {
        this.code = code;
    }

    /** The state's code in the KIP. */
    public int code() {
        return code;
    }

    public boolean canMoveTo(MirrorPartitionState target) {
        return this == target || LEGAL_SOURCES.get(target).contains(this);
    }

    /**
     * Whether the mirror holds the partition: neither STOPPING nor STOPPED. Its destination topic stays read-only and
     * its configs and guards are kept in step with the source (its group offsets only while MIRRORING).
     */
    public boolean isHeld() {
        return this != STOPPING && this != STOPPED;
    }

    /** States in which the data plane owns the partition (fetching or about to). */
    public boolean isActive() {
        return this == LOG_TRUNCATION || this == MIRRORING || this == EPOCH_FENCING || this == PAUSING;
    }
}
