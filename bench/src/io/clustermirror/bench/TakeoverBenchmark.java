package io.clustermirror.bench;

import io.clustermirror.embedded.KafkaBrokerProcess;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Takeover time of the state group: three instances share a destination; a mirror of a 10-partition topic under a
 * steady load runs on one of them; that instance is killed (SIGKILL) or stopped (SIGTERM), and the time until the
 * mirror is MIRRORING on another instance is measured, from the kill to every partition MIRRORING in describe. Each
 * run restarts the stopped instance and waits for the group to settle first. Prints min/median/max of each, then the
 * mirror's longest stall during a rolling restart of all three instances. Run with {@code bench/takeover.sh [runs]}.
 */
public final class TakeoverBenchmark {

    private static final String TOPIC = "takeover.t";
    private static final int PARTITIONS = 10;
    private static final Pattern RUNNING_ON = Pattern.compile("\"runningOn\"\\s*:\\s*\"([^\"]+)\"");
    private static final Pattern ANSWERED_BY = Pattern.compile("\"answeredBy\"\\s*:\\s*\"([^\"]+)\"");
    private static final Pattern STATE = Pattern.compile("\"state\"\\s*:\\s*\"([A-Z_]+)\"");
    private static final Pattern MEMBER = Pattern.compile("\\{\"id\"");

    private TakeoverBenchmark() {}

    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        Path root = Path.of(
                        "target", "bench", "takeover-" + ProcessHandle.current().pid())
                .toAbsolutePath();
        KafkaBrokerProcess[] clusters = BenchSupport.startClusters(root);
        try (KafkaBrokerProcess source = clusters[0];
                KafkaBrokerProcess destination = clusters[1]) {
            try (Admin admin = BenchSupport.admin(source)) {
                admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1)))
                        .all()
                        .get();
            }
            List<BenchSupport.Service> instances = new ArrayList<>();
            int started = 0;
            for (int i = 0; i < 3; i++) {
                instances.add(start(destination, root, started++));
            }
            awaitMembers(instances, 3);
            BenchSupport.Service any = instances.get(0);
            any.post(
                    "/v1/mirrors",
                    "{\"name\":\"m\",\"config\":{\"bootstrap.servers\":\"" + source.bootstrapServers() + "\"}}");
            any.post("/v1/mirrors/m/topics:start", "{\"topics\":[\"" + TOPIC + "\"]}");
            AtomicBoolean producing = new AtomicBoolean(true);
            Thread load = new Thread(() -> steadyLoad(source, producing), "load");
            load.start();
            try {
                awaitMirroring(instances, null);
                Map<String, List<Long>> times =
                        Map.of("kill -9", new ArrayList<>(), "graceful stop", new ArrayList<>());
                for (int run = 0; run < runs; run++) {
                    for (String how : List.of("kill -9", "graceful stop")) {
                        BenchSupport.Service owner = owner(instances);
                        String ownerId = id(owner);
                        long from = System.nanoTime();
                        if (how.equals("kill -9")) {
                            owner.process().destroyForcibly();
                        } else {
                            owner.process().destroy();
                        }
                        owner.process().waitFor();
                        instances.remove(owner);
                        awaitMirroring(instances, ownerId);
                        long ms = (System.nanoTime() - from) / 1_000_000;
                        times.get(how).add(ms);
                        System.out.printf("run %2d, %-13s: MIRRORING again after %,6d ms%n", run + 1, how, ms);
                        instances.add(start(destination, root, started++));
                        awaitMembers(instances, 3);
                        awaitMirroring(instances, null);
                    }
                }
                long stall = rollingRestart(destination, root, instances, started);
                System.out.println();
                times.forEach((how, ms) -> {
                    List<Long> sorted = new ArrayList<>(ms);
                    Collections.sort(sorted);
                    System.out.printf(
                            "%-13s to MIRRORING on another instance over %d runs: min %,d ms, median %,d ms, max %,d ms "
                                    + "(session timeout 10,000 ms)%n",
                            how,
                            sorted.size(),
                            sorted.get(0),
                            sorted.get(sorted.size() / 2),
                            sorted.get(sorted.size() - 1));
                });
                System.out.printf(
                        "rolling restart of all 3 instances (a new one started, then an old one stopped, three times): "
                                + "the mirror's longest stall %,d ms%n",
                        stall);
            } finally {
                producing.set(false);
                load.join();
                instances.forEach(BenchSupport.Service::close);
            }
        }
    }

    /**
     * Replaces every instance, one at a time, as a Deployment's RollingUpdate does (maxSurge 1, maxUnavailable 0): a new
     * instance joins, then an old one stops gracefully. Meanwhile describe of mirror m is polled every 50 ms through
     * the newest instance; the longest run of polls that did not show every partition MIRRORING is the stall.
     */
    private static long rollingRestart(
            KafkaBrokerProcess destination, Path root, List<BenchSupport.Service> instances, int started)
            throws Exception {
        List<BenchSupport.Service> old = new ArrayList<>(instances);
        java.util.concurrent.atomic.AtomicReference<BenchSupport.Service> via =
                new java.util.concurrent.atomic.AtomicReference<>(instances.get(0));
        AtomicBoolean sampling = new AtomicBoolean(true);
        java.util.concurrent.atomic.AtomicLong longest = new java.util.concurrent.atomic.AtomicLong();
        Thread sampler = new Thread(
                () -> {
                    long stalledSince = 0;
                    while (sampling.get()) {
                        long now = System.nanoTime();
                        if (mirroring(via.get())) {
                            stalledSince = 0;
                        } else if (stalledSince == 0) {
                            stalledSince = now;
                        } else {
                            longest.accumulateAndGet((now - stalledSince) / 1_000_000, Math::max);
                        }
                        try {
                            Thread.sleep(50);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                },
                "stall-sampler");
        sampler.start();
        int n = started;
        for (BenchSupport.Service leaving : old) {
            BenchSupport.Service fresh = start(destination, root, n++);
            instances.add(fresh);
            awaitMembers(instances, instances.size());
            via.set(fresh);
            leaving.process().destroy();
            leaving.process().waitFor();
            instances.remove(leaving);
            awaitMembers(instances, instances.size());
        }
        awaitMirroring(instances, null);
        Thread.sleep(1000);
        sampling.set(false);
        sampler.join();
        return longest.get();
    }

    /** Whether describe through the instance shows mirror m with every partition MIRRORING. */
    private static boolean mirroring(BenchSupport.Service instance) {
        try {
            Matcher state = STATE.matcher(instance.get("/v1/mirrors/m/topics/" + TOPIC));
            int mirroring = 0;
            int all = 0;
            while (state.find()) {
                all++;
                mirroring += state.group(1).equals("MIRRORING") ? 1 : 0;
            }
            return all == PARTITIONS && mirroring == PARTITIONS;
        } catch (Exception e) {
            return false;
        }
    }

    private static BenchSupport.Service start(KafkaBrokerProcess destination, Path root, int n) throws Exception {
        return BenchSupport.startService(
                destination,
                root,
                "instance-" + n,
                "-Xmx512m",
                List.of("mirror.state.topic.num.partitions=50", "quarkus.log.level=INFO"));
    }

    private static String id(BenchSupport.Service instance) throws Exception {
        Matcher m = ANSWERED_BY.matcher(instance.get("/v1/instances"));
        return m.find() ? m.group(1) : null;
    }

    /** The instance that runs mirror m. */
    private static BenchSupport.Service owner(List<BenchSupport.Service> instances) throws Exception {
        Matcher m = RUNNING_ON.matcher(instances.get(0).get("/v1/mirrors/m"));
        if (!m.find()) {
            throw new IllegalStateException("no runningOn");
        }
        for (BenchSupport.Service instance : instances) {
            if (m.group(1).equals(id(instance))) {
                return instance;
            }
        }
        throw new IllegalStateException("no instance is " + m.group(1));
    }

    /** Until mirror m runs on an instance other than {@code not} with every partition MIRRORING (polled every 50 ms). */
    private static void awaitMirroring(List<BenchSupport.Service> instances, String not) throws Exception {
        long deadline = System.currentTimeMillis() + 120_000;
        while (System.currentTimeMillis() < deadline) {
            try {
                String mirror = instances.get(0).get("/v1/mirrors/m");
                Matcher on = RUNNING_ON.matcher(mirror);
                if (on.find() && !on.group(1).equals(not)) {
                    String topic = instances.get(0).get("/v1/mirrors/m/topics/" + TOPIC);
                    Matcher state = STATE.matcher(topic);
                    int mirroring = 0;
                    int all = 0;
                    while (state.find()) {
                        all++;
                        mirroring += state.group(1).equals("MIRRORING") ? 1 : 0;
                    }
                    if (all == PARTITIONS && mirroring == PARTITIONS) {
                        return;
                    }
                }
            } catch (Exception e) {
                // an instance between owners answers 503, one just stopped does not answer: poll again
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException("mirror m not MIRRORING within 120 s");
    }

    private static void awaitMembers(List<BenchSupport.Service> instances, int count) throws Exception {
        long deadline = System.currentTimeMillis() + 120_000;
        while (System.currentTimeMillis() < deadline) {
            boolean all = true;
            for (BenchSupport.Service instance : instances) {
                Matcher member = MEMBER.matcher(instance.get("/v1/instances"));
                int n = 0;
                while (member.find()) {
                    n++;
                }
                all &= n == count;
            }
            if (all) {
                return;
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException("the group did not settle on " + count + " members");
    }

    /** About 1,000 records/s of 1 KiB over the topic until told to stop. */
    private static void steadyLoad(KafkaBrokerProcess source, AtomicBoolean producing) {
        byte[] value = new byte[1024];
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(
                Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, source.bootstrapServers()),
                new ByteArraySerializer(),
                new ByteArraySerializer())) {
            while (producing.get()) {
                for (int i = 0; i < 10; i++) {
                    producer.send(new ProducerRecord<>(TOPIC, value));
                }
                Thread.sleep(10);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
