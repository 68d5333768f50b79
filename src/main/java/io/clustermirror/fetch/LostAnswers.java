package io.clustermirror.fetch;

import io.clustermirror.batches.OneBatchProduce;
import io.clustermirror.batches.SourceBatch;
import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.WireClient;
import java.util.Collection;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.utils.ExponentialBackoff;
import org.jboss.logging.Logger;

/**
 * The batches of a partition whose answers were lost (a disconnect, a timeout, a retriable error), sent again as they
 * are: the same producer id, epoch and sequence, one at a time and in order, once nothing else of the partition is in
 * flight, as kafka-clients' producer retries. The destination de-duplicates them (decisions §14): a batch that did land
 * is answered with its original offset, one that did not lands now, so a late original can never land twice. New
 * batches wait until every lost one is acknowledged. Past {@code 4 ×} the request timeout the partition falls back to
 * the verified reset ({@link PipelineReset}). On the fetcher's thread.
 */
final class LostAnswers {

    private static final Logger LOGGER = Logger.getLogger(LostAnswers.class);
    /** kafka-clients' {@code retry.backoff.ms} and {@code retry.backoff.max.ms} defaults. */
    private static final ExponentialBackoff BACKOFF = new ExponentialBackoff(100, 2, 1000, 0.2);

    /** How a retry goes out: as any Produce of the partition, its answer handled like any other. */
    @FunctionalInterface
    interface Sender {
        void send(Node leader, FetchPartition state, FetchPartition.Sent sent, ProduceRequest.Builder request);
    }

    private final Pipeline pipeline;
    private final WireClient destination;
    private final long timeoutMs;
    private final Sender sender;

    LostAnswers(Pipeline pipeline, Sender sender) {
        this.pipeline = pipeline;
        this.destination = pipeline.destination;
        this.timeoutMs = pipeline.timeoutMs;
        this.sender = sender;
    }

    /** The answer of {@code sent} was lost: it waits to be sent again, after those before it. */
    void lost(FetchPartition state, FetchPartition.Sent sent, String reason) {
        if (state.unconfirmed.isEmpty()) {
            state.retryingSince = System.nanoTime();
            state.retries = 0;
            LOGGER.infof(
                    "Mirror %s: %s: answer lost (%s); re-sending with the same producer id, epoch and sequence",
                    pipeline.mirror, state.partition, reason);
        }
        state.unconfirmed.put(sent.batch().baseOffset(), sent);
        state.retryNotBefore = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(BACKOFF.backoff(state.retries));
    }

    /** Acknowledged at its offset: once none waits any more, new batches go again. */
    void acknowledged(FetchPartition state, SourceBatch batch) {
        if (state.unconfirmed.remove(batch.baseOffset()) != null && state.unconfirmed.isEmpty()) {
            LOGGER.infof(
                    "Mirror %s: %s: %d batch(es) re-sent, each acknowledged at its source offset",
                    pipeline.mirror, state.partition, state.retries);
        }
    }

    /** Whether the retries of {@code state} are past their bound (the verified reset takes over). */
    boolean expired(FetchPartition state) {
        return !state.unconfirmed.isEmpty()
                && System.nanoTime() - state.retryingSince > TimeUnit.MILLISECONDS.toNanos(4L * timeoutMs);
    }

    /** Sends the next retry of each partition whose turn it is; one past the bound is reset instead. */
    void sendDue(Collection<FetchPartition> partitions) {
        long now = System.nanoTime();
        for (FetchPartition state : partitions) {
            if (state.unconfirmed.isEmpty() || !state.inFlight.isEmpty() || !state.resendsLost()) {
                continue;
            }
            if (expired(state)) {
                pipeline.requestReset(
                        state, "answers lost for over " + 4L * timeoutMs + " ms; the destination is read back instead");
                continue;
            }
            if (now < state.retryNotBefore) {
                continue;
            }
            ClusterView view = pipeline.destinationView;
            Node leader = view.leaders().get(state.tp);
            if (leader == null || !view.topicIds().containsKey(state.tp.topic())) {
                pipeline.destinationRefresh = true;
                continue;
            }
            Node connection = pipeline.pinned(leader, state.tp); // where the first attempt went: order per partition
            if (!destination.ready(connection)) {
                continue;
            }
            FetchPartition.Sent sent = state.unconfirmed.firstEntry().getValue();
            // the bytes still carry the producer id, epoch and sequence of the first attempt
            var data = OneBatchProduce.request(
                    view, state.tp, sent.batch().bytes().duplicate(), sent.transactionalId(), (int)
                            Math.max(1000, timeoutMs / 2));
            state.retries++;
            state.inFlight.add(sent);
            sender.send(
                    connection,
                    state,
                    sent,
                    sent.transactionalId() == null ? ProduceRequest.builder(data) : ProduceRequest.builder(data, true));
        }
    }
}
