package io.clustermirror.truncation;

import io.clustermirror.batches.RawFetch;
import io.clustermirror.batches.SourceBatch;
import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.WireClient;
import io.clustermirror.mirror.Frozen;
import io.clustermirror.topics.OffsetLookup;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;

/**
 * LOG_TRUNCATION's reads for a batch of partitions, one request per broker where the protocol allows: offsets through
 * {@link OffsetLookup} (one Admin call, which sends one ListOffsets per leader for all of a call's partitions), the topics' leaders in one
 * DescribeTopics, and the batches at given offsets in one Fetch per leader. Each partition gets its own answer or its
 * own failure (the exception a read of that partition alone would have thrown); a broker that cannot be reached fails
 * its partitions only. Blocking; the caller's thread.
 */
final class TruncationReads {

    /** What one partition's Fetch may bring, as {@link RawFetch#batchAt} asks for one partition alone. */
    static final int PARTITION_MAX_BYTES = 1 << 20;
    /** What one grouped Fetch answer may bring: bounds the memory a batch of a thousand partitions takes at once. */
    static final int REQUEST_MAX_BYTES = 16 << 20;

    private TruncationReads() {}

    /** A partition's value, or the exception that kept it from one. */
    record Read<T>(T value, Exception failure) {

        static <T> Read<T> of(T value) {
            return new Read<>(value, null);
        }

        static <T> Read<T> failed(Exception failure) {
            return new Read<>(null, failure);
        }

        boolean failed() {
            return failure != null;
        }
    }

    /** A read over a source client. */
    @FunctionalInterface
    interface SourceRead<T> {
        T apply(WireClient source) throws Exception;
    }

    /** The partitions per leader, in the given order, and those without a known leader. */
    record ByLeader(Map<Node, List<TopicPartition>> brokers, List<TopicPartition> leaderless) {}

    /** Groups partitions by their leader in {@code view}: one request each. Pure. */
    static ByLeader byLeader(Collection<TopicPartition> partitions, ClusterView view) {
        Map<Node, List<TopicPartition>> brokers = new LinkedHashMap<>();
        List<TopicPartition> leaderless = new ArrayList<>();
        for (TopicPartition tp : partitions) {
            Node leader = view.leaders().get(tp);
            if (leader == null || view.topicIds().get(tp.topic()) == null) {
                leaderless.add(tp);
            } else {
                brokers.computeIfAbsent(leader, n -> new ArrayList<>()).add(tp);
            }
        }
        return new ByLeader(brokers, leaderless);
    }

    /** One Fetch for all of {@code offsets}' partitions (one leader), each at its offset. Pure. */
    static FetchRequest.Builder fetch(ClusterView view, Map<TopicPartition, Long> offsets) {
        Map<TopicPartition, FetchRequest.PartitionData> partitions = new LinkedHashMap<>();
        offsets.forEach((tp, offset) -> partitions.put(
                tp,
                new FetchRequest.PartitionData(
                        view.topicIds().get(tp.topic()),
                        offset,
                        -1,
                        PARTITION_MAX_BYTES,
                        Optional.empty(),
                        Optional.empty())));
        return FetchRequest.Builder.forConsumer(ApiKeys.FETCH.latestVersion(), 0, 1, partitions)
                .isolationLevel(IsolationLevel.READ_UNCOMMITTED)
                .setMaxBytes(REQUEST_MAX_BYTES);
    }

    /**
     * Asks for the offsets of {@code partitions} for each spec, read uncommitted: one {@link OffsetLookup} call per spec
     * (the service's one look-up of many partitions' offsets), all sent at once; {@link #offsets} waits for them.
     */
    static Map<OffsetSpec, CompletableFuture<OffsetLookup.Offsets>> askOffsets(
            OffsetLookup lookup, Collection<TopicPartition> partitions, List<OffsetSpec> specs) {
        Map<OffsetSpec, CompletableFuture<OffsetLookup.Offsets>> calls = new LinkedHashMap<>();
        for (OffsetSpec spec : specs) {
            calls.put(
                    spec,
                    lookup.list(partitions, spec, IsolationLevel.READ_UNCOMMITTED)
                            .toCompletableFuture());
        }
        return calls;
    }

    /**
     * The offsets {@link #askOffsets} asked for, by spec and partition. A partition's failure (or its timeout, the
     * lookup's deadline) is its own answer.
     */
    static Map<OffsetSpec, Map<TopicPartition, Read<Long>>> offsets(
            Map<OffsetSpec, CompletableFuture<OffsetLookup.Offsets>> calls, Collection<TopicPartition> partitions)
            throws InterruptedException {
        Map<OffsetSpec, Map<TopicPartition, Read<Long>>> offsets = new LinkedHashMap<>();
        for (var call : calls.entrySet()) {
            OffsetLookup.Offsets listed;
            try {
                listed = call.getValue().get();
            } catch (ExecutionException e) {
                throw new IllegalStateException(e.getCause()); // a look-up never fails as a whole
            }
            Map<TopicPartition, Read<Long>> answers = new HashMap<>();
            for (TopicPartition tp : partitions) {
                Exception failure = listed.failed().get(tp);
                answers.put(
                        tp,
                        failure != null
                                ? Read.failed(failure)
                                : Read.of(listed.offset(tp).orElseThrow()));
            }
            offsets.put(call.getKey(), answers);
        }
        return offsets;
    }

    /** A cluster's description and its topics', asked for and not yet answered ({@link #askView}). */
    record AskedView(DescribeClusterResult cluster, Map<String, KafkaFuture<TopicDescription>> described) {}

    /** Asks for the cluster and the leaders of {@code topics}: {@link #view(AskedView, long, Map)} waits for them. */
    static AskedView askView(Admin admin, Set<String> topics) {
        return new AskedView(
                admin.describeCluster(), admin.describeTopics(topics).topicNameValues());
    }

    /** {@link #view(AskedView, long, Map)} of a view asked for now. */
    static ClusterView view(Admin admin, Set<String> topics, long timeoutMs, Map<String, Exception> failedTopics)
            throws Exception {
        return view(askView(admin, topics), timeoutMs, failedTopics);
    }

    /**
     * The cluster and the leaders of the topics asked for, like {@link ClusterView#load}, but a topic that cannot be
     * described goes to {@code failedTopics} instead of failing every topic; one that does not exist is left out (its
     * partitions have no leader). Throws when the cluster itself cannot be described.
     */
    static ClusterView view(AskedView asked, long timeoutMs, Map<String, Exception> failedTopics) throws Exception {
        var cluster = asked.cluster();
        var described = asked.described();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        Collection<Node> nodes = get(cluster.nodes(), deadline);
        String clusterId = get(cluster.clusterId(), deadline);
        Map<TopicPartition, Node> leaders = new HashMap<>();
        Map<String, Uuid> ids = new HashMap<>();
        Map<Uuid, String> names = new HashMap<>();
        for (var entry : described.entrySet()) {
            TopicDescription description;
            try {
                description = get(entry.getValue(), deadline);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                    failedTopics.put(entry.getKey(), e);
                }
                continue;
            } catch (TimeoutException e) {
                failedTopics.put(entry.getKey(), e);
                continue;
            }
            ids.put(description.name(), description.topicId());
            names.put(description.topicId(), description.name());
            description.partitions().forEach(p -> {
                if (p.leader() != null && !p.leader().isEmpty()) {
                    leaders.put(new TopicPartition(description.name(), p.partition()), p.leader());
                }
            });
        }
        return new ClusterView(clusterId, List.copyOf(nodes), Frozen.map(leaders), Frozen.map(ids), Frozen.map(names));
    }

    private static <T> T get(KafkaFuture<T> future, long deadlineNanos) throws Exception {
        return future.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    /**
     * The first complete batch holding each partition's offset or a later one ({@link RawFetch#batchAt}'s answer), read
     * with one Fetch per leader. A grouped answer can bring a partition's part without records although its high
     * watermark is above the offset, or with its batch cut (the answer's byte cap ran out first, or a batch above the
     * partition's cap was not the first of the answer); such partitions are asked again together, and the broker
     * returns the first batch of an answer whole (KIP-74), so each round settles at least one. If a round settles none,
     * the rest are read alone, exactly as before batching. A partition missing from the answer altogether is an error
     * ({@link #settle}), not asked again.
     */
    static Map<TopicPartition, Read<Optional<SourceBatch>>> batchesAt(
            WireClient client, ClusterView view, Map<TopicPartition, Long> offsets) {
        Map<TopicPartition, Read<Optional<SourceBatch>>> reads = new HashMap<>();
        ByLeader grouped = byLeader(offsets.keySet(), view);
        grouped.leaderless().forEach(tp -> reads.put(tp, Read.failed(new IOException("no leader known for " + tp))));
        grouped.brokers().forEach((leader, partitions) -> {
            Map<TopicPartition, Long> pending = new LinkedHashMap<>();
            partitions.forEach(tp -> pending.put(tp, offsets.get(tp)));
            try {
                while (!pending.isEmpty() && round(client, view, leader, pending, reads) > 0) {
                    // the partitions the answer left out or cut go again
                }
            } catch (IOException e) {
                pending.keySet().forEach(tp -> reads.put(tp, Read.failed(e)));
                pending.clear();
            }
            pending.forEach((tp, offset) -> {
                try {
                    reads.put(tp, Read.of(RawFetch.batchAt(client, view, tp, offset)));
                } catch (IOException e) {
                    reads.put(tp, Read.failed(e));
                }
            });
        });
        return reads;
    }

    /** One grouped Fetch of {@code pending}; the partitions it settles move to {@code reads}. How many it settled. */
    private static int round(
            WireClient client,
            ClusterView view,
            Node leader,
            Map<TopicPartition, Long> pending,
            Map<TopicPartition, Read<Optional<SourceBatch>>> reads)
            throws IOException {
        ClientResponse answer = client.call(leader, fetch(view, pending));
        FetchResponse response = (FetchResponse) answer.responseBody();
        Map<TopicPartition, FetchResponseData.PartitionData> data =
                response.responseData(view.topicNames(), answer.requestHeader().apiVersion());
        int settled = 0;
        for (var it = pending.entrySet().iterator(); it.hasNext(); ) {
            var entry = it.next();
            TopicPartition tp = entry.getKey();
            long offset = entry.getValue();
            Optional<Read<Optional<SourceBatch>>> read = settle(tp, offset, data.get(tp));
            if (read.isPresent()) {
                reads.put(tp, read.get());
                it.remove();
                settled++;
            }
        }
        return settled;
    }

    /**
     * What one partition's part of a grouped answer settles: an error (as {@link RawFetch} words it), the batch, or
     * nothing at or above the offset (the high watermark is not above it); empty, to be asked again, when its part
     * carries no complete batch at or above the offset although the high watermark is above it (no records, or its
     * batch cut by the answer's byte cap). A partition missing from the answer altogether ({@code data} null) is
     * settled as an error, UNKNOWN_SERVER_ERROR as {@link RawFetch} has it: a sessionless Fetch is answered for every
     * partition it asks for, so an answer without one is the broker's fault, and asking again could go round forever.
     * Pure.
     */
    static Optional<Read<Optional<SourceBatch>>> settle(
            TopicPartition tp, long offset, FetchResponseData.PartitionData data) {
        Errors error = data == null ? Errors.UNKNOWN_SERVER_ERROR : Errors.forCode(data.errorCode());
        if (error != Errors.NONE) {
            return Optional.of(
                    Read.failed(new IOException("fetch of " + tp + " at " + offset + " failed: " + error.name())));
        }
        MemoryRecords records = (MemoryRecords) FetchResponse.recordsOrFail(data);
        Optional<SourceBatch> batch = SourceBatch.slices(records).stream()
                .filter(b -> b.lastOffset() >= offset)
                .findFirst();
        if (batch.isPresent()) {
            return Optional.of(Read.of(batch));
        }
        if (records.sizeInBytes() == 0 && data.highWatermark() <= offset) {
            return Optional.of(Read.of(Optional.empty()));
        }
        return Optional.empty();
    }
}
