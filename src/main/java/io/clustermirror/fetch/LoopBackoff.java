package io.clustermirror.fetch;

import org.apache.kafka.common.utils.ExponentialBackoff;
import org.jboss.logging.Logger;

/**
 * Back-off of a data-plane loop that cannot reach its cluster: 0.5 s doubling to 10 s with 20% jitter (kafka-clients'
 * {@link ExponentialBackoff}); one WARN per new error, repeats at DEBUG, one INFO when it recovers.
 */
final class LoopBackoff {

    private static final Logger LOGGER = Logger.getLogger(LoopBackoff.class);
    private static final ExponentialBackoff BACKOFF = new ExponentialBackoff(500, 2, 10_000, 0.2);

    private final String mirror;
    private final String loop;
    private int failures;
    private String lastError;

    LoopBackoff(String mirror, String loop) {
        this.mirror = mirror;
        this.loop = loop;
    }

    /** Reports the failure, then waits before the loop tries again. */
    void failed(Exception e) {
        report(e);
        sleep(BACKOFF.backoff(failures - 1L));
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

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
