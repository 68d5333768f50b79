package io.clustermirror.fetch;

import io.clustermirror.batches.RawFetch;
import io.clustermirror.batches.SourceBatch;
import io.clustermirror.kafka.WireClient;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.utils.ExponentialBackoff;
import org.jboss.logging.Logger;

/**
 * The end of a partition's pipeline reset, the fallback when its lost answers cannot be retried in place (the
 * destination lost or fenced its producer state, or the retries ran out of time: decisions §14), once nothing of the
 * partition is in flight: the destination is read back, batches that landed without an answer are accepted only if
 * they are ours byte for byte, and fetching resumes at the destination's end under the next epoch of the partition's
 * producer id. The read-back is a ListOffsets and as many Fetches as the unanswered batches take, each a request on the
 * partition's pinned destination connection whose answer the append loop takes up in a later round: no fetcher turn
 * waits for it. A read-back that fails is started again after the partition's own back-off, for 4 × the request timeout
 * from the reset on. On the fetcher's thread, for partitions in {@link FetchPartition.Resetting}.
 */
final class PipelineReset {

    private static final Logger LOGGER = Logger.getLogger(PipelineReset.class);
    /** kafka-clients' {@code retry.backoff.ms} and {@code retry.backoff.max.ms} defaults. */
    private static final ExponentialBackoff BACKOFF = new ExponentialBackoff(100, 2, 1000, 0.2);

    /**
     * The read-back of one reset ({@link FetchPartition.Resetting}): the try under way (the destination's end once
     * ListOffsets has told it, how far its batches have been checked, the answer of the request under way once it is
     * there, set by its completion handler and taken up by a round), and the back-off between tries that failed.
     */
    static final class ReadBack {
        /** Whether a try is under way (started, and neither failed nor finished). */
        private boolean underWay;
        /** Tries started so far: an answer to an earlier one is not taken up. */
        private int tries;

        private long end;
        private long verified;
        private boolean waiting;
        private ClientResponse answer;
        private Node connection;
        /** A request that waits for its connection to be ready. */
        private AbstractRequest.Builder<?> unsent;
        /** When the next try may start after a failed one (System.nanoTime). */
        private long notBefore;
        /** Tries in a row that failed, for the back-off between them. */
        private int failures;

        /** A read-back whose first try may start at {@code now}. */
        ReadBack(long now) {
            this.notBefore = now;
        }

        private void restart() {
            underWay = true;
            tries++;
            end = -1;
            verified = 0;
            waiting = false;
            answer = null;
            connection = null;
            unsent = null;
        }

        @Override
        public String toString() {
            return underWay
                    ? "try " + tries + (end < 0 ? ", end unknown" : ", end " + end)
                    : failures + " failed tries";
        }
    }

    private final Pipeline pipeline;
    private final String mirror;
    private final WireClient source;
    private final WireClient destination;
    private final long timeoutMs;

    PipelineReset(Pipeline pipeline) {
        this.pipeline = pipeline;
        this.mirror = pipeline.mirror;
        this.source = pipeline.source;
        this.destination = pipeline.destination;
        this.timeoutMs = pipeline.timeoutMs;
    }

    /**
     * One step of the reset of a partition of which nothing is in flight any more: starts the read-back, or takes up the
     * answer that arrived, asks for the next batches, and finishes once the destination's end is known and checked. The
     * destination's end must be exactly what was acknowledged plus batches of ours that landed unanswered, then fetching
     * goes on from there under the next epoch. Anything else (a foreign write, data lost by the destination) is for
     * LOG_TRUNCATION to judge.
     */
    void step(FetchPartition state, FetchPartition.Resetting resetting) {
        ReadBack readBack = resetting.readBack();
        if (!readBack.underWay) {
            if (System.nanoTime() - readBack.notBefore >= 0) {
                readBack.restart();
                send(state, resetting, listOffsets(state));
            }
            return;
        }
        if (readBack.waiting) {
            return;
        }
        if (readBack.unsent != null) {
            AbstractRequest.Builder<?> request = readBack.unsent;
            readBack.unsent = null;
            send(state, resetting, request);
            return;
        }
        ClientResponse answer = readBack.answer;
        readBack.answer = null;
        try {
            if (readBack.end < 0) {
                readBack.end = endOf(state, readBack, answer);
                readBack.verified = state.ackedEnd;
            } else {
                String unverified = verify(state, readBack, answer);
                if (unverified != null) {
                    pipeline.fail(state, unverified);
                    return;
                }
            }
        } catch (IOException e) {
            failed(state, resetting, e);
            return;
        }
        if (readBack.end > state.ackedEnd && readBack.verified < readBack.end) {
            // batches whose answers were lost may have landed: they must be exactly ours, checked by content
            send(state, resetting, fetchRequest(state, readBack));
            return;
        }
        finish(state, readBack.end);
    }

    /**
     * The destination's end, asked raw rather than through {@code topics/OffsetLookup} (the service's one look-up of
     * many partitions' offsets, everywhere else): that is an Admin call, on the Admin's own connections and answered on
     * its thread, while this runs on the fetcher's thread, which must not block, and goes over the partition's pinned
     * destination connection like its Produces and read-back Fetches, so that the broker sees the partition's requests
     * in the order they were sent (decisions §18).
     */
    private ListOffsetsRequest.Builder listOffsets(FetchPartition state) {
        return ListOffsetsRequest.Builder.forConsumer(false, IsolationLevel.READ_UNCOMMITTED)
                .setTimeoutMs((int) timeoutMs)
                .setTargetTimes(List.of(new ListOffsetsRequestData.ListOffsetsTopic()
                        .setName(state.tp.topic())
                        .setPartitions(List.of(new ListOffsetsRequestData.ListOffsetsPartition()
                                .setPartitionIndex(state.tp.partition())
                                .setTimestamp(ListOffsetsRequest.LATEST_TIMESTAMP)))));
    }

    private AbstractRequest.Builder<?> fetchRequest(FetchPartition state, ReadBack readBack) {
        try {
            return RawFetch.request(
                    pipeline.destinationView, state.tp, readBack.verified, FetchLoop.PARTITION_FETCH_BYTES, 0);
        } catch (IOException e) {
            return null;
        }
    }

    /** Sends a read-back request over the partition's pinned connection to its leader; its answer waits for a round. */
    private void send(FetchPartition state, FetchPartition.Resetting resetting, AbstractRequest.Builder<?> request) {
        ReadBack readBack = resetting.readBack();
        Node leader = pipeline.destinationView.leaders().get(state.tp);
        if (leader == null || request == null) {
            failed(
                    state,
                    resetting,
                    new IOException("no leader or topic id known for " + state.tp + " on the destination"));
            return;
        }
        Node connection = pipeline.pinned(leader, state.tp);
        readBack.connection = connection;
        if (!destination.ready(connection)) { // connecting: sent by a later round
            if (destination.connectionFailed(connection) || expired(resetting)) {
                failed(state, resetting, new IOException("destination broker " + connection + " cannot be reached"));
            } else {
                readBack.unsent = request;
            }
            return;
        }
        readBack.waiting = true;
        int attempt = readBack.tries;
        destination.send(connection, request, response -> {
            if (readBack.tries == attempt) {
                readBack.answer = response;
                readBack.waiting = false;
                destination.wakeup();
            }
        });
    }

    /** Whether the reset is past its bound, 4 × the request timeout from when it was asked for. */
    private boolean expired(FetchPartition.Resetting resetting) {
        return System.nanoTime() - resetting.requestedAtNanos() > TimeUnit.MILLISECONDS.toNanos(4L * timeoutMs);
    }

    /** The read-back failed (the destination is not answering yet, e.g. a restarted broker without leaders): again, for a while. */
    private void failed(FetchPartition state, FetchPartition.Resetting resetting, Exception e) {
        ReadBack readBack = resetting.readBack();
        readBack.underWay = false;
        pipeline.destinationRefresh = true;
        if (expired(resetting)) {
            pipeline.fail(state, "could not read the destination back after a pipeline reset: " + e);
            return;
        }
        long backoffMs = BACKOFF.backoff(readBack.failures++);
        readBack.notBefore = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(backoffMs);
        LOGGER.debugf(
                "Mirror %s: %s: reset read-back failed (%s); again in %d ms", mirror, state.partition, e, backoffMs);
    }

    private static void answered(ClientResponse response, Node connection) throws IOException {
        if (response.wasDisconnected() || response.wasTimedOut()) {
            throw new IOException("destination broker " + connection
                    + (response.wasDisconnected() ? " disconnected" : " did not answer in time"));
        }
        if (response.versionMismatch() != null) {
            throw new IOException(response.versionMismatch().getMessage());
        }
    }

    private long endOf(FetchPartition state, ReadBack readBack, ClientResponse response) throws IOException {
        answered(response, readBack.connection);
        ListOffsetsResponse answer = (ListOffsetsResponse) response.responseBody();
        for (ListOffsetsResponseData.ListOffsetsTopicResponse topic : answer.topics()) {
            for (ListOffsetsResponseData.ListOffsetsPartitionResponse partition : topic.partitions()) {
                if (topic.name().equals(state.tp.topic()) && partition.partitionIndex() == state.tp.partition()) {
                    Errors error = Errors.forCode(partition.errorCode());
                    if (error != Errors.NONE) {
                        throw new IOException("ListOffsets of " + state.tp + ": " + error.name());
                    }
                    return partition.offset();
                }
            }
        }
        throw new IOException("ListOffsets of " + state.tp + " was answered without it");
    }

    /** Applies what the read-back found; fetching goes on from {@code end}. */
    private void finish(FetchPartition state, long end) {
        if (end > state.ackedEnd) {
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
        state.resume(end, pipeline.nextGeneration());
        // the same producer id under a new epoch from the transaction coordinator (ProducerIds), as kafka-clients'
        // producer does (KIP-360): a batch of the old epoch still queued somewhere is refused once the new epoch has
        // landed, where a new id would let it in
        state.identity = null;
        state.nextSequence = 0;
        state.transactions.recoveryNeeded = true;
        LOGGER.infof("Mirror %s: %s resumes at destination log end %d", mirror, state.partition, end);
        source.wakeup();
    }

    /**
     * Checks the batches of a read-back answer against those sent: null when every destination batch in it, up to the
     * end, is one of ours, content for content (how far is kept in {@code readBack}); else why not. Throws when the
     * destination cannot be read yet (the read-back is then started again).
     */
    private String verify(FetchPartition state, ReadBack readBack, ClientResponse response) throws IOException {
        answered(response, readBack.connection);
        List<SourceBatch> landed = RawFetch.batches(response, pipeline.destinationView, state.tp, readBack.verified);
        long offset = readBack.verified;
        long end = readBack.end;
        if (landed.isEmpty()) {
            return "destination offsets [" + offset + ", " + end + ") could not be read back after a pipeline reset";
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
        if (offset == readBack.verified) {
            return "destination offsets [" + offset + ", " + end + ") could not be read back after a pipeline reset";
        }
        readBack.verified = offset;
        return null;
    }
}
