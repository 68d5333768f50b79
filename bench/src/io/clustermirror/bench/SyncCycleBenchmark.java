package io.clustermirror.bench;

import io.clustermirror.embedded.KafkaBrokerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Duration of one metadata sync cycle of a mirror that mirrors N source topics (default 1,000), each with a
 * non-default config and a committed consumer group offset: the service is started, the topics are discovered
 * by pattern and mirrored, then the cycles of a steady window are timed from the service's own
 * {@code cluster_mirror_sync_cycle_seconds} timer. The first cycle, which discovers the topics and starts them (their
 * destination topics created), is read from describe while its count is 1 (the timer's max decays within minutes).
 * Run with {@code bench/sync-cycle.sh [topics]}.
 */
public final class SyncCycleBenchmark {

    private SyncCycleBenchmark() {}

    public static void main(String[] args) throws Exception {
        int topics = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        Path root = Path.of("target", "bench", "sync-" + ProcessHandle.current().pid())
                .toAbsolutePath();
        KafkaBrokerProcess[] clusters = BenchSupport.startClusters(root);
        try (KafkaBrokerProcess source = clusters[0];
                KafkaBrokerProcess destination = clusters[1]) {
            System.out.printf(
                    "Creating %,d source topics with a config and a committed group offset each...%n", topics);
            try (Admin admin = BenchSupport.admin(source)) {
                List<NewTopic> newTopics = new ArrayList<>();
                for (int i = 0; i < topics; i++) {
                    newTopics.add(new NewTopic(String.format("sync.t%04d", i), 1, (short) 1)
                            .configs(Map.of("retention.ms", "86400000")));
                }
                long creating = System.nanoTime();
                admin.createTopics(newTopics).all().get();
                double created = (System.nanoTime() - creating) / 1e9;
                Map<TopicPartition, OffsetSpec> ends = new HashMap<>();
                newTopics.forEach(t -> ends.put(new TopicPartition(t.name(), 0), OffsetSpec.latest()));
                admin.listOffsets(ends).all().get(); // retried by the Admin until the broker serves every partition
                System.out.printf(
                        "The source broker created them (one CreateTopics) in %.1f s and served them all after %.1f s: "
                                + "what creating %,d topics costs a broker here%n",
                        created, (System.nanoTime() - creating) / 1e9, topics);
                for (int i = 0; i < topics; i += 100) {
                    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                    for (int j = i; j < Math.min(topics, i + 100); j++) {
                        offsets.put(new TopicPartition(String.format("sync.t%04d", j), 0), new OffsetAndMetadata(0));
                    }
                    admin.alterConsumerGroupOffsets("bench-group-" + i, offsets)
                            .all()
                            .get();
                }
            }
            try (BenchSupport.Service service = BenchSupport.startService(
                    destination,
                    root,
                    "mirror.metadata.refresh.interval.ms=2000",
                    // its "prepared N destination topic(s) in M ms": the first cycle's start, apart
                    "quarkus.log.category.\"io.clustermirror.coordinator.TopicStarts\".level=INFO",
                    // and each batch's requests, timed
                    "quarkus.log.category.\"io.clustermirror.topics.DestinationTopicBatch\".level=DEBUG")) {
                service.post(
                        "/v1/mirrors",
                        "{\"name\":\"sync\",\"config\":{\"bootstrap.servers\":\"" + source.bootstrapServers()
                                + "\",\"mirror.topics.include\":\"sync\\\\..*\"}}");
                long started = System.nanoTime();
                long firstCycleMs = -1;
                String firstCycleErrors = "";
                while (true) {
                    String body = service.get("/v1/mirrors/sync");
                    if (firstCycleMs < 0) {
                        Matcher sync = Pattern.compile(
                                        "\"lastCycleMs\":(\\d+),\"errors\":\\[(.*?)\\],\"groupsSkippedActive\".*?\"cycles\":(\\d+)")
                                .matcher(body);
                        if (sync.find() && Long.parseLong(sync.group(3)) == 1) {
                            firstCycleMs = Long.parseLong(sync.group(1));
                            firstCycleErrors = sync.group(2);
                            System.out.printf(
                                    "First sync cycle (discovers and starts the %,d topics): %.1f s   (target <= 10 s)%s%n",
                                    topics,
                                    firstCycleMs / 1e3,
                                    firstCycleErrors.isEmpty() ? "" : "; its errors: " + firstCycleErrors);
                        }
                    }
                    if (mirroring(body) >= topics) {
                        break;
                    }
                    if (System.nanoTime() - started > Duration.ofMinutes(15).toNanos()) {
                        throw new IllegalStateException("topics were not all mirrored in 15 minutes");
                    }
                    Thread.sleep(1000);
                }
                if (firstCycleMs < 0) {
                    System.out.printf(
                            "First sync cycle: not seen alone (more than one cycle between two polls); the longest cycle "
                                    + "so far, which is the first (the timer keeps its max for 2 minutes): %.1f s%n",
                            timer(service)[2]);
                }
                for (String line : Files.readAllLines(root.resolve("service.log"))) {
                    if (line.contains("prepared ") && line.contains("destination topic(s) in")) {
                        System.out.println("  of which " + line.substring(line.indexOf("prepared")));
                    } else if (line.contains("Prepared a batch of")) {
                        System.out.println("    " + line.substring(line.indexOf("Prepared a batch of")));
                    } else if (line.contains("created or grown were served after")) {
                        System.out.println("    then "
                                + line.replaceFirst(".* (\\d+ destination topic\\(s\\) created or grown)", "$1"));
                    }
                }
                System.out.printf(
                        "All %,d topics discovered and MIRRORING after %.1f s%n",
                        topics, (System.nanoTime() - started) / 1e9);
                double[] before = timer(service);
                Thread.sleep(20_000);
                double[] after = timer(service);
                double cycles = after[1] - before[1];
                System.out.printf(
                        "%nSteady-state sync cycle over %,d topics: %.0f cycles in 20 s, mean %.3f s, max of all cycles %.3f s"
                                + "   (target <= 2 s)%n",
                        topics, cycles, (after[0] - before[0]) / cycles, after[2]);
            }
        }
    }

    private static long mirroring(String body) {
        return Pattern.compile("\"MIRRORING\":(\\d+)")
                .matcher(body)
                .results()
                .mapToLong(m -> Long.parseLong(m.group(1)))
                .sum();
    }

    /** sum, count and max of the sync-cycle timer, in seconds. */
    private static double[] timer(BenchSupport.Service service) throws Exception {
        double[] values = new double[3];
        for (String line : service.get("/q/metrics").split("\n")) {
            if (!line.contains("mirror=\"sync\"")) {
                continue;
            }
            double value = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            if (line.startsWith("cluster_mirror_sync_cycle_seconds_sum")) {
                values[0] = value;
            } else if (line.startsWith("cluster_mirror_sync_cycle_seconds_count")) {
                values[1] = value;
            } else if (line.startsWith("cluster_mirror_sync_cycle_seconds_max")) {
                values[2] = value;
            }
        }
        return values;
    }
}
