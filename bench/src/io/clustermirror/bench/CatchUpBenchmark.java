package io.clustermirror.bench;

import io.clustermirror.embedded.KafkaBrokerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Catch-up of a fixed backlog, measured side by side in one run, each copier in its own process between the same two
 * local brokers: the bare Fetch→Produce loop ({@link BareCopyLoop}, the ceiling), Cluster Mirror (the packaged
 * service; with {@code --two-mirrors} also two mirrors of one service sharing the data plane, each mirroring half
 * of the partitions), two KafkaConsumer→KafkaProducer copies and MirrorMaker 2 (when its classpath was resolved).
 * Every copier's progress is sampled on the destination every 250 ms; it prints time, throughput start to caught
 * up and in the middle half, CPU of the copier and of the brokers, the ratios against the ceiling with the issue's
 * targets, and draws the progress of every copier into {@code bench/results/catch-up.png}.
 *
 * <p>Run with {@code bench/catch-up.sh [records] [--two-mirrors] [--copiers=bare,mirror,copy,copy-tuned,mm2]
 * [--service=key=value ...]}.
 */
public final class CatchUpBenchmark {

    private static final int PARTITIONS = 8;
    private static final int RECORD_BYTES = 1024;
    private static final long SAMPLE_MS = 250;
    private static final String TOPIC = "bench";
    /** The two-mirror variant's source topics: the same number of records and partitions, split in two. */
    private static final List<String> PAIR = List.of("pair.a", "pair.b");

    private static final List<String> ALL_COPIERS = List.of("bare", "mirror", "copy", "copy-tuned", "mm2");
    private static final Path MM2_CLASSPATH = Path.of("target", "mirrormaker2.classpath");

    private CatchUpBenchmark() {}

    /** Progress of a copier: seconds since its start, records on the destination. */
    record Sample(double seconds, long records) {}

    record Result(
            String copier,
            double seconds,
            double cpuSeconds,
            long records,
            long logBytes,
            double brokerCpuSeconds,
            List<Sample> samples) {

        double mbPerSecond() {
            return logBytes / 1e6 / seconds;
        }

        /** Throughput over the middle half of the copy (25% to 75% of the records), start-up and tail left out. */
        double steadyMbPerSecond() {
            double from = crossing(0.25);
            double to = crossing(0.75);
            return to > from ? 0.5 * logBytes / 1e6 / (to - from) : Double.NaN;
        }

        private double crossing(double fraction) {
            double wanted = fraction * records;
            Sample previous = new Sample(0, 0);
            for (Sample s : samples) {
                if (s.records() >= wanted) {
                    double share = s.records() == previous.records()
                            ? 1
                            : (wanted - previous.records()) / (s.records() - previous.records());
                    return previous.seconds() + share * (s.seconds() - previous.seconds());
                }
                previous = s;
            }
            return seconds;
        }

        double recordsPerSecond() {
            return records / seconds;
        }

        double cpuSecondsPerGb() {
            return cpuSeconds / (logBytes / 1e9);
        }

        double brokerCpuSecondsPerGb() {
            return brokerCpuSeconds / (logBytes / 1e9);
        }
    }

    /** Settings the service runs with ({@code --service=key=value}, repeatable), printed with the figures. */
    private static final List<String> SERVICE_PROPERTIES = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        long records = 1_000_000;
        boolean twoMirrors = false;
        Set<String> copiers = new LinkedHashSet<>(ALL_COPIERS);
        for (String arg : args) {
            if (arg.equals("--two-mirrors")) {
                twoMirrors = true;
            } else if (arg.startsWith("--service=")) {
                SERVICE_PROPERTIES.add(arg.substring("--service=".length()));
            } else if (arg.startsWith("--copiers=")) {
                copiers = new LinkedHashSet<>(
                        List.of(arg.substring("--copiers=".length()).split(",")));
            } else {
                records = Long.parseLong(arg.replace("_", ""));
            }
        }
        if (copiers.contains("mm2") && !Files.exists(MM2_CLASSPATH)) {
            System.out.println(
                    "MirrorMaker 2 left out: " + MM2_CLASSPATH + " is missing (bench/catch-up.sh writes it)");
            copiers.remove("mm2");
        }
        Path root = Path.of("target", "bench", "run-" + ProcessHandle.current().pid())
                .toAbsolutePath();
        KafkaBrokerProcess[] clusters = BenchSupport.startClusters(root);
        try (KafkaBrokerProcess source = clusters[0];
                KafkaBrokerProcess destination = clusters[1]) {
            System.out.printf(
                    "Producing %,d x %d B lz4 records into %d partitions%s...%n",
                    records,
                    RECORD_BYTES,
                    PARTITIONS,
                    twoMirrors ? ", and the same again into two topics of " + PARTITIONS / 2 : "");
            List<NewTopic> sourceTopics = new ArrayList<>(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1)));
            List<NewTopic> destinationTopics = new ArrayList<>(List.of(new NewTopic("warmup", PARTITIONS, (short) 1)));
            for (String copier : List.of("bare", "copy", "copy-tuned")) {
                destinationTopics.add(new NewTopic(TOPIC + "." + copier, PARTITIONS, (short) 1));
            }
            if (twoMirrors) {
                PAIR.forEach(t -> sourceTopics.add(new NewTopic(t, PARTITIONS / 2, (short) 1)));
            }
            try (Admin admin = BenchSupport.admin(source)) {
                admin.createTopics(sourceTopics).all().get();
            }
            try (Admin admin = BenchSupport.admin(destination)) {
                admin.createTopics(destinationTopics).all().get();
            }
            produce(source.bootstrapServers(), List.of(TOPIC), records, false);
            if (twoMirrors) {
                produce(source.bootstrapServers(), PAIR, records, false);
            }
            System.out.println("Warming up the destination broker...");
            // idempotent: the destination's transaction coordinator is loaded before the first copier asks for an id
            produce(destination.bootstrapServers(), List.of("warmup"), Math.min(records, 200_000), true);
            long logBytes = logBytes(source, List.of(TOPIC));
            System.out.printf("Backlog: %,d records, %,d log bytes%n", records, logBytes);
            if (!SERVICE_PROPERTIES.isEmpty()) {
                System.out.println("The service runs with " + String.join(", ", SERVICE_PROPERTIES));
            }

            Runner runner = new Runner(source, destination, root, records);
            List<Result> results = new ArrayList<>();
            for (String copier : copiers) {
                System.out.println("Running " + copier + "...");
                switch (copier) {
                    case "bare" -> results.add(runner.bare(logBytes));
                    case "mirror" -> {
                        results.add(runner.mirror(logBytes));
                        if (twoMirrors) {
                            results.add(runner.twoMirrors(logBytes(source, PAIR)));
                        }
                    }
                    case "copy" -> results.add(runner.copy(logBytes, "defaults"));
                    case "copy-tuned" -> results.add(runner.copy(logBytes, "tuned"));
                    case "mm2" -> results.add(runner.mirrorMaker2(logBytes));
                    default ->
                        throw new IllegalArgumentException("unknown copier " + copier + "; known: " + ALL_COPIERS);
                }
            }
            String report = report(results, records, logBytes);
            System.out.print(report);
            Files.createDirectories(BenchCharts.RESULTS);
            Files.writeString(BenchCharts.RESULTS.resolve("catch-up.txt"), report);
            Map<String, double[][]> series = new LinkedHashMap<>();
            for (Result r : results) {
                double[][] xy = new double[2][r.samples().size()];
                for (int i = 0; i < r.samples().size(); i++) {
                    xy[0][i] = r.samples().get(i).seconds();
                    xy[1][i] = r.samples().get(i).records() * (double) r.logBytes() / r.records() / 1e6;
                }
                series.put(r.copier(), xy);
            }
            Path png = BenchCharts.RESULTS.resolve("catch-up.png");
            BenchCharts.lines(
                    png,
                    String.format(
                            "Catch-up of %,d x 1 KiB lz4 records (%.0f MB of log, %d partitions), %s",
                            records, logBytes / 1e6, PARTITIONS, LocalDate.now()),
                    "seconds since the copier's start",
                    "MB copied (source log bytes, from the destination's end offsets)",
                    series);
            System.out.println("Written: " + BenchCharts.RESULTS.resolve("catch-up.txt") + ", " + png);
        }
    }

    /** Runs one copier at a time against the same brokers and measures it. */
    private record Runner(KafkaBrokerProcess source, KafkaBrokerProcess destination, Path root, long records) {

        Result bare(long logBytes) throws Exception {
            String target = TOPIC + ".bare";
            Process copier = BenchSupport.launchCopier(
                    root.resolve("bare-loop.log"),
                    "-Xmx1g",
                    BareCopyLoop.class.getName(),
                    source.bootstrapServers(),
                    destination.bootstrapServers(),
                    TOPIC,
                    target);
            return measureProcess("bare Fetch->Produce loop (ceiling)", copier, List.of(target), logBytes);
        }

        Result copy(long logBytes, String settings) throws Exception {
            String target = TOPIC + "." + (settings.equals("tuned") ? "copy-tuned" : "copy");
            Process copier = BenchSupport.launchCopier(
                    root.resolve(target + ".log"),
                    "-Xmx1g",
                    ConsumerProducerCopy.class.getName(),
                    source.bootstrapServers(),
                    destination.bootstrapServers(),
                    TOPIC,
                    target,
                    String.valueOf(records),
                    settings);
            String label = settings.equals("tuned")
                    ? "copy, tuned (linger 10ms, 256KiB batch)"
                    : "copy, client defaults + lz4";
            return measureProcess(label, copier, List.of(target), logBytes);
        }

        /**
         * MirrorMaker 2 in dedicated mode (its own Connect cluster on the destination), one flow source→destination
         * with 2 tasks, the producer compressing with lz4 like the copies; counted from its launch (its start-up,
         * the Connect group and the task assignment, is part of what it costs).
         */
        Result mirrorMaker2(long logBytes) throws Exception {
            Path properties = root.resolve("mm2.properties");
            Files.writeString(
                    properties,
                    String.join(
                            "\n",
                            "clusters = source, destination",
                            "source.bootstrap.servers = " + source.bootstrapServers(),
                            "destination.bootstrap.servers = " + destination.bootstrapServers(),
                            "source->destination.enabled = true",
                            "source->destination.topics = " + TOPIC,
                            "destination->source.enabled = false",
                            "tasks.max = 2",
                            "replication.factor = 1",
                            "offset-syncs.topic.replication.factor = 1",
                            "checkpoints.topic.replication.factor = 1",
                            "heartbeats.topic.replication.factor = 1",
                            "config.storage.replication.factor = 1",
                            "offset.storage.replication.factor = 1",
                            "status.storage.replication.factor = 1",
                            "emit.heartbeats.enabled = false",
                            "emit.checkpoints.enabled = false",
                            "sync.group.offsets.enabled = false",
                            "sync.topic.acls.enabled = false",
                            "destination.producer.compression.type = lz4",
                            ""));
            List<String> command = List.of(
                    BenchSupport.java(),
                    "-Xmx1g",
                    "-Dorg.apache.logging.log4j.level=INFO",
                    "-cp",
                    Files.readString(MM2_CLASSPATH).trim(),
                    "org.apache.kafka.connect.mirror.MirrorMaker",
                    properties.toString());
            Process copier = BenchSupport.launch(command, root.resolve("mirrormaker2.log"), null);
            return measureProcess(
                    "MirrorMaker 2 (dedicated, tasks.max=2, lz4)", copier, List.of("source." + TOPIC), logBytes);
        }

        Result mirror(long logBytes) throws Exception {
            try (BenchSupport.Service service =
                    BenchSupport.startService(destination, root, "service", "-Xmx1g", SERVICE_PROPERTIES)) {
                createMirror(service, "bench");
                return measureService("cluster-mirror, 1 mirror", service, List.of("bench"), List.of(TOPIC), logBytes);
            }
        }

        /** Two mirrors of one service, one topic of half the partitions each; its own state topic. */
        Result twoMirrors(long logBytes) throws Exception {
            try (BenchSupport.Service service = BenchSupport.startService(
                    destination,
                    root,
                    "service-pair",
                    "-Xmx1g",
                    Stream.concat(Stream.of("mirror.state.topic.name=__mirror_state_pair"), SERVICE_PROPERTIES.stream())
                            .toList())) {
                createMirror(service, "pair-a");
                createMirror(service, "pair-b");
                return measureService(
                        "cluster-mirror, 2 mirrors", service, List.of("pair-a", "pair-b"), PAIR, logBytes);
            }
        }

        private void createMirror(BenchSupport.Service service, String name) throws Exception {
            service.post(
                    "/v1/mirrors",
                    "{\"name\":\"" + name + "\",\"config\":{\"bootstrap.servers\":\"" + source.bootstrapServers()
                            + "\"}}");
        }

        /** Mirror {@code mirrors.get(i)} mirrors {@code topics.get(i)}. */
        private Result measureService(
                String label, BenchSupport.Service service, List<String> mirrors, List<String> topics, long logBytes)
                throws Exception {
            double cpuBefore = service.cpuSeconds();
            double brokersBefore = brokerCpu();
            long started = System.nanoTime();
            for (int i = 0; i < mirrors.size(); i++) {
                service.post(
                        "/v1/mirrors/" + mirrors.get(i) + "/topics:start", "{\"topics\":[\"" + topics.get(i) + "\"]}");
            }
            List<Sample> samples =
                    track(topics, started, () -> service.process().isAlive());
            double seconds = samples.get(samples.size() - 1).seconds();
            double cpu = service.cpuSeconds() - cpuBefore;
            double brokers = brokerCpu() - brokersBefore;
            return new Result(label, seconds, cpu, records, logBytes, brokers, samples);
        }

        private Result measureProcess(String label, Process copier, List<String> targets, long logBytes)
                throws Exception {
            try {
                double cpuBefore = BenchSupport.cpuSeconds(copier);
                double brokersBefore = brokerCpu();
                long started = System.nanoTime();
                List<Sample> samples = track(targets, started, copier::isAlive);
                double seconds = samples.get(samples.size() - 1).seconds();
                double cpu = BenchSupport.cpuSeconds(copier) - cpuBefore;
                double brokers = brokerCpu() - brokersBefore;
                return new Result(label, seconds, cpu, records, logBytes, brokers, samples);
            } finally {
                copier.getOutputStream().close();
                copier.destroy();
                copier.waitFor();
            }
        }

        /** Samples the destination's end offsets of {@code topics} every 250 ms until they hold all the records. */
        private List<Sample> track(List<String> topics, long started, BooleanSupplier alive) throws Exception {
            List<Sample> samples = new ArrayList<>();
            long deadline = started + 1_800_000_000_000L;
            long next = started;
            while (true) {
                long copied = endOffsets(destination, topics);
                double seconds = (System.nanoTime() - started) / 1e9;
                samples.add(new Sample(seconds, copied));
                if (copied >= records) {
                    return samples;
                }
                if (!alive.getAsBoolean()) {
                    throw new IllegalStateException("the copier ended after " + copied + " records; see " + root);
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the copier did not copy " + records + " records in 30 minutes");
                }
                next += SAMPLE_MS * 1_000_000;
                long wait = (next - System.nanoTime()) / 1_000_000;
                if (wait > 0) {
                    Thread.sleep(wait);
                }
            }
        }

        private double brokerCpu() {
            return BenchSupport.cpuSeconds(source) + BenchSupport.cpuSeconds(destination);
        }
    }

    private static String report(List<Result> results, long records, long logBytes) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(
                "%nCatch-up of %,d records (%,d source log bytes, %d partitions), %s%n",
                records, logBytes, PARTITIONS, LocalDate.now()));
        Result ceiling = results.stream()
                .filter(r -> r.copier().startsWith("bare"))
                .findFirst()
                .orElse(null);
        out.append(String.format(
                "%-44s %7s %7s %7s %10s %7s %8s %8s %9s %9s %9s%n",
                "copier",
                "seconds",
                "MB/s",
                "steady",
                "records/s",
                "CPU-s",
                "CPU-s/GB",
                "broker",
                "xMB/s",
                "xCPU/GB",
                "xbroker"));
        out.append(String.format(
                "%-44s %7s %7s %7s %10s %7s %8s %8s %9s %9s %9s%n",
                "", "", "", "MB/s", "", "", "", "CPU-s", "ceiling", "ceiling", "ceiling"));
        for (Result r : results) {
            out.append(String.format(
                    "%-44s %7.1f %7.1f %7.1f %,10.0f %7.1f %8.1f %8.1f %9s %9s %9s%n",
                    r.copier(),
                    r.seconds(),
                    r.mbPerSecond(),
                    r.steadyMbPerSecond(),
                    r.recordsPerSecond(),
                    r.cpuSeconds(),
                    r.cpuSecondsPerGb(),
                    r.brokerCpuSeconds(),
                    ceiling == null ? "-" : String.format("%.2f", r.mbPerSecond() / ceiling.mbPerSecond()),
                    ceiling == null ? "-" : String.format("%.2f", r.cpuSecondsPerGb() / ceiling.cpuSecondsPerGb()),
                    ceiling == null
                            ? "-"
                            : String.format("%.2f", r.brokerCpuSecondsPerGb() / ceiling.brokerCpuSecondsPerGb())));
        }
        out.append('\n');
        for (Result r : results) {
            if (!r.copier().startsWith("cluster-mirror") || ceiling == null) {
                continue;
            }
            double throughput = r.mbPerSecond() / ceiling.mbPerSecond();
            double cpu = r.cpuSecondsPerGb() / ceiling.cpuSecondsPerGb();
            double brokers = r.brokerCpuSecondsPerGb() / ceiling.brokerCpuSecondsPerGb();
            out.append(String.format(
                    "%s vs the ceiling: MB/s %.2fx (target >= 0.9x: %s), copier CPU per GB %.2fx (target <= 1.2x: %s),"
                            + " broker CPU %.2fx (target <= 1.5x: %s)%n",
                    r.copier(),
                    throughput,
                    met(throughput >= 0.9),
                    cpu,
                    met(cpu <= 1.2),
                    brokers,
                    met(brokers <= 1.5)));
        }
        Result mirror = results.stream()
                .filter(r -> r.copier().equals("cluster-mirror, 1 mirror"))
                .findFirst()
                .orElse(null);
        for (Result copy : results) {
            if (mirror != null && copy.copier().startsWith("copy")) {
                out.append(String.format(
                        "cluster-mirror, 1 mirror vs %s: throughput %.2fx (target >= 2.5x), CPU per GB %.2f (target <= 0.33)%n",
                        copy.copier(),
                        mirror.mbPerSecond() / copy.mbPerSecond(),
                        mirror.cpuSecondsPerGb() / copy.cpuSecondsPerGb()));
            }
        }
        out.append("MB/s counts the source's log bytes (compressed, as stored), from the copier's start to all records"
                + " on the destination; steady MB/s the middle half\n(25% to 75% of the records). The bare loop and the"
                + " copies count from when their clients are built, the service from topics:start, MirrorMaker 2 from"
                + " its launch.\nCopier CPU over the same span; broker CPU of both brokers, its ratio per GB copied (the"
                + " two-mirror backlog is the same records in two topics of 4 partitions).\n");
        return out.toString();
    }

    private static String met(boolean met) {
        return met ? "met" : "NOT met";
    }

    /** {@code records} records of 1 KiB of words, lz4, round robin over {@code topics}, keyed (spread over partitions). */
    private static void produce(String bootstrap, List<String> topics, long records, boolean idempotent)
            throws Exception {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        props.put(ProducerConfig.LINGER_MS_CONFIG, 10);
        props.put(ProducerConfig.BATCH_SIZE_CONFIG, 64 * 1024);
        props.put(ProducerConfig.ACKS_CONFIG, idempotent ? "all" : "1");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, idempotent);
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
                        topics.get((int) (i % topics.size())),
                        ("key-" + i).getBytes(),
                        value.toString().getBytes()));
            }
            producer.flush();
        }
    }

    private static long logBytes(KafkaBrokerProcess broker, List<String> topics) throws Exception {
        long bytes = 0;
        for (String topic : topics) {
            try (var dirs = Files.list(broker.logDir())) {
                for (Path dir : dirs.filter(d -> d.getFileName().toString().matches(Pattern.quote(topic) + "-\\d+"))
                        .toList()) {
                    try (var files = Files.list(dir)) {
                        for (Path f :
                                files.filter(f -> f.toString().endsWith(".log")).toList()) {
                            bytes += Files.size(f);
                        }
                    }
                }
            }
        }
        return bytes;
    }

    private static final Map<String, Admin> ADMINS = new HashMap<>();
    private static final Map<String, Integer> PARTITION_COUNTS = new HashMap<>();

    /**
     * The sum of the end offsets of these topics' partitions; a topic not there yet (MirrorMaker 2 creates its own)
     * or not answering yet counts 0.
     */
    private static long endOffsets(KafkaBrokerProcess broker, List<String> topics) throws Exception {
        Admin admin = ADMINS.computeIfAbsent(broker.bootstrapServers(), b -> BenchSupport.admin(broker));
        long sum = 0;
        for (String topic : topics) {
            try {
                Integer partitions = PARTITION_COUNTS.get(topic);
                if (partitions == null) {
                    partitions = admin.describeTopics(List.of(topic))
                            .allTopicNames()
                            .get()
                            .get(topic)
                            .partitions()
                            .size();
                    PARTITION_COUNTS.put(topic, partitions);
                }
                Map<TopicPartition, OffsetSpec> request = new HashMap<>();
                for (int p = 0; p < partitions; p++) {
                    request.put(new TopicPartition(topic, p), OffsetSpec.latest());
                }
                sum += admin.listOffsets(request).all().get().values().stream()
                        .mapToLong(i -> i.offset())
                        .sum();
            } catch (ExecutionException e) {
                // not created yet, or its leader not known yet
            }
        }
        return sum;
    }
}
