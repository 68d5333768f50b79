package io.clustermirror.bench;

import io.clustermirror.embedded.KafkaBrokerProcess;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Consistency verification against catch-up, on the same data in one run: a backlog of incompressible 1 KiB records
 * (lz4) is mirrored from an empty destination (catch-up MB/s: the mirror's log bytes over the time until both ends are
 * equal), then verified by {@code POST /v1/mirrors/{name}/verifications} (verification MB/s: the log bytes of one
 * cluster compared, over the time from the request to DONE; it reads each byte on both clusters). Unthrottled. Run
 * with {@code bench/verify.sh [partitions] [records]}.
 */
public final class VerifyBenchmark {

    private static final String TOPIC = "verify.t";
    private static final Pattern STATE = Pattern.compile("\"state\":\"([A-Z]+)\"");
    private static final Pattern VERDICT = Pattern.compile("\"verdict\":\"([A-Z]+)\"");
    private static final Pattern BYTES = Pattern.compile("\"bytesCompared\":(\\d+)");
    private static final Pattern ID = Pattern.compile("\"id\":\"([^\"]+)\"");

    private VerifyBenchmark() {}

    public static void main(String[] args) throws Exception {
        int partitions = args.length > 0 ? Integer.parseInt(args[0]) : 8;
        int records = args.length > 1 ? Integer.parseInt(args[1]) : 500_000;
        Path root = Path.of(
                        "target", "bench", "verify-" + ProcessHandle.current().pid())
                .toAbsolutePath();
        KafkaBrokerProcess[] clusters = BenchSupport.startClusters(root);
        try (KafkaBrokerProcess source = clusters[0];
                KafkaBrokerProcess destination = clusters[1]) {
            try (Admin admin = BenchSupport.admin(source)) {
                admin.createTopics(List.of(new NewTopic(TOPIC, partitions, (short) 1)))
                        .all()
                        .get();
            }
            System.out.printf("Producing %,d x 1 KiB records into %d partitions...%n", records, partitions);
            produce(source, records);
            try (BenchSupport.Service service = BenchSupport.startService(destination, root.resolve("service"))) {
                service.post(
                        "/v1/mirrors",
                        "{\"name\":\"bench\",\"config\":{\"bootstrap.servers\":\"" + source.bootstrapServers()
                                + "\"}}");
                long started = System.nanoTime();
                service.post("/v1/mirrors/bench/topics:start", "{\"topics\":[\"" + TOPIC + "\"]}");
                awaitEqual(source, destination, Duration.ofMinutes(10));
                double catchUpSeconds = (System.nanoTime() - started) / 1e9;
                long logBytes = logBytes(service);
                double catchUpMBs = logBytes / 1e6 / catchUpSeconds;
                System.out.printf(
                        "Catch-up:     %,d log bytes in %.1f s = %.1f MB/s%n", logBytes, catchUpSeconds, catchUpMBs);

                long verifyStarted = System.nanoTime();
                String id = start(service);
                String done = awaitDone(service, id, Duration.ofMinutes(10));
                double verifySeconds = (System.nanoTime() - verifyStarted) / 1e9;
                long compared = Long.parseLong(group(BYTES, done));
                double verifyMBs = compared / 2 / 1e6 / verifySeconds;
                String result = String.format(
                        "Catch-up:     %,d log bytes in %.1f s = %.1f MB/s%n"
                                + "Verification: %,d log bytes of each cluster (%,d compared) in %.1f s = %.1f MB/s, "
                                + "verdict %s%n"
                                + "Ratio verification / catch-up: %.2f   (%d partitions, %,d records of 1 KiB, lz4)%n",
                        logBytes,
                        catchUpSeconds,
                        catchUpMBs,
                        compared / 2,
                        compared,
                        verifySeconds,
                        verifyMBs,
                        group(VERDICT, done),
                        verifyMBs / catchUpMBs,
                        partitions,
                        records);
                System.out.print(result);
                Files.writeString(Path.of("bench", "results", "verify.txt"), result);
            }
        }
    }

    private static String start(BenchSupport.Service service) throws Exception {
        HttpResponse<String> response = service.http()
                .send(
                        HttpRequest.newBuilder(URI.create(service.base() + "/v1/mirrors/bench/verifications"))
                                .header("Content-Type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString("{\"topics\":[\"" + TOPIC + "\"]}"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 202) {
            throw new IllegalStateException("verification answered " + response.statusCode() + ": " + response.body());
        }
        return group(ID, response.body());
    }

    private static String awaitDone(BenchSupport.Service service, String id, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            String body = service.get("/v1/mirrors/bench/verifications/" + id);
            String state = group(STATE, body);
            if (!"RUNNING".equals(state)) {
                if (!"DONE".equals(state)) {
                    throw new IllegalStateException("verification ended " + body);
                }
                return body;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("verification not done within " + timeout + ": " + body);
            }
            Thread.sleep(100);
        }
    }

    private static String group(Pattern pattern, String text) {
        Matcher matcher = pattern.matcher(text);
        if (!matcher.find()) {
            throw new IllegalStateException(pattern + " not in " + text);
        }
        return matcher.group(1);
    }

    private static void produce(KafkaBrokerProcess cluster, int records) {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ProducerConfig.LINGER_MS_CONFIG, 10);
        props.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
        props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        byte[][] values = new byte[4096][1024];
        java.util.Random random = new java.util.Random(42);
        for (byte[] value : values) {
            random.nextBytes(value);
        }
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < records; i++) {
                producer.send(new ProducerRecord<>(TOPIC, values[i & 4095]));
            }
            producer.flush();
        }
    }

    private static Map<TopicPartition, Long> ends(KafkaBrokerProcess cluster) throws Exception {
        try (Admin admin = BenchSupport.admin(cluster)) {
            var partitions = admin.describeTopics(List.of(TOPIC))
                    .allTopicNames()
                    .get()
                    .get(TOPIC)
                    .partitions();
            Map<TopicPartition, OffsetSpec> request = new HashMap<>();
            partitions.forEach(p -> request.put(new TopicPartition(TOPIC, p.partition()), OffsetSpec.latest()));
            Map<TopicPartition, Long> ends = new HashMap<>();
            admin.listOffsets(request).all().get().forEach((tp, info) -> ends.put(tp, info.offset()));
            return ends;
        }
    }

    private static void awaitEqual(KafkaBrokerProcess from, KafkaBrokerProcess to, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try {
                if (ends(from).equals(ends(to))) {
                    return;
                }
            } catch (Exception e) {
                // the destination topic is not there yet
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("not converged within " + timeout);
            }
            Thread.sleep(100);
        }
    }

    private static long logBytes(BenchSupport.Service service) throws Exception {
        for (String line : service.get("/q/metrics").split("\n")) {
            if (line.startsWith("cluster_mirror_bytes_total{mirror=\"bench\"}")) {
                return (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return 0;
    }
}
