package io.clustermirror.bench;

import io.clustermirror.embedded.KafkaBrokerProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.BooleanSupplier;
import java.util.function.DoubleSupplier;
import java.util.function.ToDoubleFunction;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
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
 * <p>Run with {@code bench/catch-up.sh [records] [--two-mirrors] [--warm[=records]] [--warm-starts=N] [--repeat=N]
 * [--copiers=bare,mirror,copy,copy-tuned,mm2]
 * [--service=key=value ...]}.
 */
public final class CatchUpBenchmark {

    /**
     * Every copier's heap, the same for all: 1 GiB, committed and touched at start. A heap that grows during the
     * measured copy touches memory this VM may have handed back to its host, which costs the kernel ~7 CPU-s per GiB and
     * stalled the machine for 0.2-0.35 s in most of the service's copies of a 9-run file (decisions §13).
     */
    static final String HEAP = "-Xmx1g -Xms1g -XX:+AlwaysPreTouch";

    private static final int PARTITIONS = 8;
    private static final int RECORD_BYTES = 1024;
    private static final long SAMPLE_MS = 50;
    private static final String TOPIC = "bench";
    /** With {@code --warm}: what the bare loop and the one-mirror service copy first. */
    private static final String WARM = "warm";
    /**
     * With {@code --warm}: what the two-mirror service copies first, one topic through each of its mirrors (half the
     * warm-up records each, so that the service copies as many as the one-mirror service).
     */
    private static final List<String> WARM_PAIR = List.of("warm.pair.a", "warm.pair.b");
    /**
     * With {@code --warm-starts=N}: the warm-up topics of start {@code i} (0-based), {@code i > 0} suffixed ".2", ".3",
     * ... Each copier copies them one start after the other, each start's once the one before is copied.
     */
    private static List<String> warmTopics(List<String> first, int start) {
        return start == 0
                ? first
                : first.stream().map(t -> t + "." + (start + 1)).toList();
    }

    /** The one-mirror warm-up topic of start {@code start} ({@link #warmTopics}). */
    private static String warmTopic(int start) {
        return warmTopics(List.of(WARM), start).get(0);
    }

    /** The two-mirror variant's source topics: the same number of records and partitions, split in two. */
    private static final List<String> PAIR = List.of("pair.a", "pair.b");

    private static final List<String> ALL_COPIERS = List.of("bare", "mirror", "copy", "copy-tuned", "mm2");
    private static final Path MM2_CLASSPATH = Path.of("target", "mirrormaker2.classpath");

    private CatchUpBenchmark() {}

    /**
     * Progress of a copier: seconds since its start, records on the destination, the copier's CPU-seconds so far, and
     * of those the JIT compiler's and the garbage collector's threads', and each target partition's end offset
     * ({@code partitions}: "topic-partition:offset", apart by spaces).
     */
    record Sample(
            double seconds, long records, double cpuSeconds, double jitSeconds, double gcSeconds, String partitions) {}

    /**
     * CPU-seconds of what runs beside a copier on the same two cores, so far or over one copy: both brokers' JIT
     * compiler threads (a part of the broker CPU above that no copier caused alone: the brokers compile what a copier's
     * requests make hot, when they first get hot) and this benchmark's own process (its 50 ms sampler, and its own JIT).
     */
    record Bystanders(double brokerJitSeconds, double benchmarkCpuSeconds) {
        Bystanders minus(Bystanders before) {
            return new Bystanders(
                    brokerJitSeconds - before.brokerJitSeconds, benchmarkCpuSeconds - before.benchmarkCpuSeconds);
        }
    }

    record Result(
            String copier,
            int run,
            double seconds,
            double cpuSeconds,
            long records,
            long logBytes,
            double brokerCpuSeconds,
            Bystanders bystanders,
            List<Sample> samples) {

        double mbPerSecond() {
            return logBytes / 1e6 / seconds;
        }

        /** Throughput over the middle half of the copy (25% to 75% of the records), start-up and tail left out. */
        double steadyMbPerSecond() {
            double from = crossing(0.25, Sample::seconds);
            double to = crossing(0.75, Sample::seconds);
            return to > from ? 0.5 * logBytes / 1e6 / (to - from) : Double.NaN;
        }

        /**
         * The copier's CPU per GB over the same middle half: what copying costs once the copier runs, without the
         * start (a cold JVM compiling its hot path, the service's LOG_TRUNCATION and producer ids) and the tail.
         */
        double steadyCpuSecondsPerGb() {
            return steadyPerGb(Sample::cpuSeconds);
        }

        /** The middle half's CPU per GB of the copier's own threads: without the JIT compiler and the collector. */
        double steadyOwnCpuSecondsPerGb() {
            return steadyPerGb(s -> s.cpuSeconds() - s.jitSeconds() - s.gcSeconds());
        }

        private double steadyPerGb(ToDoubleFunction<Sample> cpu) {
            double from = crossing(0.25, cpu);
            double to = crossing(0.75, cpu);
            return to > from ? (to - from) / (0.5 * logBytes / 1e9) : Double.NaN;
        }

        Sample last() {
            return samples.get(samples.size() - 1);
        }

        /** {@code value} of the samples where {@code fraction} of the records had been copied, interpolated. */
        private double crossing(double fraction, ToDoubleFunction<Sample> value) {
            double wanted = fraction * records;
            Sample previous = samples.get(0);
            for (Sample s : samples) {
                if (s.records() >= wanted) {
                    double share = s.records() == previous.records()
                            ? 1
                            : (wanted - previous.records()) / (s.records() - previous.records());
                    return value.applyAsDouble(previous)
                            + share * (value.applyAsDouble(s) - value.applyAsDouble(previous));
                }
                previous = s;
            }
            return value.applyAsDouble(samples.get(samples.size() - 1));
        }

        double recordsPerSecond() {
            return records / seconds;
        }

        /**
         * When the first records were seen on the destination (the first sample that has any): a copier's start, to
         * the sampling's 50 ms.
         */
        double firstRecordsSeconds() {
            return samples.stream()
                    .filter(s -> s.records() > 0)
                    .findFirst()
                    .map(Sample::seconds)
                    .orElse(Double.NaN);
        }

        double cpuSecondsPerGb() {
            return cpuSeconds / (logBytes / 1e9);
        }

        double brokerCpuSecondsPerGb() {
            return brokerCpuSeconds / (logBytes / 1e9);
        }
    }

    /**
     * The copiers of run {@code run}: the bare loop and the service in every run, the bare loop first in odd runs and
     * the service first in even ones (what one leaves behind on the brokers, the page cache's writeback say, weighs on
     * each alike); the copies and MirrorMaker 2 in the first run only.
     */
    private static List<String> order(Set<String> copiers, int run) {
        List<String> order = new ArrayList<>();
        for (String copier : copiers) {
            if (copier.equals("bare") || copier.equals("mirror") || run == 1) {
                order.add(copier);
            }
        }
        if (run % 2 == 0 && order.contains("bare") && order.contains("mirror")) {
            order.remove("mirror");
            order.add(order.indexOf("bare"), "mirror");
        }
        return order;
    }

    /** What tells the topics, state topics and logs of run {@code run} apart: nothing for the first run. */
    private static String suffix(int run) {
        return run == 1 ? "" : "." + run;
    }

    /** Settings the service runs with ({@code --service=key=value}, repeatable), printed with the figures. */
    private static final List<String> SERVICE_PROPERTIES = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        long records = 1_000_000;
        boolean twoMirrors = false;
        boolean warm = false;
        long warmRecords = 0; // with --warm: the backlog once per warm start; --warm=N: N
        // --warm-starts=N: the warm-up records in N copies, each started once the last one is done. Six: with three,
        // the service's JIT compiler still took 0.1-0.8 CPU-s of its measured copy (README, Catch-up)
        int warmStarts = 6;
        int repeat = 1;
        Set<String> copiers = new LinkedHashSet<>(ALL_COPIERS);
        for (String arg : args) {
            if (arg.equals("--two-mirrors")) {
                twoMirrors = true;
            } else if (arg.equals("--warm")) {
                warm = true;
            } else if (arg.startsWith("--warm=")) {
                warm = true;
                warmRecords = Long.parseLong(arg.substring("--warm=".length()).replace("_", ""));
            } else if (arg.startsWith("--warm-starts=")) {
                warmStarts = Integer.parseInt(arg.substring("--warm-starts=".length()));
            } else if (arg.startsWith("--repeat=")) {
                repeat = Integer.parseInt(arg.substring("--repeat=".length()));
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
            try {
                System.out.printf(
                        "Producing %,d x %d B lz4 records into %d partitions%s...%n",
                        records,
                        RECORD_BYTES,
                        PARTITIONS,
                        twoMirrors ? ", and the same again into two topics of " + PARTITIONS / 2 : "");
                List<NewTopic> sourceTopics = new ArrayList<>(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1)));
                List<NewTopic> destinationTopics =
                        new ArrayList<>(List.of(new NewTopic("warmup", PARTITIONS, (short) 1)));
                for (String copier : List.of("copy", "copy-tuned")) {
                    destinationTopics.add(new NewTopic(TOPIC + "." + copier, PARTITIONS, (short) 1));
                }
                for (int run = 1; run <= repeat; run++) {
                    destinationTopics.add(new NewTopic(TOPIC + ".bare" + suffix(run), PARTITIONS, (short) 1));
                    for (int start = 0; warm && start < warmStarts; start++) {
                        String warmTarget = warmTopic(start) + ".bare" + suffix(run);
                        destinationTopics.add(new NewTopic(warmTarget, PARTITIONS, (short) 1));
                    }
                }
                if (twoMirrors) {
                    PAIR.forEach(t -> sourceTopics.add(new NewTopic(t, PARTITIONS / 2, (short) 1)));
                }
                if (warm && warmRecords == 0) {
                    warmRecords = warmStarts * records;
                }
                for (int start = 0; warm && start < warmStarts; start++) {
                    sourceTopics.add(new NewTopic(warmTopic(start), PARTITIONS, (short) 1));
                    warmTopics(WARM_PAIR, start)
                            .forEach(t -> sourceTopics.add(new NewTopic(t, PARTITIONS / 2, (short) 1)));
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
                if (warm) {
                    System.out.printf("Producing %,d warm-up records, in %d start(s)...%n", warmRecords, warmStarts);
                    for (int start = 0; start < warmStarts; start++) {
                        produce(
                                source.bootstrapServers(),
                                warmTopics(List.of(WARM), start),
                                warmRecords / warmStarts,
                                false);
                        if (twoMirrors) {
                            produce(
                                    source.bootstrapServers(),
                                    warmTopics(WARM_PAIR, start),
                                    warmRecords / warmStarts,
                                    false);
                        }
                    }
                }
                System.out.println("Warming up the destination broker...");
                // idempotent: the destination's transaction coordinator is loaded before the first copier asks for an
                // id
                produce(destination.bootstrapServers(), List.of("warmup"), Math.min(records, 200_000), true);
                long logBytes = logBytes(source, List.of(TOPIC));
                System.out.printf("Backlog: %,d records, %,d log bytes%n", records, logBytes);
                if (!SERVICE_PROPERTIES.isEmpty()) {
                    System.out.println("The service runs with " + String.join(", ", SERVICE_PROPERTIES));
                }

                Runner runner = new Runner(source, destination, root, records, warmRecords, warmStarts, repeat);
                List<Result> results = new ArrayList<>();
                for (int run = 1; run <= repeat; run++) {
                    for (String copier : order(copiers, run)) {
                        System.out.println("Running " + copier + (repeat > 1 ? " (run " + run + ")" : "") + "...");
                        switch (copier) {
                            case "bare" -> results.add(runner.bare(logBytes, run));
                            case "mirror" -> {
                                results.add(runner.mirror(logBytes, run));
                                if (twoMirrors) {
                                    results.add(runner.twoMirrors(logBytes(source, PAIR), run));
                                }
                            }
                            case "copy" -> results.add(runner.copy(logBytes, "defaults"));
                            case "copy-tuned" -> results.add(runner.copy(logBytes, "tuned"));
                            case "mm2" -> results.add(runner.mirrorMaker2(logBytes));
                            default ->
                                throw new IllegalArgumentException(
                                        "unknown copier " + copier + "; known: " + ALL_COPIERS);
                        }
                    }
                }
                String report = report(results, records, logBytes, warmRecords, warmStarts, repeat);
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
            } finally {
                // the progress sampler's clients, before the brokers stop
                ADMINS.values().forEach(Admin::close);
            }
        }
    }

    /** Runs one copier at a time against the same brokers and measures it. */
    private record Runner(
            KafkaBrokerProcess source,
            KafkaBrokerProcess destination,
            Path root,
            long records,
            long warmRecords,
            int warmStarts,
            int repeat) {

        Result bare(long logBytes, int run) throws Exception {
            String target = TOPIC + ".bare" + suffix(run);
            List<String> args =
                    new ArrayList<>(List.of(source.bootstrapServers(), destination.bootstrapServers(), TOPIC, target));
            for (int start = 0; warmRecords > 0 && start < warmStarts; start++) {
                String warmTopic = warmTopic(start);
                args.addAll(List.of(warmTopic, warmTopic + ".bare" + suffix(run)));
            }
            BenchSupport.syncPageCache(); // and the loop syncs again after its warm-up
            Process copier = BenchSupport.launchCopier(
                    root.resolve("bare-loop" + suffix(run) + ".log"),
                    HEAP,
                    BareCopyLoop.class.getName(),
                    args.toArray(String[]::new));
            return measureProcess(
                    label("bare Fetch->Produce loop (ceiling)", run), run, copier, List.of(target), logBytes);
        }

        private String label(String copier, int run) {
            return repeat == 1 ? copier : copier + " #" + run;
        }

        Result copy(long logBytes, String settings) throws Exception {
            String target = TOPIC + "." + (settings.equals("tuned") ? "copy-tuned" : "copy");
            BenchSupport.syncPageCache();
            Process copier = BenchSupport.launchCopier(
                    root.resolve(target + ".log"),
                    HEAP,
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
            return measureProcess(label, 1, copier, List.of(target), logBytes);
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
                    "-Xms1g",
                    "-XX:+AlwaysPreTouch",
                    "-Dorg.apache.logging.log4j.level=INFO",
                    "-cp",
                    Files.readString(MM2_CLASSPATH).trim(),
                    "org.apache.kafka.connect.mirror.MirrorMaker",
                    properties.toString());
            BenchSupport.syncPageCache();
            Process copier = BenchSupport.launch(command, root.resolve("mirrormaker2.log"), null);
            return measureProcess(
                    "MirrorMaker 2 (dedicated, tasks.max=2, lz4)", 1, copier, List.of("source." + TOPIC), logBytes);
        }

        /** A new service for each run, with its own state topic; the topics an earlier run mirrored are deleted first. */
        Result mirror(long logBytes, int run) throws Exception {
            deleteMirrored(
                    run, Stream.concat(Stream.of(TOPIC), allWarm(List.of(WARM))).toList());
            try (BenchSupport.Service service = BenchSupport.startService(
                    destination,
                    root,
                    "service" + suffix(run),
                    HEAP,
                    Stream.concat(
                                    Stream.of("mirror.state.topic.name=__mirror_state" + suffix(run)),
                                    SERVICE_PROPERTIES.stream())
                            .toList())) {
                createMirror(service, "bench");
                warmUp(service, List.of("bench"), List.of(WARM));
                return measureService(
                        label("cluster-mirror, 1 mirror", run),
                        run,
                        service,
                        List.of("bench"),
                        List.of(TOPIC),
                        logBytes);
            }
        }

        private void deleteMirrored(int run, List<String> topics) throws Exception {
            if (run == 1) {
                return;
            }
            try (Admin admin = BenchSupport.admin(destination)) {
                admin.deleteTopics(topics).all().get();
                long deadline = System.nanoTime() + 60_000_000_000L;
                while (admin.listTopics().names().get().stream().anyMatch(topics::contains)) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("the destination did not delete " + topics + " in 60 s");
                    }
                    Thread.sleep(100);
                }
            }
        }

        /** Two mirrors of one service, one topic of half the partitions each; its own state topic. */
        Result twoMirrors(long logBytes, int run) throws Exception {
            deleteMirrored(run, Stream.concat(PAIR.stream(), allWarm(WARM_PAIR)).toList());
            try (BenchSupport.Service service = BenchSupport.startService(
                    destination,
                    root,
                    "service-pair" + suffix(run),
                    HEAP,
                    Stream.concat(
                                    Stream.of("mirror.state.topic.name=__mirror_state_pair" + suffix(run)),
                                    SERVICE_PROPERTIES.stream())
                            .toList())) {
                createMirror(service, "pair-a");
                createMirror(service, "pair-b");
                warmUp(service, List.of("pair-a", "pair-b"), WARM_PAIR);
                return measureService(
                        label("cluster-mirror, 2 mirrors", run),
                        run,
                        service,
                        List.of("pair-a", "pair-b"),
                        PAIR,
                        logBytes);
            }
        }

        private void createMirror(BenchSupport.Service service, String name) throws Exception {
            service.post(
                    "/v1/mirrors",
                    "{\"name\":\"" + name + "\",\"config\":{\"bootstrap.servers\":\"" + source.bootstrapServers()
                            + "\"}}");
        }

        /**
         * With {@code --warm}: mirror {@code mirrors.get(i)} first mirrors {@code topics.get(i)}, every start posted at
         * once, until they are caught up, as a service that has been running has: each of its mirrors has its clients,
         * its shard on the pool and a start behind it (the bare loop copies its warm-up pair the same way). The JIT
         * compiler is still at work after it: the per-thread table shows how much.
         */
        private void warmUp(BenchSupport.Service service, List<String> mirrors, List<String> first) throws Exception {
            for (int start = 0; warmRecords > 0 && start < warmStarts; start++) {
                List<String> topics = warmTopics(first, start);
                startAll(service, mirrors, topics);
                long started = System.nanoTime();
                while (endOffsets(destination, topics) < warmRecords / warmStarts) {
                    if (!service.process().isAlive() || System.nanoTime() - started > 600_000_000_000L) {
                        throw new IllegalStateException("the service did not copy the warm-up topics " + topics);
                    }
                    Thread.sleep(SAMPLE_MS);
                }
            }
        }

        /** The warm-up topics of every start. */
        private Stream<String> allWarm(List<String> first) {
            return IntStream.range(0, warmStarts).boxed().flatMap(start -> warmTopics(first, start).stream());
        }

        /**
         * Mirror {@code mirrors.get(i)} starts {@code topics.get(i)}, every start posted at once (the second does not
         * wait for the first one's answer); returns once all have answered.
         */
        private static void startAll(BenchSupport.Service service, List<String> mirrors, List<String> topics)
                throws Exception {
            List<CompletableFuture<Void>> starts = new ArrayList<>();
            for (int i = 0; i < mirrors.size(); i++) {
                starts.add(service.postAsync(
                        "/v1/mirrors/" + mirrors.get(i) + "/topics:start", "{\"topics\":[\"" + topics.get(i) + "\"]}"));
            }
            for (CompletableFuture<Void> start : starts) {
                start.get();
            }
        }

        /** Mirror {@code mirrors.get(i)} mirrors {@code topics.get(i)}. */
        private Result measureService(
                String label,
                int run,
                BenchSupport.Service service,
                List<String> mirrors,
                List<String> topics,
                long logBytes)
                throws Exception {
            BenchSupport.syncPageCache();
            double cpuBefore = service.cpuSeconds();
            double brokersBefore = brokerCpu();
            Bystanders bystandersBefore = bystanders();
            long started = System.nanoTime();
            startAll(service, mirrors, topics);
            List<Sample> samples = track(
                    label,
                    topics,
                    started,
                    () -> service.process().isAlive(),
                    () -> service.cpuSeconds() - cpuBefore,
                    service.process().pid());
            double seconds = samples.get(samples.size() - 1).seconds();
            double cpu = service.cpuSeconds() - cpuBefore;
            double brokers = brokerCpu() - brokersBefore;
            Bystanders bystanders = bystanders().minus(bystandersBefore);
            writeRequests(label, service);
            return sampled(new Result(label, run, seconds, cpu, records, logBytes, brokers, bystanders, samples));
        }

        private Result measureProcess(String label, int run, Process copier, List<String> targets, long logBytes)
                throws Exception {
            try {
                double cpuBefore = BenchSupport.cpuSeconds(copier);
                double brokersBefore = brokerCpu();
                Bystanders bystandersBefore = bystanders();
                long started = System.nanoTime();
                List<Sample> samples = track(
                        label,
                        targets,
                        started,
                        copier::isAlive,
                        () -> BenchSupport.cpuSeconds(copier) - cpuBefore,
                        copier.pid());
                double seconds = samples.get(samples.size() - 1).seconds();
                double cpu = BenchSupport.cpuSeconds(copier) - cpuBefore;
                double brokers = brokerCpu() - brokersBefore;
                Bystanders bystanders = bystanders().minus(bystandersBefore);
                return sampled(new Result(label, run, seconds, cpu, records, logBytes, brokers, bystanders, samples));
            } finally {
                copier.getOutputStream().close();
                copier.destroy();
                copier.waitFor();
            }
        }

        /**
         * Samples the destination's end offsets of {@code topics}, and the copier's CPU, every 50 ms until they hold
         * all the records; writes the copier's CPU per thread over the copy into the run's directory.
         */
        private List<Sample> track(
                String label, List<String> topics, long started, BooleanSupplier alive, DoubleSupplier cpu, long pid)
                throws Exception {
            double[] threadsBefore = BenchSupport.jitAndGcSeconds(pid);
            Map<String, Double> perThreadBefore = BenchSupport.threadSeconds(pid);
            List<Sample> samples = new ArrayList<>();
            long deadline = started + 1_800_000_000_000L;
            long next = started;
            while (true) {
                long copied = endOffsets(destination, topics);
                double seconds = (System.nanoTime() - started) / 1e9;
                double[] threads = BenchSupport.jitAndGcSeconds(pid);
                samples.add(new Sample(
                        seconds,
                        copied,
                        cpu.getAsDouble(),
                        threads[0] - threadsBefore[0],
                        threads[1] - threadsBefore[1],
                        String.join(" ", LAST_END_OFFSETS)));
                if (copied >= records) {
                    writeThreads(label, perThreadBefore, BenchSupport.threadSeconds(pid));
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

        /** Writes the copier's CPU-seconds per thread name over the copy, the most first, for a closer look. */
        private void writeThreads(String label, Map<String, Double> before, Map<String, Double> after)
                throws IOException {
            Map<String, Double> copy = new TreeMap<>();
            after.forEach((thread, seconds) -> copy.put(thread, seconds - before.getOrDefault(thread, 0.0)));
            Files.writeString(runFile(label, ".threads.txt"), byCpu(copy));
            // and since the copier's start (its warm-up copies too): the same bytes for every build of a copier, a
            // sample many times the measured copy's, to compare builds with (threads that ended are not in it)
            Files.writeString(runFile(label, ".threads-since-start.txt"), byCpu(after));
        }

        /** CPU-seconds per thread name, the most first, a line each. */
        private static String byCpu(Map<String, Double> seconds) {
            StringBuilder out = new StringBuilder();
            seconds.entrySet().stream()
                    .filter(e -> e.getValue() > 0.0)
                    .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
                    .forEach(e -> out.append(String.format(Locale.ROOT, "%7.2f %s%n", e.getValue(), e.getKey())));
            return out.toString();
        }

        /**
         * Writes the service's request counts since its start (warm-up included) into the run's directory, for a closer
         * look at where a build's CPU goes: Fetch and Produce requests per mirror, Fetch requests and
         * record bytes fetched (cut batches included) per lane.
         */
        private void writeRequests(String label, BenchSupport.Service service) throws IOException {
            String counts;
            try {
                counts = service.get("/q/metrics")
                        .lines()
                        .filter(line -> line.startsWith("cluster_mirror_requests_total")
                                || line.startsWith("cluster_mirror_fetcher_requests_total")
                                || line.startsWith("cluster_mirror_fetcher_bytes_total"))
                        .collect(Collectors.joining("\n", "", "\n"));
            } catch (Exception e) {
                counts = "its metrics could not be read: " + e + "\n"; // a diagnostic: the run's figures stand
            }
            Files.writeString(runFile(label, ".requests.txt"), counts);
        }

        /** A file of the run's directory named after a copier. */
        private Path runFile(String copier, String suffix) {
            return root.resolve(copier.replaceAll("[^A-Za-z0-9]+", "-") + suffix);
        }

        /** Writes the copier's samples into the run's directory, for a closer look. */
        private Result sampled(Result result) throws IOException {
            StringBuilder csv = new StringBuilder("seconds,records,cpu_seconds,jit_seconds,gc_seconds,partitions\n");
            result.samples()
                    .forEach(s -> csv.append(String.format(
                            Locale.ROOT,
                            "%.3f,%d,%.3f,%.3f,%.3f,%s%n",
                            s.seconds(),
                            s.records(),
                            s.cpuSeconds(),
                            s.jitSeconds(),
                            s.gcSeconds(),
                            s.partitions())));
            Files.writeString(runFile(result.copier(), ".samples.csv"), csv);
            return result;
        }

        private double brokerCpu() {
            return BenchSupport.cpuSeconds(source) + BenchSupport.cpuSeconds(destination);
        }

        private Bystanders bystanders() {
            return new Bystanders(
                    BenchSupport.jitAndGcSeconds(source.pid())[0] + BenchSupport.jitAndGcSeconds(destination.pid())[0],
                    BenchSupport.cpuSeconds(ProcessHandle.current()));
        }
    }

    private static String report(
            List<Result> results, long records, long logBytes, long warmRecords, int warmStarts, int repeat) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(
                "%nCatch-up of %,d records (%,d source log bytes, %d partitions), %s%s%s%n",
                records,
                logBytes,
                PARTITIONS,
                LocalDate.now(),
                warmRecords == 0
                        ? ", cold copiers"
                        : String.format(
                                ", warm copiers (the bare loop and the service copied %,d other records first%s)",
                                warmRecords,
                                warmStarts == 1 ? "" : ", in " + warmStarts + " copies, each started anew"),
                repeat == 1
                        ? ""
                        : String.format(
                                ", %d runs (the bare loop first in odd runs, the service first in even ones)",
                                repeat)));
        out.append(String.format(
                "%-48s %7s %7s %7s %7s %10s %7s %8s %8s %8s %9s %9s %9s %9s%n",
                "copier",
                "seconds",
                "first",
                "MB/s",
                "steady",
                "records/s",
                "CPU-s",
                "CPU-s/GB",
                "steady",
                "broker",
                "xMB/s",
                "xCPU/GB",
                "xCPU/GB",
                "xbroker"));
        out.append(String.format(
                "%-48s %7s %7s %7s %7s %10s %7s %8s %8s %8s %9s %9s %9s %9s%n",
                "",
                "",
                "records",
                "",
                "MB/s",
                "",
                "",
                "",
                "CPU-s/GB",
                "CPU-s",
                "ceiling",
                "ceiling",
                "steady",
                "ceiling"));
        for (Result r : results) {
            Ratios x = Ratios.of(r, ceilingOf(results, r));
            out.append(String.format(
                    "%-48s %7.1f %7.2f %7.1f %7.1f %,10.0f %7.1f %8.1f %8.1f %8.1f %9s %9s %9s %9s%n",
                    r.copier(),
                    r.seconds(),
                    r.firstRecordsSeconds(),
                    r.mbPerSecond(),
                    r.steadyMbPerSecond(),
                    r.recordsPerSecond(),
                    r.cpuSeconds(),
                    r.cpuSecondsPerGb(),
                    r.steadyCpuSecondsPerGb(),
                    r.brokerCpuSeconds(),
                    x == null ? "-" : String.format("%.2f", x.throughput()),
                    x == null ? "-" : String.format("%.2f", x.cpu()),
                    x == null ? "-" : String.format("%.2f", x.steadyCpu()),
                    x == null ? "-" : String.format("%.2f", x.brokers())));
        }
        out.append(String.format(
                "%nWhere the copier's CPU went (Linux, per thread): the JIT compiler's threads, the garbage collector's, and"
                        + " the rest (the copier's own threads); beside it, over the same copy: both brokers' JIT"
                        + " compiler threads and this benchmark's process%n%-48s %9s %9s %9s %12s %12s %10s %10s%n",
                "copier", "JIT CPU-s", "GC CPU-s", "rest", "rest CPU-s/GB", "x ceiling", "brokers'", "benchmark"));
        out.append(String.format(
                "%-48s %9s %9s %9s %12s %12s %10s %10s%n",
                "", "", "", "CPU-s", "steady", "steady", "JIT CPU-s", "CPU-s"));
        for (Result r : results) {
            Result ceiling = ceilingOf(results, r);
            Sample last = r.last();
            out.append(String.format(
                    "%-48s %9.1f %9.1f %9.1f %12.1f %12s %10.1f %10.1f%n",
                    r.copier(),
                    last.jitSeconds(),
                    last.gcSeconds(),
                    last.cpuSeconds() - last.jitSeconds() - last.gcSeconds(),
                    r.steadyOwnCpuSecondsPerGb(),
                    ceiling == null
                            ? "-"
                            : String.format("%.2f", r.steadyOwnCpuSecondsPerGb() / ceiling.steadyOwnCpuSecondsPerGb()),
                    r.bystanders().brokerJitSeconds(),
                    r.bystanders().benchmarkCpuSeconds()));
        }
        out.append('\n');
        // each service row against the ceiling of its own run; over several runs the median of each ratio
        Map<String, List<Ratios>> byCopier = new LinkedHashMap<>();
        for (Result r : results) {
            Ratios x = Ratios.of(r, ceilingOf(results, r));
            if (r.copier().startsWith("cluster-mirror") && x != null) {
                byCopier.computeIfAbsent(r.copier().replaceAll(" #\\d+$", ""), k -> new ArrayList<>())
                        .add(x);
            }
        }
        byCopier.forEach((copier, ratios) -> {
            double throughput = median(ratios, Ratios::throughput);
            double cpu = median(ratios, Ratios::cpu);
            double brokers = median(ratios, Ratios::brokers);
            out.append(String.format(
                    "%s vs the ceiling%s: MB/s %.2fx (target >= 0.9x: %s), copier CPU per GB %.2fx (target <= 1.2x:"
                            + " %s; in the middle half %.2fx), broker CPU %.2fx (target <= 1.5x: %s)%n",
                    copier,
                    ratios.size() == 1 ? "" : ", median of " + ratios.size() + " runs",
                    throughput,
                    met(throughput >= 0.9),
                    cpu,
                    met(cpu <= 1.2),
                    median(ratios, Ratios::steadyCpu),
                    brokers,
                    met(brokers <= 1.5)));
        });
        Result mirror = results.stream()
                .filter(r -> r.copier().startsWith("cluster-mirror, 1 mirror") && r.run() == 1)
                .findFirst()
                .orElse(null);
        for (Result copy : results) {
            if (mirror != null && copy.copier().startsWith("copy")) {
                out.append(String.format(
                        "%s vs %s: throughput %.2fx (target >= 2.5x), CPU per GB %.2f (target <= 0.33)%n",
                        mirror.copier(),
                        copy.copier(),
                        mirror.mbPerSecond() / copy.mbPerSecond(),
                        mirror.cpuSecondsPerGb() / copy.cpuSecondsPerGb()));
            }
        }
        out.append("MB/s counts the source's log bytes (compressed, as stored), from the copier's start to all records"
                + " on the destination; first records: the seconds to the first sample with any (every 50 ms); steady MB/s"
                + " the middle half\n(25% to 75% of the records). The bare loop and the"
                + " copies count from when their clients are built, the service from topics:start, MirrorMaker 2 from"
                + " its launch.\nCopier CPU over the same span, and over the middle half (steady: without the start and"
                + " the tail); broker CPU of both brokers, its ratio per GB copied (the two-mirror backlog is the same"
                + " records in two topics of 4 partitions).\nEvery ratio is against the ceiling of the same run.\n");
        return out.toString();
    }

    /** The bare loop's result of {@code r}'s run, or null. */
    private static Result ceilingOf(List<Result> results, Result r) {
        return results.stream()
                .filter(c -> c.copier().startsWith("bare") && c.run() == r.run())
                .findFirst()
                .orElse(null);
    }

    /** A copier's figures over the ceiling's of the same run. */
    private record Ratios(double throughput, double cpu, double steadyCpu, double brokers) {

        static Ratios of(Result r, Result ceiling) {
            if (ceiling == null) {
                return null;
            }
            return new Ratios(
                    r.mbPerSecond() / ceiling.mbPerSecond(),
                    r.cpuSecondsPerGb() / ceiling.cpuSecondsPerGb(),
                    r.steadyCpuSecondsPerGb() / ceiling.steadyCpuSecondsPerGb(),
                    r.brokerCpuSecondsPerGb() / ceiling.brokerCpuSecondsPerGb());
        }
    }

    private static double median(List<Ratios> ratios, ToDoubleFunction<Ratios> value) {
        double[] sorted = ratios.stream().mapToDouble(value).sorted().toArray();
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
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
    /** The partitions' end offsets the last {@link #endOffsets} read, for the samples: whether some partitions lag. */
    private static List<String> LAST_END_OFFSETS = List.of();

    /**
     * The sum of the end offsets of these topics' partitions; a topic not there yet (MirrorMaker 2 creates its own)
     * or not answering yet counts 0.
     */
    private static long endOffsets(KafkaBrokerProcess broker, List<String> topics) throws Exception {
        Admin admin = ADMINS.computeIfAbsent(broker.bootstrapServers(), b -> BenchSupport.admin(broker));
        long sum = 0;
        List<String> perPartition = new ArrayList<>();
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
                Map<TopicPartition, ListOffsetsResultInfo> ends =
                        admin.listOffsets(request).all().get();
                for (int p = 0; p < partitions; p++) {
                    long end = ends.get(new TopicPartition(topic, p)).offset();
                    sum += end;
                    perPartition.add(topic + "-" + p + ":" + end);
                }
            } catch (ExecutionException e) {
                // not created yet, or its leader not known yet
            }
        }
        LAST_END_OFFSETS = perPartition;
        return sum;
    }
}
