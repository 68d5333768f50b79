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
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.DoubleSupplier;
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
 * {@code send()} (its batching included) is printed beside it. Records sent in a warm-up (default 30 s) are left
 * out; then p50, p90, p99, p99.9 and max over the measured window (default 60 s), and the percentile curve in
 * {@code bench/results/latency.png}. Producer, consumer and service run on this machine's clock (one JVM measures
 * both ends).
 *
 * <p>Each copier is measured in turn on the same brokers, in the order of {@code --copiers} (default: the bare
 * Fetch→Produce loop of the catch-up benchmark, {@link BareCopyLoop} following its own topic, then the service): the
 * bare loop is the ceiling, what the brokers, the clients and this machine leave of a copier's latency, and the
 * service's percentiles are printed against it. Before them, for reference and to warm up the brokers, each broker
 * alone: a producer and a consumer of one topic on it, both brokers at once. The warm-up is 30 s because a copier's
 * JVM started cold at this rate showed tails of up to 1 s in its first seconds, and the service's backlog from them
 * took up to 30 s to drain (README, End-to-end latency); each second's worst latency, warm-up included, goes to
 * {@code worst-by-second.csv} in the run's directory.
 *
 * <p>Run with {@code bench/latency.sh [seconds] [MB/s] [warm-up seconds] [--copiers=bare,mirror]}.
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

    /** What one copier showed: latencies from the source's acknowledgement and from send(), sorted, in ms. */
    private record Measured(
            String copier, double[] ack, double[] send, long missing, double cpuSeconds, double[] worstBySecond) {}

    public static void main(String[] args) throws Exception {
        List<String> positional = new ArrayList<>();
        List<String> copiers = List.of("bare", "mirror");
        for (String arg : args) {
            if (arg.startsWith("--copiers=")) {
                copiers = List.of(arg.substring("--copiers=".length()).split(","));
            } else {
                positional.add(arg);
            }
        }
        int seconds = positional.size() > 0 ? Integer.parseInt(positional.get(0)) : 60;
        double mbPerSecond = positional.size() > 1 ? Double.parseDouble(positional.get(1)) : 10;
        int warmUp = positional.size() > 2 ? Integer.parseInt(positional.get(2)) : 30;
        double recordsPerSecond = mbPerSecond * 1e6 / RECORD_BYTES;
        Path root = Path.of(
                        "target", "bench", "latency-" + ProcessHandle.current().pid())
                .toAbsolutePath();
        KafkaBrokerProcess[] clusters = BenchSupport.startClusters(root);
        List<Measured> results = new ArrayList<>();
        try (KafkaBrokerProcess source = clusters[0];
                KafkaBrokerProcess destination = clusters[1]) {
            Run run = new Run(source, destination, seconds, warmUp, mbPerSecond, recordsPerSecond);
            results.addAll(reference(run));
            for (String copier : copiers) {
                switch (copier) {
                    case "bare" -> results.add(bare(run, root));
                    case "mirror" -> results.add(mirror(run, root));
                    default -> throw new IllegalArgumentException("unknown copier " + copier + " (bare, mirror)");
                }
            }
        }

        Measured ceiling = results.stream()
                .filter(m -> m.copier().startsWith("bare"))
                .findFirst()
                .orElse(null);
        Measured service = results.stream()
                .filter(m -> m.copier().startsWith("Cluster Mirror"))
                .findFirst()
                .orElse(null);
        StringBuilder out = new StringBuilder();
        out.append(String.format(
                "%nEnd-to-end latency at %.1f MB/s (%,.0f records/s of %d B, %d partitions), %d s measured after %d s"
                        + " of warm-up for each copier, one after the other on the same brokers, %s%n",
                mbPerSecond, recordsPerSecond, RECORD_BYTES, PARTITIONS, seconds, warmUp, LocalDate.now()));
        out.append(String.format(
                "%-36s %-18s %9s %8s %8s %8s %8s %8s %8s %10s%n",
                "copier", "latency (ms) from", "records", "p50", "p90", "p99", "p99.9", "max", "missing", "CPU cores"));
        for (Measured m : results) {
            out.append(row(
                    m.copier(),
                    m.copier().startsWith("no copier") ? "append" : "source append",
                    m.ack(),
                    m.missing(),
                    m.copier().startsWith("no copier") ? Double.NaN : m.cpuSeconds() / (warmUp + seconds)));
            out.append(row("", "producer send()", m.send(), -1, Double.NaN));
        }
        if (service != null) {
            double p99 = percentile(service.ack(), 99);
            out.append(String.format(
                    "%nTarget p99 <= 100 ms (source append to destination visible): %.1f ms, %s%n",
                    p99, p99 <= 100 ? "met" : "NOT met"));
            if (ceiling != null) {
                out.append(String.format(
                        "The ceiling's p99 in the same run: %.1f ms; the service's p50 and p99 against it: %.2fx and"
                                + " %.2fx%n",
                        percentile(ceiling.ack(), 99),
                        percentile(service.ack(), 50) / percentile(ceiling.ack(), 50),
                        p99 / percentile(ceiling.ack(), 99)));
            }
        }
        out.append(String.format(
                "Missing: records of the window not visible on the destination within 30 s of the end; CPU: the"
                        + " copier's over its %d s%n",
                warmUp + seconds));
        // where the tail sits in time: the worst latency of each second, warm-up included (negative seconds)
        StringBuilder bySecond = new StringBuilder("second");
        results.forEach(m -> bySecond.append(",\"").append(m.copier()).append('"'));
        bySecond.append('\n');
        for (int second = 0; second <= warmUp + seconds; second++) {
            bySecond.append(second - warmUp);
            for (Measured m : results) {
                bySecond.append(String.format(Locale.ROOT, ",%.1f", m.worstBySecond()[second]));
            }
            bySecond.append('\n');
        }
        Files.writeString(root.resolve("worst-by-second.csv"), bySecond.toString());
        for (Measured m : results) {
            int worst = warmUp;
            int over = 0;
            for (int second = warmUp; second <= warmUp + seconds; second++) {
                worst = m.worstBySecond()[second] > m.worstBySecond()[worst] ? second : worst;
                over += m.worstBySecond()[second] > 100 ? 1 : 0;
            }
            out.append(String.format(
                    "%s: seconds of the window with a record over 100 ms: %d of %d; the worst at second %d (%.1f ms)%n",
                    m.copier(), over, seconds + 1, worst - warmUp, m.worstBySecond()[worst]));
        }
        out.append("Each second's worst latency, per copier: " + root.resolve("worst-by-second.csv") + "\n");
        System.out.print(out);
        Files.createDirectories(BenchCharts.RESULTS);
        Files.writeString(BenchCharts.RESULTS.resolve("latency.txt"), out.toString());
        Map<String, double[][]> curves = new LinkedHashMap<>();
        for (Measured m : results) {
            if (m.copier().startsWith("no copier")) {
                curves.put(m.copier() + ": append -> visible", curve(m.ack()));
            } else {
                curves.put(m.copier() + ": source append -> destination visible", curve(m.ack()));
                curves.put(m.copier() + ": producer send() -> destination visible", curve(m.send()));
            }
        }
        Path png = BenchCharts.RESULTS.resolve("latency.png");
        BenchCharts.lines(
                png,
                String.format(
                        "End-to-end latency at %.0f MB/s over %d s per copier, %s",
                        mbPerSecond, seconds, LocalDate.now()),
                "percentile",
                "latency (ms, log scale)",
                curves,
                true);
        System.out.println("Written: " + BenchCharts.RESULTS.resolve("latency.txt") + ", " + png);
    }

    /** The brokers and the load every copier is measured under. */
    private record Run(
            KafkaBrokerProcess source,
            KafkaBrokerProcess destination,
            int seconds,
            int warmUp,
            double mbPerSecond,
            double recordsPerSecond) {}

    /** The bare loop ({@link BareCopyLoop} following its topic) as the ceiling: the least a copier adds. */
    private static Measured bare(Run run, Path root) throws Exception {
        String topic = TOPIC + ".bare";
        try (Admin source = BenchSupport.admin(run.source());
                Admin destination = BenchSupport.admin(run.destination())) {
            source.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1)))
                    .all()
                    .get();
            destination
                    .createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1)))
                    .all()
                    .get();
        }
        Process copier = BenchSupport.launchCopier(
                root.resolve("bare-loop.log"),
                "-Xmx1g",
                BareCopyLoop.class.getName(),
                "--follow",
                run.source().bootstrapServers(),
                run.destination().bootstrapServers(),
                topic,
                topic);
        try {
            Measured measured =
                    measure("bare Fetch->Produce loop (ceiling)", run, topic, () -> BenchSupport.cpuSeconds(copier));
            if (!copier.isAlive()) {
                throw new IllegalStateException(
                        "the bare loop ended while it was measured; see " + root.resolve("bare-loop.log"));
            }
            return measured;
        } finally {
            copier.getOutputStream().close();
            copier.waitFor();
        }
    }

    private static Measured mirror(Run run, Path root) throws Exception {
        try (Admin admin = BenchSupport.admin(run.source())) {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1)))
                    .all()
                    .get();
        }
        try (BenchSupport.Service service = BenchSupport.startService(run.destination(), root)) {
            service.post(
                    "/v1/mirrors",
                    "{\"name\":\"latency\",\"config\":{\"bootstrap.servers\":\""
                            + run.source().bootstrapServers() + "\"}}");
            service.post("/v1/mirrors/latency/topics:start", "{\"topics\":[\"" + TOPIC + "\"]}");
            awaitMirroring(service);
            return measure("Cluster Mirror", run, TOPIC, service::cpuSeconds);
        }
    }

    /**
     * Produces into {@code topic} of the source at the run's rate while a consumer of the same topic on the
     * destination notes when each record shows there; the copier moves it between.
     */
    private static Measured measure(String copier, Run run, String topic, DoubleSupplier cpuSeconds) throws Exception {
        // the page cache written back and 1 GiB freed just before, as for every measured copy (decisions §13)
        BenchSupport.syncPageCache();
        return measure(
                copier, run, run.source().bootstrapServers(), run.destination().bootstrapServers(), topic, cpuSeconds);
    }

    /**
     * Measured first, for reference: no copier, each broker's own latency from append to visible (a producer and a
     * consumer of a topic on the same broker), on both brokers at once at the run's rate, so that each takes the
     * produce and fetch load a copier's run puts on it (this JVM then runs two producers and two consumers). It also
     * warms up both brokers and this JVM's clients: without it, whichever copier came first had a p99 3-4x the
     * other's (README, End-to-end latency).
     */
    private static List<Measured> reference(Run run) throws Exception {
        String topic = TOPIC + ".reference";
        for (KafkaBrokerProcess broker : List.of(run.source(), run.destination())) {
            try (Admin admin = BenchSupport.admin(broker)) {
                admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1)))
                        .all()
                        .get();
            }
        }
        BenchSupport.syncPageCache();
        CompletableFuture<Measured> source = CompletableFuture.supplyAsync(() -> reference(run, run.source(), topic));
        CompletableFuture<Measured> destination =
                CompletableFuture.supplyAsync(() -> reference(run, run.destination(), topic));
        return List.of(source.join(), destination.join());
    }

    private static Measured reference(Run run, KafkaBrokerProcess broker, String topic) {
        try {
            return measure(
                    "no copier: " + broker.name() + " broker alone",
                    run,
                    broker.bootstrapServers(),
                    broker.bootstrapServers(),
                    topic,
                    () -> 0);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Produces into {@code topic} of {@code produceTo} at the run's rate while a consumer of the same topic on
     * {@code consumeFrom} notes when each record shows there.
     */
    private static Measured measure(
            String copier, Run run, String produceTo, String consumeFrom, String topic, DoubleSupplier cpuSeconds)
            throws Exception {
        System.out.printf(
                "%s: producing %.1f MB/s (%,.0f records/s of %d B) for %d s of warm-up and %d s measured...%n",
                copier, run.mbPerSecond(), run.recordsPerSecond(), RECORD_BYTES, run.warmUp(), run.seconds());
        Times sent = new Times();
        Times acked = new Times();
        Times visible = new Times();
        AtomicBoolean consuming = new AtomicBoolean(true);
        AtomicLong consumed = new AtomicLong();
        Thread consumer =
                new Thread(() -> consume(consumeFrom, topic, visible, consumed, consuming), "latency-consumer");
        consumer.start();
        long start = System.nanoTime();
        long measureFrom = start + Duration.ofSeconds(run.warmUp()).toNanos();
        long end = measureFrom + Duration.ofSeconds(run.seconds()).toNanos();
        double cpuBefore = cpuSeconds.getAsDouble();
        long produced = produce(produceTo, topic, run.recordsPerSecond(), start, end, sent, acked);
        double cpu = cpuSeconds.getAsDouble() - cpuBefore;
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
        // by the second of the source's acknowledgement, from the start of the warm-up: where the tail sits in time
        double[] worstBySecond = new double[run.warmUp() + run.seconds() + 1];
        long missing = 0;
        for (int p = 0; p < PARTITIONS; p++) {
            for (long offset = 0; ; offset++) {
                long sendNanos = sent.get(p, offset);
                if (sendNanos == 0) {
                    break;
                }
                long seen = visible.get(p, offset);
                if (seen == 0) {
                    missing += sendNanos < measureFrom ? 0 : 1;
                    continue;
                }
                double latency = (seen - acked.get(p, offset)) / 1e6;
                int second = (int) Math.min(
                        worstBySecond.length - 1, Math.max(0, (acked.get(p, offset) - start) / 1_000_000_000L));
                worstBySecond[second] = Math.max(worstBySecond[second], latency);
                if (sendNanos >= measureFrom) {
                    fromAck.add(latency);
                    fromSend.add((seen - sendNanos) / 1e6);
                }
            }
        }
        return new Measured(copier, sorted(fromAck), sorted(fromSend), missing, cpu, worstBySecond);
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
            String bootstrap, String topic, double recordsPerSecond, long start, long end, Times sent, Times acked) {
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
                            new ProducerRecord<>(topic, partition, null, values[(int) (count % values.length)]),
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

    private static void consume(
            String bootstrap, String topic, Times visible, AtomicLong count, AtomicBoolean running) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 100);
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                partitions.add(new TopicPartition(topic, p));
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

    private static String row(String copier, String from, double[] sorted, long missing, double cores) {
        return String.format(
                "%-36s %-18s %,9d %8.1f %8.1f %8.1f %8.1f %8.1f %8s %10s%n",
                copier,
                from,
                sorted.length,
                percentile(sorted, 50),
                percentile(sorted, 90),
                percentile(sorted, 99),
                percentile(sorted, 99.9),
                sorted.length == 0 ? Double.NaN : sorted[sorted.length - 1],
                missing < 0 ? "" : String.format("%,d", missing),
                Double.isNaN(cores) ? "" : String.format("%.2f", cores));
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
