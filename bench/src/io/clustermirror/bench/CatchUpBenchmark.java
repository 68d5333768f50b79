package io.clustermirror.bench;

import io.clustermirror.embedded.KafkaBrokerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Catch-up of a fixed backlog, measured side by side in one run: Cluster Mirror (the packaged service,
 * raw batch passthrough) against a KafkaConsumer→KafkaProducer copy of the same data, each in its own
 * process, between the same two local brokers. Prints throughput and CPU of each copier and the ratios.
 * Run with {@code bench/catch-up.sh [records]}.
 */
public final class CatchUpBenchmark {

    private static final int PARTITIONS = 8;
    private static final int RECORD_BYTES = 1024;

    private CatchUpBenchmark() {}

    record Result(
            String copier, double seconds, double cpuSeconds, long records, long logBytes, double brokerCpuSeconds) {
        double mbPerSecond() {
            return logBytes / 1e6 / seconds;
        }

        double recordsPerSecond() {
            return records / seconds;
        }

        double cpuSecondsPerGb() {
            return cpuSeconds / (logBytes / 1e9);
        }
    }

    public static void main(String[] args) throws Exception {
        long records = args.length > 0 ? Long.parseLong(args[0]) : 1_000_000;
        Path root = Path.of("target", "bench", "run-" + ProcessHandle.current().pid())
                .toAbsolutePath();
        String classpath = KafkaBrokerProcess.classpathFrom(Path.of("target", "kafka-broker.classpath"));
        KafkaBrokerProcess[] clusters = BenchSupport.startClusters(root);
        try (KafkaBrokerProcess source = clusters[0];
                KafkaBrokerProcess destination = clusters[1]) {
            System.out.printf(
                    "Producing %,d x %d B lz4 records into %d partitions...%n", records, RECORD_BYTES, PARTITIONS);
            try (Admin admin = admin(source)) {
                admin.createTopics(List.of(new NewTopic("bench", PARTITIONS, (short) 1)))
                        .all()
                        .get();
            }
            try (Admin admin = admin(destination)) {
                admin.createTopics(List.of(
                                new NewTopic("bench-copy", PARTITIONS, (short) 1),
                                new NewTopic("bench-copy-tuned", PARTITIONS, (short) 1),
                                new NewTopic("warmup", PARTITIONS, (short) 1)))
                        .all()
                        .get();
            }
            produce(source.bootstrapServers(), "bench", records);
            System.out.println("Warming up the destination broker...");
            produce(destination.bootstrapServers(), "warmup", Math.min(records, 200_000));
            long logBytes = logBytes(source, "bench");
            System.out.printf("Backlog: %,d records, %,d log bytes%n", records, logBytes);

            List<Result> results = new ArrayList<>();
            results.add(mirror(source, destination, root, records, logBytes));
            results.add(copy(source, destination, classpath, records, logBytes, "defaults", "bench-copy"));
            results.add(copy(source, destination, classpath, records, logBytes, "tuned", "bench-copy-tuned"));
            print(results);
        }
    }

    private static Result mirror(
            KafkaBrokerProcess source, KafkaBrokerProcess destination, Path root, long records, long logBytes)
            throws Exception {
        try (BenchSupport.Service service = BenchSupport.startService(destination, root)) {
            service.post(
                    "/v1/mirrors",
                    "{\"name\":\"bench\",\"config\":{\"bootstrap.servers\":\"" + source.bootstrapServers() + "\"}}");
            double cpuBefore = service.cpuSeconds();
            double brokersBefore = cpuSeconds(source) + cpuSeconds(destination);
            long started = System.nanoTime();
            service.post("/v1/mirrors/bench/topics:start", "{\"topics\":[\"bench\"]}");
            awaitEnd(destination, "bench", records);
            double seconds = (System.nanoTime() - started) / 1e9;
            double cpu = service.cpuSeconds() - cpuBefore;
            double brokers = cpuSeconds(source) + cpuSeconds(destination) - brokersBefore;
            service.get("/q/metrics")
                    .lines()
                    .filter(l ->
                            l.startsWith("cluster_mirror_requests_total") || l.startsWith("cluster_mirror_bytes_total"))
                    .forEach(l -> System.out.println("  mirror " + l));
            return new Result("cluster-mirror (batch passthrough)", seconds, cpu, records, logBytes, brokers);
        }
    }

    private static Result copy(
            KafkaBrokerProcess source,
            KafkaBrokerProcess destination,
            String classpath,
            long records,
            long logBytes,
            String settings,
            String target)
            throws Exception {
        String cp = classpath
                + java.io.File.pathSeparator
                + Path.of("target", "test-classes").toAbsolutePath();
        Process copier = new ProcessBuilder(
                        java(),
                        "-Xmx1g",
                        "-cp",
                        cp,
                        ConsumerProducerCopy.class.getName(),
                        source.bootstrapServers(),
                        destination.bootstrapServers(),
                        "bench",
                        target,
                        String.valueOf(records),
                        settings)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        long started = System.nanoTime();
        double brokersBefore = cpuSeconds(source) + cpuSeconds(destination);
        double cpu = 0;
        while (copier.isAlive()) {
            cpu = Math.max(cpu, cpuSeconds(copier));
            if (endOffsets(destination, target) >= records) {
                break;
            }
            Thread.sleep(100);
        }
        awaitEnd(destination, target, records);
        double seconds = (System.nanoTime() - started) / 1e9;
        cpu = Math.max(cpu, cpuSeconds(copier));
        copier.destroy();
        double brokers = cpuSeconds(source) + cpuSeconds(destination) - brokersBefore;
        String label =
                settings.equals("tuned") ? "copy, tuned (linger 10ms, 256KiB batch)" : "copy, client defaults + lz4";
        return new Result(label, seconds, cpu, records, logBytes, brokers);
    }

    private static void print(List<Result> results) {
        System.out.println();
        System.out.printf(
                "%-42s %9s %10s %12s %9s %12s %14s%n",
                "copier", "seconds", "MB/s", "records/s", "CPU-s", "CPU-s per GB", "broker CPU-s");
        for (Result r : results) {
            System.out.printf(
                    "%-42s %9.1f %10.1f %,12.0f %9.1f %12.1f %14.1f%n",
                    r.copier(),
                    r.seconds(),
                    r.mbPerSecond(),
                    r.recordsPerSecond(),
                    r.cpuSeconds(),
                    r.cpuSecondsPerGb(),
                    r.brokerCpuSeconds());
        }
        Result mirror = results.get(0);
        System.out.println();
        for (Result copy : results.subList(1, results.size())) {
            System.out.printf(
                    "vs %-40s throughput %.2fx (target >= 2.5x), CPU per GB %.2f (target <= 0.33)%n",
                    copy.copier() + ":",
                    mirror.mbPerSecond() / copy.mbPerSecond(),
                    mirror.cpuSecondsPerGb() / copy.cpuSecondsPerGb());
        }
        System.out.println(
                "MB/s counts the source's log bytes (compressed, as stored). Both copiers ran between the same two local brokers.");
    }

    private static void produce(String bootstrap, String topic, long records) throws Exception {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        props.put(ProducerConfig.LINGER_MS_CONFIG, 10);
        props.put(ProducerConfig.BATCH_SIZE_CONFIG, 64 * 1024);
        props.put(ProducerConfig.ACKS_CONFIG, "1");
        String[] words = {
            "order",
            "payment",
            "customer",
            "amount",
            "currency",
            "EUR",
            "USD",
            "shipped",
            "pending",
            "warehouse",
            "priority",
            "express",
            "standard",
            "invoice",
            "refund",
            "status"
        };
        Random random = new Random(42);
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (long i = 0; i < records; i++) {
                StringBuilder value = new StringBuilder(RECORD_BYTES);
                while (value.length() < RECORD_BYTES - 20) {
                    value.append(words[random.nextInt(words.length)])
                            .append(random.nextInt(1000))
                            .append(' ');
                }
                value.setLength(RECORD_BYTES);
                producer.send(new ProducerRecord<>(
                        topic, ("key-" + i).getBytes(), value.toString().getBytes()));
            }
            producer.flush();
        }
    }

    private static long logBytes(KafkaBrokerProcess broker, String topic) throws Exception {
        long bytes = 0;
        for (int p = 0; p < PARTITIONS; p++) {
            try (var files = Files.list(broker.logDir().resolve(topic + "-" + p))) {
                for (Path f : files.filter(f -> f.toString().endsWith(".log")).toList()) {
                    bytes += Files.size(f);
                }
            }
        }
        return bytes;
    }

    private static void awaitEnd(KafkaBrokerProcess broker, String topic, long records) throws Exception {
        long deadline = System.currentTimeMillis() + 1_800_000;
        while (endOffsets(broker, topic) < records) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException(topic + " did not reach " + records);
            }
            Thread.sleep(100);
        }
    }

    private static final Map<String, Admin> ADMINS = new HashMap<>();

    private static long endOffsets(KafkaBrokerProcess broker, String topic) throws Exception {
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            request.put(new TopicPartition(topic, p), OffsetSpec.latest());
        }
        Admin admin = ADMINS.computeIfAbsent(broker.bootstrapServers(), b -> admin(broker));
        return admin.listOffsets(request).all().get().values().stream()
                .mapToLong(i -> i.offset())
                .sum();
    }

    private static double cpuSeconds(KafkaBrokerProcess broker) {
        return BenchSupport.cpuSeconds(broker);
    }

    private static double cpuSeconds(Process process) {
        return BenchSupport.cpuSeconds(process);
    }

    private static Admin admin(KafkaBrokerProcess broker) {
        return BenchSupport.admin(broker);
    }

    private static String java() {
        return BenchSupport.java();
    }
}
