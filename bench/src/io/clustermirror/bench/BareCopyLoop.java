package io.clustermirror.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.ApiVersions;
import org.apache.kafka.clients.ClientRequest;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.clients.ClientUtils;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.DefaultHostResolver;
import org.apache.kafka.clients.ManualMetadataUpdater;
import org.apache.kafka.clients.NetworkClient;
import org.apache.kafka.clients.NetworkClientUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.DefaultRecordBatch;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Records;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.utils.Crc32C;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;

/**
 * The ceiling of the catch-up benchmark, run as its own process: the least a raw batch copier must do, with
 * kafka-clients' classes and nothing of Cluster Mirror. Two lanes (threads), each owning half of the partitions;
 * a lane sends raw Fetch requests of 8 MiB (2 MiB per partition) to the source and produces every fetched batch
 * as it is, restamped for one idempotent producer id per lane (producer id, epoch, base sequence, CRC), with
 * {@code acks=all} and up to 5 produces in flight per partition. No state machine, no offset check, no retry: any
 * error ends the process. Once every partition is copied to the source's end offsets at start it says so and
 * waits until its standard input closes (the benchmark reads its CPU time, then ends it).
 *
 * <p>Usage: {@code BareCopyLoop <source bootstrap> <destination bootstrap> <source topic> <target topic> [<warm-up
 * topic> <warm-up target> ...]}. The target topics exist with as many partitions as their source topics. With warm-up
 * pairs it copies them first, one after the other, the same way, and says "ready" only then (the JIT compiler is still at work after it:
 * README, Catch-up).
 *
 * <p>{@code BareCopyLoop --follow <source bootstrap> <destination bootstrap> <source topic> <target topic>} is the
 * ceiling of the latency benchmark: it copies what the source topic has and what it gets from then on (a Fetch waits
 * up to 500 ms on the broker for the first new byte, as the copy above does) until its standard input closes.
 */
public final class BareCopyLoop {

    static final int LANES = 2;
    static final int FETCH_MAX_BYTES = 8 << 20;
    static final int PARTITION_MAX_BYTES = 2 << 20;
    static final int IN_FLIGHT_PER_PARTITION = 5;
    /** A partition is fetched again only while fewer bytes than this wait for their Produce. */
    static final int QUEUED_BYTES_PER_PARTITION = 4 << 20;
    /** Destination node ids are shifted by this in a lane's one network client, so the clusters' ids cannot clash. */
    static final int DESTINATION_NODE_ID_SHIFT = 1_000_000;

    // fields of a v2 batch header that kafka-clients keeps package-private in DefaultRecordBatch
    private static final int ATTRIBUTES_OFFSET = 21;
    private static final int PRODUCER_ID_OFFSET = 43;
    private static final int PRODUCER_EPOCH_OFFSET = 51;
    private static final int BASE_SEQUENCE_OFFSET = 53;

    private BareCopyLoop() {}

    public static void main(String[] args) throws Exception {
        if (args[0].equals("--follow")) {
            Thread follow = new Thread(
                    () -> {
                        try {
                            copy(args[1], args[2], args[3], args[4], true, true);
                        } catch (Exception e) {
                            e.printStackTrace();
                            System.exit(1); // the benchmark sees it gone
                        }
                    },
                    "bare-follow");
            follow.setDaemon(true);
            follow.start();
            while (System.in.read() >= 0) {
                // copies until the benchmark closes the pipe
            }
            System.exit(0);
        }
        String sourceBootstrap = args[0];
        String destinationBootstrap = args[1];
        for (int warm = 4; warm + 1 < args.length; warm += 2) {
            // warm: the same copy of other topics first, one after the other, each with new clients
            copy(sourceBootstrap, destinationBootstrap, args[warm], args[warm + 1], false, false);
            System.out.println("warmed up on " + args[warm]);
            BenchSupport.syncPageCache(); // what the warm-up wrote is not written back during the measured copy
        }
        copy(sourceBootstrap, destinationBootstrap, args[2], args[3], true, false);
        while (System.in.read() >= 0) {
            // wait for the benchmark to read this process's CPU time and close the pipe
        }
    }

    /**
     * Copies {@code topic} to {@code target} up to the source's end offsets at the start, or for good if it follows;
     * says "ready" first if asked.
     */
    private static void copy(
            String sourceBootstrap,
            String destinationBootstrap,
            String topic,
            String target,
            boolean announce,
            boolean follow)
            throws Exception {
        TopicDescription sourceTopic;
        TopicDescription targetTopic;
        Map<Integer, Long> ends = new HashMap<>();
        try (Admin source = admin(sourceBootstrap);
                Admin destination = admin(destinationBootstrap)) {
            sourceTopic =
                    source.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            targetTopic = destination
                    .describeTopics(List.of(target))
                    .allTopicNames()
                    .get()
                    .get(target);
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            sourceTopic
                    .partitions()
                    .forEach(p -> latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
            source.listOffsets(latest)
                    .all()
                    .get()
                    .forEach((tp, info) -> ends.put(tp.partition(), follow ? Long.MAX_VALUE : info.offset()));
        }
        if (announce) {
            System.out.println("ready");
            System.out.flush();
        }
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int lane = 0; lane < LANES; lane++) {
            Lane work = new Lane(lane, sourceBootstrap, destinationBootstrap, sourceTopic, targetTopic, ends);
            Thread thread = new Thread(
                    () -> {
                        try {
                            work.run();
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                        }
                    },
                    "bare-lane-" + lane);
            thread.start();
            threads.add(thread);
        }
        for (Thread thread : threads) {
            thread.join();
        }
        if (failure.get() != null) {
            failure.get().printStackTrace();
            System.exit(1);
        }
        System.out.println(
                "copied " + ends.values().stream().mapToLong(Long::longValue).sum() + " offsets of " + topic);
        System.out.flush();
    }

    private static Admin admin(String bootstrap) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
    }

    /** One partition as its lane sees it. */
    private static final class Partition {
        final int index;
        final long end;
        long fetchOffset;
        long copiedTo;
        int nextSequence;
        int inFlight;
        long queuedBytes;
        final ArrayDeque<ByteBuffer> queue = new ArrayDeque<>();

        Partition(int index, long end) {
            this.index = index;
            this.end = end;
        }

        boolean done() {
            return copiedTo >= end;
        }
    }

    /** A thread with one network client holding its two connections: one poll waits on both. */
    private static final class Lane {
        private final int lane;
        private final NetworkClient client;
        private final Node source;
        private final Node destination;
        private final String topic;
        private final Uuid topicId;
        private final String target;
        private final Uuid targetId;
        private final Map<Uuid, String> sourceNames;
        private final Map<Integer, Partition> partitions = new LinkedHashMap<>();
        private final Time time = Time.SYSTEM;
        private long producerId;
        private short epoch;
        private boolean fetchInFlight;
        private int fetches;
        /** The record bytes the Fetch answers brought, cut batches included. */
        private long fetchedBytes;

        private int produces;
        /** What a completion handler threw: kafka-clients would only log it, and the lane would wait for good. */
        private RuntimeException failure;

        Lane(
                int lane,
                String sourceBootstrap,
                String destinationBootstrap,
                TopicDescription sourceTopic,
                TopicDescription targetTopic,
                Map<Integer, Long> ends) {
            this.lane = lane;
            this.topic = sourceTopic.name();
            this.topicId = sourceTopic.topicId();
            this.target = targetTopic.name();
            this.targetId = targetTopic.topicId();
            this.sourceNames = Map.of(topicId, topic);
            Node sourceLeader = null;
            Node destinationLeader = null;
            for (var p : sourceTopic.partitions()) {
                if (p.partition() % LANES != lane) {
                    continue;
                }
                Node targetLeader = targetTopic.partitions().get(p.partition()).leader();
                if ((sourceLeader != null && !sourceLeader.equals(p.leader()))
                        || (destinationLeader != null && !destinationLeader.equals(targetLeader))) {
                    throw new IllegalStateException(
                            "the bare loop expects one leader per cluster for a lane's partitions");
                }
                sourceLeader = p.leader();
                destinationLeader = targetLeader;
                partitions.put(p.partition(), new Partition(p.partition(), ends.get(p.partition())));
            }
            this.source = sourceLeader;
            this.destination = new Node(
                    destinationLeader.id() + DESTINATION_NODE_ID_SHIFT,
                    destinationLeader.host(),
                    destinationLeader.port());
            String clientId = "bare-lane-" + lane;
            Map<String, Object> props = new HashMap<>();
            props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, sourceBootstrap + "," + destinationBootstrap);
            props.put(CommonClientConfigs.CLIENT_ID_CONFIG, clientId);
            props.put(CommonClientConfigs.SEND_BUFFER_CONFIG, 1 << 20);
            props.put(CommonClientConfigs.RECEIVE_BUFFER_CONFIG, 1 << 20);
            this.client = ClientUtils.createNetworkClient(
                    new AdminClientConfig(props),
                    clientId,
                    new Metrics(),
                    "bare-lane",
                    new LogContext("[" + clientId + "] "),
                    new ApiVersions(),
                    time,
                    IN_FLIGHT_PER_PARTITION,
                    30_000,
                    new ManualMetadataUpdater(List.of(source, destination)),
                    new DefaultHostResolver());
        }

        void run() throws IOException {
            long started = time.milliseconds();
            initProducerId();
            System.out.printf("lane %d: producer id %d after %d ms%n", lane, producerId, time.milliseconds() - started);
            while (!partitions.values().stream().allMatch(Partition::done)) {
                if (failure != null) {
                    throw failure;
                }
                maybeFetch();
                maybeProduce();
                client.poll(500, time.milliseconds());
            }
            System.out.printf(
                    "lane %d: copied after %d ms, %d Fetch and %d Produce requests, %d record bytes fetched%n",
                    lane, time.milliseconds() - started, fetches, produces, fetchedBytes);
            client.close();
        }

        /** Retried while the destination's transaction coordinator loads (its first producer id), up to 60 s. */
        private void initProducerId() throws IOException {
            long deadline = time.milliseconds() + 60_000;
            while (true) {
                if (!NetworkClientUtils.awaitReady(client, destination, time, 30_000)) {
                    throw new IOException("lane " + lane + ": destination not ready");
                }
                ClientRequest request = client.newClientRequest(
                        destination.idString(),
                        new InitProducerIdRequest.Builder(new InitProducerIdRequestData()
                                .setTransactionalId(null)
                                .setTransactionTimeoutMs(60_000)),
                        time.milliseconds(),
                        true);
                InitProducerIdResponse response = (InitProducerIdResponse)
                        NetworkClientUtils.sendAndReceive(client, request, time).responseBody();
                Errors error = Errors.forCode(response.data().errorCode());
                if (error.exception() instanceof RetriableException && time.milliseconds() < deadline) {
                    time.sleep(100);
                    continue;
                }
                check(error, "InitProducerId");
                producerId = response.data().producerId();
                epoch = response.data().producerEpoch();
                return;
            }
        }

        private void maybeFetch() {
            if (fetchInFlight || !client.ready(source, time.milliseconds())) {
                return;
            }
            Map<TopicPartition, FetchRequest.PartitionData> wanted = new LinkedHashMap<>();
            for (Partition p : partitions.values()) {
                if (p.fetchOffset < p.end && p.queuedBytes < QUEUED_BYTES_PER_PARTITION) {
                    wanted.put(
                            new TopicPartition(topic, p.index),
                            new FetchRequest.PartitionData(
                                    topicId,
                                    p.fetchOffset,
                                    -1,
                                    PARTITION_MAX_BYTES,
                                    Optional.empty(),
                                    Optional.empty()));
                }
            }
            if (wanted.isEmpty()) {
                return;
            }
            FetchRequest.Builder fetch = FetchRequest.Builder.forConsumer(ApiKeys.FETCH.latestVersion(), 500, 1, wanted)
                    .isolationLevel(IsolationLevel.READ_UNCOMMITTED)
                    .setMaxBytes(FETCH_MAX_BYTES);
            fetchInFlight = true;
            fetches++;
            client.send(
                    client.newClientRequest(
                            source.idString(),
                            fetch,
                            time.milliseconds(),
                            true,
                            30_000,
                            response -> guarded(() -> onFetch(response))),
                    time.milliseconds());
        }

        private void onFetch(ClientResponse response) {
            fetchInFlight = false;
            failIfLost(response, "Fetch");
            FetchResponse fetch = (FetchResponse) response.responseBody();
            Map<TopicPartition, FetchResponseData.PartitionData> data =
                    fetch.responseData(sourceNames, response.requestHeader().apiVersion());
            data.forEach((tp, partitionData) -> {
                check(Errors.forCode(partitionData.errorCode()), "Fetch of " + tp);
                Partition p = partitions.get(tp.partition());
                ByteBuffer buffer = ((MemoryRecords) FetchResponse.recordsOrFail(partitionData)).buffer();
                int position = buffer.position();
                fetchedBytes += buffer.remaining();
                while (position + Records.HEADER_SIZE_UP_TO_MAGIC <= buffer.limit()) {
                    int size = buffer.getInt(position + Records.SIZE_OFFSET) + Records.LOG_OVERHEAD;
                    if (position + size > buffer.limit()) {
                        break; // the partial batch at the end of a fetch
                    }
                    ByteBuffer batch = buffer.duplicate()
                            .position(position)
                            .limit(position + size)
                            .slice();
                    long next = batch.getLong(Records.OFFSET_OFFSET)
                            + batch.getInt(DefaultRecordBatch.LAST_OFFSET_DELTA_OFFSET)
                            + 1;
                    if (next > p.fetchOffset) {
                        p.queue.add(batch);
                        p.queuedBytes += size;
                        p.fetchOffset = next;
                    }
                    position += size;
                }
            });
        }

        private void maybeProduce() {
            while (client.ready(destination, time.milliseconds())) {
                ProduceRequestData.TopicProduceData topicData = new ProduceRequestData.TopicProduceData()
                        .setName(target)
                        .setTopicId(targetId);
                Map<Integer, long[]> sent = new HashMap<>();
                for (Partition p : partitions.values()) {
                    if (p.inFlight >= IN_FLIGHT_PER_PARTITION || p.queue.isEmpty()) {
                        continue;
                    }
                    ByteBuffer batch = p.queue.poll();
                    p.queuedBytes -= batch.limit();
                    long base = batch.getLong(Records.OFFSET_OFFSET);
                    int records = batch.getInt(DefaultRecordBatch.LAST_OFFSET_DELTA_OFFSET) + 1;
                    restamp(batch, p.nextSequence);
                    p.nextSequence = DefaultRecordBatch.incrementSequence(p.nextSequence, records);
                    p.inFlight++;
                    sent.put(p.index, new long[] {base, base + records});
                    topicData
                            .partitionData()
                            .add(new ProduceRequestData.PartitionProduceData()
                                    .setIndex(p.index)
                                    .setRecords(MemoryRecords.readableRecords(batch)));
                }
                if (sent.isEmpty()) {
                    return;
                }
                ProduceRequestData.TopicProduceDataCollection topics =
                        new ProduceRequestData.TopicProduceDataCollection();
                topics.add(topicData);
                ProduceRequestData data = new ProduceRequestData()
                        .setAcks((short) -1)
                        .setTimeoutMs(30_000)
                        .setTopicData(topics);
                produces++;
                client.send(
                        client.newClientRequest(
                                destination.idString(),
                                ProduceRequest.builder(data),
                                time.milliseconds(),
                                true,
                                30_000,
                                response -> guarded(() -> onProduce(response, sent))),
                        time.milliseconds());
            }
        }

        /** The destination is empty at the start, so each batch must land at its source offset: checked here. */
        private void onProduce(ClientResponse response, Map<Integer, long[]> sent) {
            failIfLost(response, "Produce");
            ProduceResponse produce = (ProduceResponse) response.responseBody();
            for (ProduceResponseData.TopicProduceResponse topicResponse :
                    produce.data().responses()) {
                for (ProduceResponseData.PartitionProduceResponse result : topicResponse.partitionResponses()) {
                    check(Errors.forCode(result.errorCode()), "Produce to " + target + "-" + result.index());
                    long[] offsets = sent.get(result.index());
                    if (result.baseOffset() != offsets[0]) {
                        throw new IllegalStateException("lane " + lane + ": batch of source offset " + offsets[0]
                                + " landed at " + result.baseOffset() + " on " + target + "-" + result.index());
                    }
                    Partition p = partitions.get(result.index());
                    p.inFlight--;
                    p.copiedTo = Math.max(p.copiedTo, offsets[1]);
                }
            }
        }

        /** Base offset 0 (the broker assigns offsets), this lane's producer id, epoch and sequence, a new CRC. */
        private void restamp(ByteBuffer batch, int baseSequence) {
            batch.putLong(Records.OFFSET_OFFSET, 0L);
            batch.putLong(PRODUCER_ID_OFFSET, producerId);
            batch.putShort(PRODUCER_EPOCH_OFFSET, epoch);
            batch.putInt(BASE_SEQUENCE_OFFSET, baseSequence);
            long crc = Crc32C.compute(batch, ATTRIBUTES_OFFSET, batch.limit() - ATTRIBUTES_OFFSET);
            batch.putInt(DefaultRecordBatch.CRC_OFFSET, (int) crc);
        }

        private void guarded(Runnable handler) {
            try {
                handler.run();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                }
            }
        }

        private void failIfLost(ClientResponse response, String what) {
            if (response.wasDisconnected() || response.wasTimedOut() || response.versionMismatch() != null) {
                throw new IllegalStateException("lane " + lane + ": " + what + " lost (disconnected, timed out or"
                        + " no common version): the bare loop does not retry");
            }
        }

        private void check(Errors error, String what) {
            if (error != Errors.NONE) {
                throw new IllegalStateException("lane " + lane + ": " + what + " failed: " + error.name());
            }
        }
    }
}
