package io.clustermirror.fetch;

import org.apache.kafka.common.utils.ExponentialBackoff;
import org.jboss.logging.Logger;

/**
 * Back-off of a data-plane loop that cannot reach its cluster: 0.5 s doubling to 10 s with 20% jitter (kafka-clients'
 * {@link ExponentialBackoff}); one WARN per new error, repeats at DEBUG, one INFO when it recovers. Nothing sleeps: the
 * loop skips its rounds until {@link #waiting()} is over, while the fetcher turns for the other data planes.
 */
final class LoopBackoff {

    private static final Logger LOGGER = Logger.getLogger(LoopBackoff.class);
    private static final ExponentialBackoff BACKOFF = new ExponentialBackoff(500, 2, 10_000, 0.2);

    private final String mirror;
    private final String loop;
    private int failures;
    private String lastError;
    private long retryAtNanos;

    LoopBackoff(String mirror, String loop) {
        this.mirror = mirror;
        this.loop = loop;
    }

    /** Reports the failure; the loop waits before it tries again. */
    void failed(Exception e) {
        report(e);
        retryAtNanos = System.nanoTime() + BACKOFF.backoff(failures - 1L) * 1_000_000;
    }

    /** Whether the loop is still backing off from its last failure. */
    boolean waiting() {
        return failures > 0 && System.nanoTime() - retryAtNanos < 0;
    }

    void report(Exception e) {
        String error = e.toString();
        if (!error.equals(lastError)) {
            LOGGER.warnf("Mirror %s %s: %s; retrying with back-off", mirror, loop, error);
        } else {
            LOGGER.debugf("Mirror %s %s: still %s", mirror, loop, error);
        }
        lastError = error;
        failures++;
    }

    void succeeded() {
        if (failures > 0) {
            LOGGER.infof("Mirror %s: connection recovered after %d failed attempt(s)", mirror, failures);
            failures = 0;
            lastError = null;
        }
    }
}
