package io.clustermirror.fetch;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.jboss.logging.Logger;

/**
 * The end of a partition's pipeline reset, the fallback when its lost answers cannot be retried in place (the
 * destination lost or fenced its producer state, or the retries ran out of time: decisions §14), on the append thread
 * once nothing of the partition is in flight: the destination is read back, batches that landed without an answer are
 * accepted only if they are ours byte for byte, and fetching resumes at the destination's end under the next epoch of
 * the partition's producer id.
 */
final class PipelineReset {

    private static final Logger LOGGER = Logger.getLogger(PipelineReset.class);

    private final Pipeline pipeline;
    private final String mirror;
    private final Admin destinationAdmin;
    private final WireClient source;
    private final WireClient destination;
    private final long timeoutMs;

    PipelineReset(Pipeline pipeline, Admin destinationAdmin) {
        this.pipeline = pipeline;
        this.mirror = pipeline.mirror;
        this.destinationAdmin = destinationAdmin;
        this.source = pipeline.source;
        this.destination = pipeline.destination;
        this.timeoutMs = pipeline.timeoutMs;
    }

    /**
     * Nothing of the partition is in flight any more: the destination's end must be exactly what was acknowledged plus
     * batches of ours that landed unanswered, then fetching goes on from there under the next epoch. Anything else (a
     * foreign write, data lost by the destination) is for LOG_TRUNCATION to judge.
     */
    void finish(FetchPartition state) {
        long end;
        String unverified = null;
        try {
            end = destinationAdmin
                    .listOffsets(Map.of(state.tp, OffsetSpec.latest()))
                    .partitionResult(state.tp)
                    .get(timeoutMs, TimeUnit.MILLISECONDS)
                    .offset();
            if (end > state.ackedEnd) {
                // batches whose answers were lost may have landed: they must be exactly ours, checked by content
                unverified = verifyUnconfirmed(state, end);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } catch (Exception e) {
            // the destination is not answering yet (e.g. a restarted broker without leaders): read it again, for a
            // while
            pipeline.destinationRefresh = true;
            if (System.nanoTime() - state.resetRequestedAt > TimeUnit.MILLISECONDS.toNanos(4L * timeoutMs)) {
                pipeline.fail(state, "could not read the destination back after a pipeline reset: " + e);
            }
            return;
        }
        if (end > state.ackedEnd) {
            if (unverified != null) {
                pipeline.fail(state, unverified);
                return;
            }
            LOGGER.infof(
                    "Mirror %s: %s: batches up to %d landed without an answer; verified by content",
                    mirror, state.partition, end);
            state.ackedEnd = end;
        } else if (end < state.ackedEnd) {
            pipeline.fail(
                    state,
                    "after a pipeline reset the destination ends at " + end + " but " + state.ackedEnd
                            + " was acknowledged: the destination lost data");
            return;
        }
        state.unconfirmed.clear();
        synchronized (state) {
            state.generation = pipeline.nextGeneration();
            state.clearQueue();
            state.fetchOffset = end;
            state.fetchedEpoch = state.lastEpoch;
            state.resetPending = false;
        }
        // the same producer id under the next epoch, as kafka-clients' idempotent producer does (KIP-360): a batch
        // of the old epoch still queued somewhere is refused once the new epoch has landed, where a new id would
        // let it in
        state.identity = nextEpoch(state.identity);
        state.nextSequence = 0;
        state.transactions.recoveryNeeded = true;
        LOGGER.infof("Mirror %s: %s resumes at destination log end %d", mirror, state.partition, end);
        source.wakeup();
    }

    /** The identity's next epoch; null (a new producer id) when there is none or the epoch is used up. */
    static ProducerIdentity nextEpoch(ProducerIdentity identity) {
        return identity == null || identity.producerEpoch() >= Short.MAX_VALUE - 1
                ? null
                : new ProducerIdentity(identity.producerId(), (short) (identity.producerEpoch() + 1));
    }

    /**
     * Null when every destination batch in [ackedEnd, end) is one of ours, content for content; else why not.
     * Throws when the destination cannot be read yet (the reset is then tried again).
     */
    private String verifyUnconfirmed(FetchPartition state, long end) throws IOException {
        long offset = state.ackedEnd;
        while (offset < end) {
            List<SourceBatch> landed = RawFetch.batches(
                    destination, pipeline.destinationView, state.tp, offset, FetchLoop.PARTITION_FETCH_BYTES);
            if (landed.isEmpty()) {
                return "destination offsets [" + offset + ", " + end
                        + ") could not be read back after a pipeline reset";
            }
            for (SourceBatch batch : landed) {
                if (batch.lastOffset() < offset || batch.baseOffset() >= end) {
                    continue;
                }
                FetchPartition.Sent sent = state.unconfirmed.get(batch.baseOffset());
                SourceBatch ours = sent == null ? null : sent.batch();
                if (ours == null || !RawFetch.sameContent(ours, batch)) {
                    return "destination batch [" + batch.baseOffset() + ".." + batch.lastOffset()
                            + "] is not the source batch sent "
                            + "there (written by another producer?); the destination is checked again by LOG_TRUNCATION";
                }
                offset = batch.lastOffset() + 1;
                if (ours.partitionLeaderEpoch() >= 0) {
                    state.lastEpoch = ours.partitionLeaderEpoch();
                }
            }
        }
        return null;
    }
}
