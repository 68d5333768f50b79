package io.clustermirror.coordinator;

import io.clustermirror.fetch.DataPlane;
import io.clustermirror.fetch.DestinationTopics;
import io.clustermirror.fetch.LogTruncation;
import io.clustermirror.fetch.MirrorFetcher;
import io.clustermirror.fetch.PrefixCheck;
import io.clustermirror.fetch.ReplicationThrottle;
import io.clustermirror.fetch.TailPreservation;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.PreservedTail;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;

/**
 * The running parts of one mirror: its source Admin, its data plane ({@link MirrorFetcher}), and a small
 * pool of worker threads for blocking steps (topic preparation, LOG_TRUNCATION, offset look-ups).
 */
final class MirrorRuntime implements MirrorParts, AutoCloseable {

    final Mirror mirror;
    final Admin sourceAdmin;
    final DestinationTopics topics;
    final LogTruncation truncation;
    final MirrorFetcher fetcher;
    final ExecutorService workers;
    final TailPreservation preservation;

    MirrorRuntime(
            Mirror mirror,
            Admin sourceAdmin,
            Map<String, String> sourceConnection,
            Admin destinationAdmin,
            Map<String, ?> destinationConnection,
            TailPreservation preservation,
            DataPlane.Listener listener,
            int sourceTimeoutMs,
            int timeoutMs,
            ReplicationThrottle throttle) {
        this.mirror = mirror;
        this.preservation = preservation;
        this.sourceAdmin = sourceAdmin;
        this.topics = new DestinationTopics(sourceAdmin, destinationAdmin, timeoutMs);
        this.truncation = new LogTruncation(
                mirror.sourceClusterId(),
                sourceAdmin,
                destinationAdmin,
                sourceConnection,
                destinationConnection,
                timeoutMs);
        this.fetcher = new MirrorFetcher(
                mirror.name(),
                mirror.sourceClusterId(),
                sourceConnection,
                destinationConnection,
                sourceAdmin,
                destinationAdmin,
                listener,
                sourceTimeoutMs,
                timeoutMs,
                throttle);
        AtomicInteger counter = new AtomicInteger();
        this.workers = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "mirror-worker-" + mirror.name() + "-" + counter.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
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
    public void restoreTopic(String topic) throws Exception {
        topics.restore(topic);
    }

    @Override
    public List<PreservedTail> preserveDivergentTails(List<MirrorPartition> partitions) throws Exception {
        return preservation.preserve(mirror.name(), truncation.divergentRanges(mirror.name(), partitions));
    }

    @Override
    public Executor workers() {
        return workers;
    }

    /**
     * Closes a runtime dropped while it may be in use (its data plane ended): the tasks already given to its workers run
     * first, for at most {@code grace}, so that a stop or a recreate under way is not cut off halfway; tasks given after
     * this are refused.
     */
    void closeWhenIdle(Duration grace) {
        workers.shutdown();
        try {
            workers.awaitTermination(grace.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        close();
    }

    @Override
    public void close() {
        workers.shutdownNow();
        fetcher.close();
        sourceAdmin.close(Duration.ofSeconds(2));
    }
}
