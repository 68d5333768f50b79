package io.clustermirror.bench;

import io.clustermirror.embedded.KafkaBrokerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * End-to-end latency of the service at a steady rate: a producer writes 1,000-byte incompressible records into an
 * 8-partition source topic at a fixed rate (default 10 MB/s) while the service mirrors it; a consumer on the
 * destination notes when each record becomes visible there. Because a mirror keeps offsets, a record is the same
 * (partition, offset) on both sides: its latency is the time it became visible on the destination minus the time
 * the source acknowledged its append (the producer's callback, acks=1). The latency from the producer's
 * {@code send()} (its batching included) is printed beside it. Records sent in a warm-up (default 10 s) are left
 * out; then p50, p90, p99, p99.9 and max over the measured window (default 60 s), and the percentile curve in
 * {@code bench/results/latency.png}. Producer, consumer and service run on this machine's clock (one JVM measures
 * both ends).
 *
 * <p>Run with {@code bench/latency.sh [seconds] [MB/s] [warm-up seconds]}.
 */
public final class LatencyBenchmark {

    private static final int PARTITIONS = 8;
    private static final int RECORD_BYTES = 1000;
    private static final String TOPIC = "latency";

    private LatencyBenchmark() {}

    /** Per partition, one value per offset (0 = none yet), grown as needed; each written by one thread only. */
    private static final class Times {
        private final long[][] byPartition = new long[PARTITIONS][1 << 16];

        void put(int partition, long offset, long nanos) {
            long[] times = byPartition[partition];
            if (offset >= times.length) {
                times = Arrays.copyOf(times, (int) Math.max(offset + 1, times.length * 2L));
                byPartition[partition] = times;
            }
            times[(int) offset] = nanos;
        }

        long get(int partition, long offset) {
            long[] times = byPartition[partition];
            return offset < times.length ? times[(int) offset] : 0;
        }
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 60;
        double mbPerSecond = args.length > 1 ? Double.parseDouble(args[1]) : 10;
        int warmUp = args.length > 2 ? Integer.parseInt(args[2]) : 10;
        double recordsPerSecond = mbPerSecond * 1e6 / RECORD_BYTES;
        Path root = Path.of(
                        "target", "bench", "latency-" + ProcessHandle.current().pid())
                .toAbsolutePath();
        KafkaBrokerProcess[] clusters = BenchSupport.startClusters(root);
        try (KafkaBrokerProcess source = clusters[0];
                KafkaBrokerProcess destination = clusters[1];
                BenchSupport.Service service = BenchSupport.startService(destination, root)) {
            try (Admin admin = BenchSupport.admin(source)) {
                admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1)))
                        .all()
                        .get();
            }
            service.post(
                    "/v1/mirrors",
                    "{\"name\":\"latency\",\"config\":{\"bootstrap.servers\":\"" + source.bootstrapServers() + "\"}}");
            service.post("/v1/mirrors/latency/topics:start", "{\"topics\":[\"" + TOPIC + "\"]}");
            awaitMirroring(service);
            // the page cache written back and 1 GiB freed just before, as for every measured copy (decisions §13)
            BenchSupport.syncPageCache();
            System.out.printf(
                    "Mirroring; producing %.1f MB/s (%,.0f records/s of %d B) for %d s of warm-up and %d s measured...%n",
                    mbPerSecond, recordsPerSecond, RECORD_BYTES, warmUp, seconds);

            Times sent = new Times();
            Times acked = new Times();
            Times visible = new Times();
            AtomicBoolean consuming = new AtomicBoolean(true);
            AtomicLong consumed = new AtomicLong();
            Thread consumer = new Thread(
                    () -> consume(destination.bootstrapServers(), visible, consumed, consuming), "latency-consumer");
            consumer.start();
            long start = System.nanoTime();
            long measureFrom = start + Duration.ofSeconds(warmUp).toNanos();
            long end = measureFrom + Duration.ofSeconds(seconds).toNanos();
            double cpuBefore = service.cpuSeconds();
            long produced = produce(source.bootstrapServers(), recordsPerSecond, start, end, sent, acked);
            double cpu = service.cpuSeconds() - cpuBefore;
            // the last records still travel: wait until the destination shows them all, or 30 s
            long drainDeadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (consumed.get() < produced && System.nanoTime() < drainDeadline) {
                Thread.sleep(100);
            }
            Thread.sleep(500);
            consuming.set(false);
            consumer.join();

            List<Double> fromAck = new ArrayList<>();
            List<Double> fromSend = new ArrayList<>();
            long missing = 0;
            for (int p = 0; p < PARTITIONS; p++) {
                for (long offset = 0; ; offset++) {
                    long sendNanos = sent.get(p, offset);
                    if (sendNanos == 0) {
                        break;
                    }
                    if (sendNanos < measureFrom) {
                        continue;
                    }
                    long seen = visible.get(p, offset);
                    if (seen == 0) {
                        missing++;
                        continue;
                    }
                    fromAck.add((seen - acked.get(p, offset)) / 1e6);
                    fromSend.add((seen - sendNanos) / 1e6);
                }
            }
            double[] ack = sorted(fromAck);
            double[] send = sorted(fromSend);
            StringBuilder out = new StringBuilder();
            out.append(String.format(
                    "%nEnd-to-end latency at %.1f MB/s (%,.0f records/s of %d B, %d partitions), %d s measured after %d s"
                            + " of warm-up, %s%n",
                    mbPerSecond, recordsPerSecond, RECORD_BYTES, PARTITIONS, seconds, warmUp, LocalDate.now()));
            out.append(String.format(
                    "%-44s %9s %8s %8s %8s %8s %8s%n", "latency (ms)", "records", "p50", "p90", "p99", "p99.9", "max"));
            out.append(row("source append (ack) -> destination visible", ack));
            out.append(row("producer send() -> destination visible", send));
            out.append(String.format(
                    "%nTarget p99 <= 100 ms (source append to destination visible): %.1f ms, %s%n",
                    percentile(ack, 99), percentile(ack, 99) <= 100 ? "met" : "NOT met"));
            out.append(String.format(
                    "Records in the window not visible on the destination within 30 s of the end: %,d; service CPU"
                            + " %.1f s over %d s (%.2f cores)%n",
                    missing, cpu, warmUp + seconds, cpu / (warmUp + seconds)));
            System.out.print(out);
            Files.createDirectories(BenchCharts.RESULTS);
            Files.writeString(BenchCharts.RESULTS.resolve("latency.txt"), out.toString());
            Map<String, double[][]> curves = new LinkedHashMap<>();
            curves.put("source append (ack) -> destination visible", curve(ack));
            curves.put("producer send() -> destination visible", curve(send));
            Path png = BenchCharts.RESULTS.resolve("latency.png");
            BenchCharts.lines(
                    png,
                    String.format(
                            "End-to-end latency at %.0f MB/s, %,d records over %d s, %s",
                            mbPerSecond, ack.length, seconds, LocalDate.now()),
                    "percentile",
                    "latency (ms, log scale)",
                    curves,
                    true);
            System.out.println("Written: " + BenchCharts.RESULTS.resolve("latency.txt") + ", " + png);
        }
    }

    private static void awaitMirroring(BenchSupport.Service service) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        Pattern mirroring = Pattern.compile("\"MIRRORING\":" + PARTITIONS + "\\b");
        while (!mirroring.matcher(service.get("/v1/mirrors/latency")).find()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("not MIRRORING after 60 s: " + service.get("/v1/mirrors/latency"));
            }
            Thread.sleep(200);
        }
    }

    /** Sends at the given rate until {@code end}, noting send and acknowledgement times; the count sent. */
    private static long produce(
            String bootstrap, double recordsPerSecond, long start, long end, Times sent, Times acked) {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "1");
        props.put(ProducerConfig.LINGER_MS_CONFIG, 1);
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
        Random random = new Random(7);
        byte[][] values = new byte[64][RECORD_BYTES];
        for (byte[] value : values) {
            random.nextBytes(value);
        }
        long count = 0;
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            while (true) {
                long now = System.nanoTime();
                if (now >= end) {
                    break;
                }
                long due = (long) ((now - start) / 1e9 * recordsPerSecond);
                for (; count < due; count++) {
                    int partition = (int) (count % PARTITIONS);
                    long sendNanos = System.nanoTime();
                    // the callbacks run on the producer's one I/O thread: the only writer of both tables
                    producer.send(
                            new ProducerRecord<>(TOPIC, partition, null, values[(int) (count % values.length)]),
                            (metadata, error) -> {
                                long ackNanos = System.nanoTime();
                                if (error == null) {
                                    sent.put(partition, metadata.offset(), sendNanos);
                                    acked.put(partition, metadata.offset(), ackNanos);
                                }
                            });
                }
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            producer.flush();
        }
        return count;
    }

    private static void consume(String bootstrap, Times visible, AtomicLong count, AtomicBoolean running) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 100);
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                partitions.add(new TopicPartition(TOPIC, p));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            while (running.get()) {
                var records = consumer.poll(Duration.ofMillis(100));
                long now = System.nanoTime();
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    visible.put(r.partition(), r.offset(), now);
                }
                count.addAndGet(records.count());
            }
        }
    }

    private static double[] sorted(List<Double> values) {
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(sorted);
        return sorted;
    }

    private static double percentile(double[] sorted, double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int index = (int) Math.ceil(p / 100 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }

    private static String row(String label, double[] sorted) {
        return String.format(
                "%-44s %,9d %8.1f %8.1f %8.1f %8.1f %8.1f%n",
                label,
                sorted.length,
                percentile(sorted, 50),
                percentile(sorted, 90),
                percentile(sorted, 99),
                percentile(sorted, 99.9),
                sorted.length == 0 ? Double.NaN : sorted[sorted.length - 1]);
    }

    /** The percentile curve: 0 to 100 in 0.1 steps, the latency at each (clamped to 0.1 ms for the log axis). */
    private static double[][] curve(double[] sorted) {
        if (sorted.length == 0) {
            return new double[2][0];
        }
        double[][] xy = new double[2][1001];
        for (int i = 0; i <= 1000; i++) {
            xy[0][i] = i / 10.0;
            xy[1][i] = Math.max(0.1, percentile(sorted, i / 10.0));
        }
        return xy;
    }
}
