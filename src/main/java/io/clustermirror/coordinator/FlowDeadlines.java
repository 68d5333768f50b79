package io.clustermirror.coordinator;

import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import org.jboss.logging.Logger;

/**
 * The deadline of the coordinator's asynchronous flows (a start, a stop, a topic verb, a promote past its own drain
 * timeout), {@code mirror.flow.timeout.ms}: a flow that has not finished by then is cancelled (its subscription, so
 * what it has in flight), counted in {@code cluster_mirror_flow_deadline_exceeded_total{flow}}, logged once at WARN,
 * and ends with a reason the caller or describe shows. Nothing the coordinator does can hang a caller forever.
 */
final class FlowDeadlines {

    private static final Logger LOGGER = Logger.getLogger(FlowDeadlines.class);

    private final MirrorMetrics metrics;
    private final Duration timeout;

    FlowDeadlines(MirrorMetrics metrics, Duration timeout) {
        this.metrics = metrics;
        this.timeout = timeout;
    }

    Duration timeout() {
        return timeout;
    }

    /** The flow, or past {@link #timeout()} a failure with {@code error} naming what did not finish and what follows. */
    <T> Uni<T> bound(Uni<T> flow, String flowName, String mirror, MirrorError error, String consequence) {
        return bound(flow, flowName, mirror, timeout, error, consequence);
    }

    /** Like {@link #bound(Uni, String, String, MirrorError, String)}, with a deadline of the flow's own. */
    <T> Uni<T> bound(
            Uni<T> flow, String flowName, String mirror, Duration after, MirrorError error, String consequence) {
        return flow.ifNoItem().after(after).failWith(() -> {
            String reason = exceeded(flowName, mirror, after) + "; " + consequence;
            LOGGER.warnf("Mirror %s: %s", mirror, reason);
            return new MirrorException(error, reason);
        });
    }

    /** Counts a flow that missed its deadline; its reason, for describe or an answer. */
    String exceeded(String flowName, String mirror, Duration after) {
        metrics.flowDeadlineExceeded(flowName, mirror);
        return "the " + flowName + " did not finish within " + after.toMillis() + " ms";
    }
}
