package io.clustermirror.coordinator;

import io.clustermirror.config.MirrorServiceConfig;
import org.apache.kafka.common.utils.ExponentialBackoff;

/**
 * The automatic retries of a FAILED partition: attempts {@code 0..maxAttempts}, each after a back-off doubling from the
 * initial one up to the maximum with 20% jitter (kafka-clients' {@link ExponentialBackoff}); after the last one the
 * partition waits for an operator's recover (its retry attempt reads -1).
 */
final class RetryPolicy {

    private final int maxAttempts;
    private final long initialBackoffMs;
    private final ExponentialBackoff backoff;

    RetryPolicy(long initialBackoffMs, long maxBackoffMs, int maxAttempts) {
        this.maxAttempts = maxAttempts;
        this.initialBackoffMs = initialBackoffMs;
        this.backoff = new ExponentialBackoff(initialBackoffMs, 2, maxBackoffMs, 0.2);
    }

    static RetryPolicy of(MirrorServiceConfig.Failed.Retry retry) {
        return new RetryPolicy(retry.initialBackoffMs(), retry.maxBackoffMs(), retry.maxAttempts());
    }

    /** What follows a failure that left the partition at retry attempt {@code attempt} (-1: none left), for its log line. */
    String next(int attempt) {
        return attempt >= 0
                ? "retried automatically (attempt " + (attempt + 1) + " of " + maxAttempts + ")"
                : "no automatic retry left (topics:recover starts it again)";
    }

    /** The retry attempt a partition failing in attempt {@code attempt} keeps: itself, or -1 when none is left. */
    int afterFailure(int attempt) {
        return attempt < 0 || attempt >= maxAttempts ? -1 : attempt;
    }

    /** How long to wait before retry {@code attempt}. */
    long delayMs(int attempt) {
        return backoff.backoff(attempt);
    }

    /** After a restart the back-off already waited is unknown: the retry comes after the initial one. */
    long delayAfterRestartMs() {
        return initialBackoffMs;
    }
}
