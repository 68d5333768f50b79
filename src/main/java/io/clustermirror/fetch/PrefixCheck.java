package io.clustermirror.fetch;

import io.clustermirror.mirror.MirrorPartition;
import java.util.function.Consumer;

/**
 * LOG_TRUNCATION's question: is the destination partition a prefix of the source's, and where does mirroring go on?
 * Blocking (it reads both clusters); {@link LogTruncation} is the real one, the partition lifecycle's unit tests use
 * fakes.
 */
public interface PrefixCheck {

    /** The full check; {@code progress} receives human-readable notes for describe. */
    LogTruncation.Outcome run(String mirror, MirrorPartition partition, Consumer<String> progress) throws Exception;

    /**
     * EPOCH_FENCING's check: the source leader said the epoch last fetched ends at {@code epochEndOffset} on its side.
     * A destination ending beyond that holds records the source lost; else the full check decides.
     */
    LogTruncation.Outcome afterEpochFencing(
            String mirror, MirrorPartition partition, long epochEndOffset, Consumer<String> progress) throws Exception;
}
