package io.clustermirror.coordinator;

import io.clustermirror.fetch.DataPlane;
import io.clustermirror.fetch.FetcherPool;
import io.clustermirror.fetch.ReplicationThrottle;
import io.clustermirror.fetch.ShardedDataPlane;
import io.clustermirror.kafka.SourceAdmins;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.PreservedTail;
import io.clustermirror.topics.DestinationTopics;
import io.clustermirror.topics.TailPreservation;
import io.clustermirror.truncation.LogTruncation;
import io.clustermirror.truncation.PrefixCheck;
import io.clustermirror.truncation.SourceTimestamps;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.kafka.clients.admin.Admin;

/**
 * The running parts of one mirror: its share of a source Admin (one per distinct source connection), its data plane
 * ({@link ShardedDataPlane}: its lanes in shards over the fetcher pool), and its share of the instance's worker threads for blocking steps (topic preparation,
 * LOG_TRUNCATION, offset look-ups).
 */
final class MirrorRuntime implements MirrorParts, AutoCloseable {

    final Mirror mirror;
    final Admin sourceAdmin;
    private final SourceAdmins.Share sourceShare;
    final DestinationTopics topics;
    final LogTruncation truncation;
    /** The timestamps of source records for the recovery point, on the truncation's pooled clients. */
    final SourceTimestamps timestamps;

    final ShardedDataPlane fetcher;
    final MirrorWorkers workers;
    final TailPreservation preservation;
    final Admin destinationAdmin;
    final Map<String, String> sourceConnection;
    final Map<String, ?> destinationConnection;

    MirrorRuntime(
            Mirror mirror,
            SourceAdmins.Share sourceShare,
            Map<String, String> sourceConnection,
            Admin destinationAdmin,
            Map<String, ?> destinationConnection,
            FetcherPool pool,
            TailPreservation preservation,
            MirrorWorkers workers,
            DataPlane.Listener listener,
            int fetchersPerBroker,
            int sourceTimeoutMs,
            int timeoutMs,
            ReplicationThrottle throttle) {
        this.mirror = mirror;
        this.preservation = preservation;
        this.destinationAdmin = destinationAdmin;
        this.sourceConnection = sourceConnection;
        this.destinationConnection = destinationConnection;
        this.sourceShare = sourceShare;
        this.sourceAdmin = sourceShare.admin();
        this.workers = workers;
        this.topics = new DestinationTopics(sourceAdmin, destinationAdmin, timeoutMs);
        this.truncation = new LogTruncation(
                mirror.sourceClusterId(),
                sourceAdmin,
                destinationAdmin,
                sourceConnection,
                destinationConnection,
                timeoutMs);
        this.timestamps = new SourceTimestamps(truncation, sourceAdmin, timeoutMs);
        this.fetcher = ShardedDataPlane.on(
                pool,
                mirror.name(),
                mirror.sourceClusterId(),
                sourceConnection,
                sourceAdmin,
                destinationAdmin,
                listener,
                fetchersPerBroker,
                sourceTimeoutMs,
                timeoutMs,
                throttle,
                workers);
    }

    @Override
    public DataPlane dataPlane() {
        return fetcher;
    }

    @Override
    public PrefixCheck prefixCheck() {
        return truncation;
    }

    @Override
    public void recreateTopic(String topic, Collection<String> excludedProperties) throws Exception {
        topics.recreate(topic, excludedProperties);
    }

    @Override
    public void liftGuards(Collection<String> topics) throws Exception {
        this.topics.liftGuards(topics);
    }

    @Override
    public Map<String, Exception> restoreConfigs(Collection<String> topics) throws InterruptedException {
        return this.topics.restoreConfigs(topics);
    }

    @Override
    public List<PreservedTail> preserveDivergentTails(List<MirrorPartition> partitions) throws Exception {
        Map<MirrorPartition, TailPreservation.Tail> tails = new TreeMap<>();
        truncation
                .divergentRanges(mirror.name(), partitions)
                .forEach((p, range) -> tails.put(p, new TailPreservation.Tail(range.from(), range.to())));
        return preservation.preserve(mirror.name(), tails);
    }

    @Override
    public Executor workers() {
        return workers;
    }

    /**
     * Closes a runtime dropped while it may be in use (its data plane ended): the tasks already given to its workers run
     * first, for at most {@code grace}, so that a stop or a recreate under way is not cut off halfway; tasks given after
     * this are refused (503 to a request). Waits on no thread: the close itself runs on {@code closer} afterwards.
     */
    CompletableFuture<Void> closeWhenIdle(Duration grace, Executor closer) {
        return workers.closeWhenIdle(grace).thenRunAsync(this::close, closer);
    }

    /** Interrupts this mirror's worker tasks (no other mirror's), ends its data plane, gives up its source Admin share. */
    @Override
    public void close() {
        workers.close();
        fetcher.close();
        truncation.close();
        sourceShare.close();
    }
}
