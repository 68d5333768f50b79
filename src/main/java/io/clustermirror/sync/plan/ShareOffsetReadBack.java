package io.clustermirror.sync.plan;

import java.util.Comparator;
import java.util.Map;
import java.util.TreeMap;

/**
 * Share-group start offsets read back from the destination right after {@code AlterShareGroupOffsets}. A Kafka
 * 4.1.x broker answers that call with success and applies nothing (its group coordinator drops the share
 * coordinator's answer, and refuses a group it does not know yet without saying so); 4.2.0 applies it. Reading back
 * is how the mirror tells the two apart instead of reporting a sync that did not happen.
 */
public final class ShareOffsetReadBack {

    private ShareOffsetReadBack() {}

    /**
     * @param <P> how a partition is named (its {@code toString} orders the answer)
     * @param written the start offsets just written, per partition
     * @param readBack what the destination shows now (absent or {@code null}: no offset)
     * @return the partitions whose offset is not what was written, each as "wanted X, destination shows Y"
     */
    public static <P> Map<P, String> unapplied(Map<P, Long> written, Map<P, Long> readBack) {
        Map<P, String> unapplied = new TreeMap<>(Comparator.comparing(Object::toString));
        written.forEach((partition, offset) -> {
            Long shown = readBack.get(partition);
            if (shown == null || shown.longValue() != offset) {
                unapplied.put(
                        partition, "wanted " + offset + ", destination shows " + (shown == null ? "none" : shown));
            }
        });
        return unapplied;
    }

    /** Throws when something written did not apply, naming each partition and the likely cause. */
    public static <P> void verify(Map<P, Long> written, Map<P, Long> readBack) {
        Map<P, String> unapplied = unapplied(written, readBack);
        if (!unapplied.isEmpty()) {
            throw new NotAppliedException(
                    "the destination accepted AlterShareGroupOffsets but did not apply it " + unapplied
                            + "; Kafka 4.1.x brokers do not apply it, share-group offset sync needs a 4.2.0 or newer destination");
        }
    }

    /** A destination that answered success and did not apply the offsets. */
    public static final class NotAppliedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NotAppliedException(String message) {
            super(message);
        }
    }
}
