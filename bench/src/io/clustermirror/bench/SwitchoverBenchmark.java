package io.clustermirror.bench;

import io.clustermirror.embedded.KafkaBrokerProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The disaster-recovery cycle, timed: (1) a promote of a 100-partition topic under a steady load (the producer runs
 * until the fence stops it), its duration beyond draining the lag; (2) the failback re-copy (the old primary's topic
 * recreated and copied back from the new one) against the catch-up of the same backlog in the first place, both in
 * MB/s of log bytes, side by side in one run. Run with {@code bench/switchover.sh [partitions] [backlog records]}.
 */
public final class SwitchoverBenchmark {

    private static final String TOPIC = "switchover.t";
    private static final AtomicLong COUNTER = new AtomicLong();
    /** 4,096 different incompressible 1 KiB values: no batch repeats one, so lz4 cannot shrink the log. */
    private static final byte[][] VALUES = new byte[4096][1024];

    static {
        java.util.Random random = new java.util.Random(42);
        for (byte[] value : VALUES) {
            random.nextBytes(value);
        }
    }

    private SwitchoverBenchmark() {}

    public static void main(String[] args) throws Exception {
        int partitions = args.length > 0 ? Integer.parseInt(args[0]) : 100;
        int backlog = args.length > 1 ? Integer.parseInt(args[1]) : 200_000;
        Path root = Path.of(
                        "target",
                        "bench",
                        "switchover-" + ProcessHandle.current().pid())
                .toAbsolutePath();
        // A has an authorizer (the promote fences it); everyone may do anything until the fence says otherwise
        Map<String, String> authorizer = Map.of(
                "authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                "allow.everyone.if.no.acl.found", "true");
        KafkaBrokerProcess[] clusters = BenchSupport.startClusters(root, authorizer);
        try (KafkaBrokerProcess a = clusters[0];
                KafkaBrokerProcess b = clusters[1]) {
            try (Admin admin = BenchSupport.admin(a)) {
                admin.createAcls(List.of(
                                allowAll(ResourceType.TOPIC, "*"),
                                allowAll(ResourceType.GROUP, "*"),
                                allowAll(ResourceType.TRANSACTIONAL_ID, "*"),
                                allowAll(ResourceType.CLUSTER, "kafka-cluster")))
                        .all()
                        .get();
                admin.createTopics(List.of(new NewTopic(TOPIC, partitions, (short) 1)))
                        .all()
                        .get();
            }
            System.out.printf(
                    "Producing a backlog of %,d x 1 KiB records into %d partitions of A...%n", backlog, partitions);
            try (KafkaProducer<byte[], byte[]> producer = producer(a)) {
                for (int i = 0; i < backlog; i++) {
                    producer.send(new ProducerRecord<>(TOPIC, VALUES[(int) (COUNTER.getAndIncrement() & 4095)]));
                }
                producer.flush();
            }
            long backlogBytes;
            double catchUpMBs;
            try (BenchSupport.Service onB = BenchSupport.startService(b, root.resolve("b"))) {
                onB.post(
                        "/v1/mirrors",
                        mirror("a-to-b", a.bootstrapServers(), ",\"mirror.truncation.policy\":\"recreate\""));
                long started = System.nanoTime();
                onB.post("/v1/mirrors/a-to-b/topics:start", "{\"topics\":[\"" + TOPIC + "\"]}");
                awaitEqual(a, b, Duration.ofMinutes(10));
                double seconds = (System.nanoTime() - started) / 1e9;
                backlogBytes = logBytes(onB, "a-to-b");
                catchUpMBs = backlogBytes / 1e6 / seconds;
                System.out.printf(
                        "Catch-up a-to-b: %,d log bytes in %.1f s = %.1f MB/s%n", backlogBytes, seconds, catchUpMBs);

                // (1) a steady load, then the promote
                AtomicBoolean fenced = new AtomicBoolean();
                AtomicLong sent = new AtomicLong();
                CompletableFuture<Void> load = CompletableFuture.runAsync(() -> steadyLoad(a, 2_000, fenced, sent));
                Thread.sleep(10_000);
                long lag = lag(a, b);
                long promoteStarted = System.nanoTime();
                onB.post("/v1/mirrors/a-to-b/topics:promote", "{\"topics\":[\"" + TOPIC + "\"],\"timeoutMs\":120000}");
                double promoteSeconds = (System.nanoTime() - promoteStarted) / 1e9;
                load.get();
                System.out.printf(
                        "Promote of %d partitions under a steady load of 2,000 records/s (%,d sent, lag %,d records when it "
                                + "began): %.2f s   (target <= 5 s beyond draining the lag)%n",
                        partitions, sent.get(), lag, promoteSeconds);

                // (2) failback: after the switchover both sides took writes (A's fence lifted by the operator), so B,
                // the old mirror destination, now holds records A does not: starting a-to-b again (policy recreate)
                // preserves them, recreates B's topic and copies it all back from A
                try (Admin admin = BenchSupport.admin(a)) {
                    admin.deleteAcls(List.of(new AclBinding(
                                            new ResourcePattern(ResourceType.TOPIC, TOPIC, PatternType.LITERAL),
                                            new AccessControlEntry(
                                                    "User:*", "*", AclOperation.WRITE, AclPermissionType.DENY))
                                    .toFilter()))
                            .all()
                            .get();
                }
                produce(b, 1_000);
                produce(a, 1_000);
                long bytesBefore = logBytes(onB, "a-to-b");
                long recopyStarted = System.nanoTime();
                onB.post("/v1/mirrors/a-to-b/topics:start", "{\"topics\":[\"" + TOPIC + "\"]}");
                awaitEqual(a, b, Duration.ofMinutes(10));
                double recopySeconds = (System.nanoTime() - recopyStarted) / 1e9;
                long bytes = logBytes(onB, "a-to-b") - bytesBefore;
                double recopyMBs = bytes / 1e6 / recopySeconds;
                System.out.printf(
                        "Failback re-copy (1,000 divergent records preserved, topic recreated, %,d log bytes copied back): "
                                + "%.1f s = %.1f MB/s%n",
                        bytes, recopySeconds, recopyMBs);
                System.out.printf("%nFailback re-copy vs catch-up, same run: %.2fx%n", recopyMBs / catchUpMBs);
            }
        }
    }

    private static void produce(KafkaBrokerProcess cluster, int records) {
        try (KafkaProducer<byte[], byte[]> producer = producer(cluster)) {
            for (int i = 0; i < records; i++) {
                producer.send(new ProducerRecord<>(TOPIC, VALUES[(int) (COUNTER.getAndIncrement() & 4095)]));
            }
            producer.flush();
        }
    }

    private static String mirror(String name, String bootstrap, String more) {
        return "{\"name\":\"" + name + "\",\"config\":{\"bootstrap.servers\":\"" + bootstrap + "\"" + more + "}}";
    }

    private static AclBinding allowAll(ResourceType type, String name) {
        return new AclBinding(
                new ResourcePattern(type, name, PatternType.LITERAL),
                new AccessControlEntry("User:ANONYMOUS", "*", AclOperation.ALL, AclPermissionType.ALLOW));
    }

    private static KafkaProducer<byte[], byte[]> producer(KafkaBrokerProcess cluster) {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ProducerConfig.LINGER_MS_CONFIG, 10);
        props.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
        props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60_000);
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    /** Sends {@code perSecond} records a second until the source refuses them (the fence). */
    private static void steadyLoad(KafkaBrokerProcess a, int perSecond, AtomicBoolean fenced, AtomicLong sent) {
        try (KafkaProducer<byte[], byte[]> producer = producer(a)) {
            long next = System.nanoTime();
            while (!fenced.get()) {
                for (int i = 0; i < perSecond / 100 && !fenced.get(); i++) {
                    producer.send(
                            new ProducerRecord<>(TOPIC, VALUES[(int) (COUNTER.getAndIncrement() & 4095)]), (m, e) -> {
                                if (e != null) {
                                    fenced.set(true);
                                } else {
                                    sent.incrementAndGet();
                                }
                            });
                }
                next += 10_000_000L;
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static Map<TopicPartition, Long> ends(KafkaBrokerProcess cluster) throws Exception {
        try (Admin admin = BenchSupport.admin(cluster)) {
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            admin.describeTopics(List.of(TOPIC))
                    .allTopicNames()
                    .get()
                    .get(TOPIC)
                    .partitions()
                    .forEach(p -> latest.put(new TopicPartition(TOPIC, p.partition()), OffsetSpec.latest()));
            Map<TopicPartition, Long> ends = new HashMap<>();
            admin.listOffsets(latest).all().get().forEach((tp, info) -> ends.put(tp, info.offset()));
            return ends;
        }
    }

    private static long lag(KafkaBrokerProcess from, KafkaBrokerProcess to) throws Exception {
        Map<TopicPartition, Long> source = ends(from);
        Map<TopicPartition, Long> destination = ends(to);
        return source.entrySet().stream()
                .mapToLong(e -> Math.max(0, e.getValue() - destination.getOrDefault(e.getKey(), 0L)))
                .sum();
    }

    private static void awaitEqual(KafkaBrokerProcess from, KafkaBrokerProcess to, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!converged(from, to)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("not converged within " + timeout);
            }
            Thread.sleep(100);
        }
    }

    /** Whether both ends agree; false while the destination topic is being recreated. */
    private static boolean converged(KafkaBrokerProcess from, KafkaBrokerProcess to) {
        try {
            return ends(from).equals(ends(to));
        } catch (Exception e) {
            return false;
        }
    }

    /** The log bytes the mirror's data plane has appended. */
    private static long logBytes(BenchSupport.Service service, String mirror) throws Exception {
        for (String line : service.get("/q/metrics").split("\n")) {
            if (line.startsWith("cluster_mirror_bytes_total{mirror=\"" + mirror + "\"}")) {
                return (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return 0;
    }
}
