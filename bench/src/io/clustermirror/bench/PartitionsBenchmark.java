package io.clustermirror.bench;

import io.clustermirror.embedded.KafkaBrokerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Many partitions in one instance: N topics (default 1,000) of 10 partitions, each with a few records, mirrored by
 * one mirror that finds them by pattern, the service started with {@code -Xmx1g}. It measures the first sync cycle
 * over the new topics (the service's {@code cluster_mirror_sync_cycle_seconds}, as {@code bench/sync-cycle.sh}
 * reads it), the time from the mirror's creation until every partition is MIRRORING, then runs a trickle across
 * all partitions (one record per partition every 10 s) for a minute and reports whether every partition is still
 * MIRRORING with the destination's end offsets equal to the source's, the heap after a full GC, the live threads
 * and the service's CPU. Prints the figures with the targets, writes {@code bench/results/partitions.txt} and
 * {@code partitions.png} (partitions MIRRORING over time).
 *
 * <p>Run with {@code bench/partitions.sh [topics] [partitions per topic] [trickle seconds]}.
 */
public final class PartitionsBenchmark {

    private static final String MIRROR = "many";

    private PartitionsBenchmark() {}

    public static void main(String[] args) throws Exception {
        int topics = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int partitionsPerTopic = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        int trickleSeconds = args.length > 2 ? Integer.parseInt(args[2]) : 60;
        int partitions = topics * partitionsPerTopic;
        Path root = Path.of(
                        "target",
                        "bench",
                        "partitions-" + ProcessHandle.current().pid())
                .toAbsolutePath();
        KafkaBrokerProcess[] clusters = BenchSupport.startClusters(root);
        try (KafkaBrokerProcess source = clusters[0];
                KafkaBrokerProcess destination = clusters[1];
                Admin sourceAdmin = BenchSupport.admin(source);
                Admin destinationAdmin = BenchSupport.admin(destination)) {
            System.out.printf(
                    "Creating %,d source topics of %d partitions (%,d partitions), one record in each partition...%n",
                    topics, partitionsPerTopic, partitions);
            List<String> names = new ArrayList<>();
            for (int i = 0; i < topics; i++) {
                names.add(String.format("many.t%04d", i));
            }
            long creatingTopics = System.nanoTime();
            for (int i = 0; i < topics; i += 100) {
                List<NewTopic> batch = new ArrayList<>();
                for (String name : names.subList(i, Math.min(topics, i + 100))) {
                    batch.add(new NewTopic(name, partitionsPerTopic, (short) 1));
                }
                sourceAdmin.createTopics(batch).all().get();
            }
            double topicsCreated = (System.nanoTime() - creatingTopics) / 1e9;
            while (true) { // until the broker serves every partition (the Admin gives up on a topic it does not know
                // yet)
                try {
                    ends(sourceAdmin, names, partitionsPerTopic);
                    break;
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                        throw e;
                    }
                    Thread.sleep(100);
                }
            }
            double topicsServed = (System.nanoTime() - creatingTopics) / 1e9;
            try (KafkaProducer<byte[], byte[]> producer = producer(source)) {
                for (String name : names) {
                    for (int p = 0; p < partitionsPerTopic; p++) {
                        producer.send(new ProducerRecord<>(name, p, null, new byte[100]));
                    }
                }
                producer.flush();
            }

            StringBuilder out = new StringBuilder();
            out.append(String.format(
                    "%n%,d topics x %d partitions = %,d partitions in one instance (-Xmx1g), %s%n",
                    topics, partitionsPerTopic, partitions, LocalDate.now()));
            // the default refresh interval (30 s): the first cycle runs when the mirror is created
            try (BenchSupport.Service service =
                    BenchSupport.startService(destination, root, "service", "-Xmx1g", List.of())) {
                long created = System.nanoTime();
                service.post(
                        "/v1/mirrors",
                        "{\"name\":\"" + MIRROR + "\",\"config\":{\"bootstrap.servers\":\"" + source.bootstrapServers()
                                + "\",\"mirror.topics.include\":\"many\\\\..*\"}}");
                List<double[]> progress = new ArrayList<>();
                double firstCycle = Double.NaN;
                String firstCycleNote = "";
                double allMirroring;
                double stateWrites;
                while (true) {
                    Map<String, Double> metrics = metrics(service);
                    double seconds = (System.nanoTime() - created) / 1e9;
                    double mirroring = metrics.getOrDefault(state("MIRRORING"), 0.0);
                    progress.add(new double[] {seconds, mirroring});
                    double cycles = metrics.getOrDefault(cycle("count"), 0.0);
                    if (Double.isNaN(firstCycle) && cycles >= 1) {
                        firstCycle = cycles == 1
                                ? metrics.get(cycle("sum"))
                                : metrics.getOrDefault(cycle("max"), Double.NaN);
                        firstCycleNote = cycles == 1 ? "" : " (the longest of the first " + (long) cycles + " cycles)";
                    }
                    if (mirroring >= partitions) {
                        allMirroring = seconds;
                        // one per coordinator tick since decisions §37, one per partition transition before it
                        stateWrites =
                                metrics.getOrDefault("cluster_mirror_state_writes_total{result=\"ok\"}", Double.NaN);
                        break;
                    }
                    if (seconds > 900) {
                        throw new IllegalStateException(
                                "not all partitions MIRRORING after 15 minutes: " + states(metrics));
                    }
                    Thread.sleep(500);
                }
                out.append(String.format(
                        "First sync cycle over the %,d new topics: %.1f s%s   (target <= 10 s: %s)%n",
                        topics, firstCycle, firstCycleNote, firstCycle <= 10 ? "met" : "NOT met"));
                out.append(String.format(
                        "    the floor: the source broker created the same topics (CreateTopics of 100 at a time) in %.1f s"
                                + " and served every partition after %.1f s%n",
                        topicsCreated, topicsServed));
                out.append(String.format(
                        "All %,d partitions MIRRORING %.1f s after the mirror's creation   (target <= 120 s: %s)%n",
                        partitions, allMirroring, allMirroring <= 120 ? "met" : "NOT met"));
                out.append(String.format(
                        "State transactions until then: %,.0f   (%.2f per partition)%n",
                        stateWrites, stateWrites / partitions));

                System.out.printf(
                        "Trickle: one record per partition every 10 s (%,d records/s) for %d s...%n",
                        partitions / 10, trickleSeconds);
                double cpuBefore = service.cpuSeconds();
                long trickleStart = System.nanoTime();
                long sent = trickle(source, names, partitionsPerTopic, trickleSeconds, () -> {
                    try {
                        double mirroring = metrics(service).getOrDefault(state("MIRRORING"), 0.0);
                        progress.add(new double[] {(System.nanoTime() - created) / 1e9, mirroring});
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                double trickleCpu = service.cpuSeconds() - cpuBefore;
                double trickleWall = (System.nanoTime() - trickleStart) / 1e9;
                // lag 0: the destination's end offsets equal the source's, read after the last record was acknowledged
                long lagged = Long.MAX_VALUE;
                long laggedRecords = 0;
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                double caughtUpAfter = Double.NaN;
                long endOfTrickle = System.nanoTime();
                while (System.nanoTime() < deadline) {
                    Map<TopicPartition, Long> sourceEnds = ends(sourceAdmin, names, partitionsPerTopic);
                    Map<TopicPartition, Long> destinationEnds = ends(destinationAdmin, names, partitionsPerTopic);
                    lagged = 0;
                    laggedRecords = 0;
                    for (var e : sourceEnds.entrySet()) {
                        long behind = e.getValue() - destinationEnds.getOrDefault(e.getKey(), 0L);
                        if (behind != 0) {
                            lagged++;
                            laggedRecords += behind;
                        }
                    }
                    if (lagged == 0) {
                        caughtUpAfter = (System.nanoTime() - endOfTrickle) / 1e9;
                        break;
                    }
                    Thread.sleep(500);
                }
                Map<String, Double> after = metrics(service);
                double mirroringAfter = after.getOrDefault(state("MIRRORING"), 0.0);
                new ProcessBuilder("jcmd", String.valueOf(service.process().pid()), "GC.run")
                        .redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                        .start()
                        .waitFor();
                Map<String, Double> gc = metrics(service);
                double heap = gc.entrySet().stream()
                        .filter(e -> e.getKey().startsWith("jvm_memory_used_bytes{")
                                && e.getKey().contains("area=\"heap\""))
                        .mapToDouble(Map.Entry::getValue)
                        .sum();
                out.append(String.format(
                        "Trickle of %d s (%,d records): %s partitions MIRRORING at the end, %s   (all MIRRORING with lag 0:"
                                + " %s)%n",
                        trickleSeconds,
                        sent,
                        String.format("%,.0f of %,d", mirroringAfter, partitions),
                        lagged == 0
                                ? String.format("lag 0 everywhere %.1f s after the last record", caughtUpAfter)
                                : String.format(
                                        "%,d partitions still behind by %,d records 30 s after it",
                                        lagged, laggedRecords),
                        mirroringAfter >= partitions && lagged == 0 ? "met" : "NOT met"));
                out.append(String.format(
                        "Service: heap after a full GC %.0f MiB, live threads %.0f (peak %.0f), CPU %.2f cores during"
                                + " the trickle; states %s%n",
                        heap / (1 << 20),
                        gc.getOrDefault("jvm_threads_live_threads", Double.NaN),
                        gc.getOrDefault("jvm_threads_peak_threads", Double.NaN),
                        trickleCpu / trickleWall,
                        states(after)));
                System.out.print(out);
                Files.createDirectories(BenchCharts.RESULTS);
                Files.writeString(BenchCharts.RESULTS.resolve("partitions.txt"), out.toString());
                double[][] xy = new double[2][progress.size()];
                for (int i = 0; i < progress.size(); i++) {
                    xy[0][i] = progress.get(i)[0];
                    xy[1][i] = progress.get(i)[1];
                }
                Path png = BenchCharts.RESULTS.resolve("partitions.png");
                BenchCharts.lines(
                        png,
                        String.format(
                                "%,d topics x %d partitions in one instance (-Xmx1g), %s",
                                topics, partitionsPerTopic, LocalDate.now()),
                        "seconds since the mirror's creation",
                        "partitions MIRRORING",
                        Map.of("MIRRORING", xy));
                System.out.println("Written: " + BenchCharts.RESULTS.resolve("partitions.txt") + ", " + png);
            }
        }
    }

    /** One record per partition every 10 s, spread evenly over the 10 s; returns the records sent. */
    private static long trickle(
            KafkaBrokerProcess source, List<String> names, int partitionsPerTopic, int seconds, Runnable everySecond)
            throws Exception {
        List<TopicPartition> all = new ArrayList<>();
        for (String name : names) {
            for (int p = 0; p < partitionsPerTopic; p++) {
                all.add(new TopicPartition(name, p));
            }
        }
        double perSecond = all.size() / 10.0;
        long sent = 0;
        long start = System.nanoTime();
        long end = start + Duration.ofSeconds(seconds).toNanos();
        long nextTick = start;
        try (KafkaProducer<byte[], byte[]> producer = producer(source)) {
            while (System.nanoTime() < end) {
                long due = (long) ((System.nanoTime() - start) / 1e9 * perSecond);
                for (; sent < due; sent++) {
                    TopicPartition tp = all.get((int) (sent % all.size()));
                    producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), null, new byte[100]));
                }
                if (System.nanoTime() >= nextTick) {
                    everySecond.run();
                    nextTick += 1_000_000_000L;
                }
                Thread.sleep(10);
            }
            producer.flush();
        }
        return sent;
    }

    private static Map<TopicPartition, Long> ends(Admin admin, List<String> names, int partitionsPerTopic)
            throws Exception {
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        for (String name : names) {
            for (int p = 0; p < partitionsPerTopic; p++) {
                request.put(new TopicPartition(name, p), OffsetSpec.latest());
            }
        }
        Map<TopicPartition, Long> ends = new HashMap<>();
        admin.listOffsets(request).all().get().forEach((tp, info) -> ends.put(tp, info.offset()));
        return ends;
    }

    private static KafkaProducer<byte[], byte[]> producer(KafkaBrokerProcess source) {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, source.bootstrapServers());
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private static String state(String state) {
        return "cluster_mirror_partitions{mirror=\"" + MIRROR + "\",state=\"" + state + "\"}";
    }

    private static String cycle(String part) {
        return "cluster_mirror_sync_cycle_seconds_" + part + "{mirror=\"" + MIRROR + "\"}";
    }

    /** Partitions per state, those with any. */
    private static String states(Map<String, Double> metrics) {
        Map<String, Long> states = new LinkedHashMap<>();
        metrics.forEach((name, value) -> {
            if (name.startsWith("cluster_mirror_partitions{") && value > 0) {
                states.put(name.replaceAll(".*state=\"([A-Z_]+)\".*", "$1"), value.longValue());
            }
        });
        return states.toString();
    }

    /** The Prometheus text of /q/metrics as name{tags} → value, the tags in the order printed. */
    private static Map<String, Double> metrics(BenchSupport.Service service) throws Exception {
        Map<String, Double> values = new HashMap<>();
        for (String line : service.get("/q/metrics").split("\n")) {
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int space = line.lastIndexOf(' ');
            try {
                values.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
            } catch (NumberFormatException e) {
                // a value Prometheus spells otherwise (NaN is parsed; nothing else is expected)
            }
        }
        return values;
    }
}
