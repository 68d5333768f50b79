package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.clustermirror.testbed.ServiceProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 18's "40 mirrors add no more than a constant number of threads": a service of its own counts its live threads
 * ({@code jvm_threads_live_threads}) with no mirror, with 10 and with 40 mirrors, each mirroring one small topic of the
 * test bed's source, all MIRRORING with lag 0.
 */
class BoundedThreadsIT extends ServiceIT {

    /** {@code mirror.worker.threads}' default: the instance's worker pool, whatever the number of mirrors. */
    private static final int WORKER_THREADS = 8;
    /** {@code mirror.fetcher.threads}' default: the fetcher pool, every mirror's data plane. */
    private static final int FETCHER_THREADS = 2;
    /**
     * What may grow between no mirror and 40, none of it per mirror: the worker pool, the fetcher pool, one source
     * Admin's network thread (every mirror reaches the same source the same way), the destination Admin built with the
     * first mirror, the JDK's one CompletableFuture delay scheduler (metadata loads' timeouts), the scheduler's thread
     * that starts the sync cycles, and three for what grows on demand under the test's requests (Quarkus' executor
     * threads that serve them, the JIT's compiler threads). The sync cycles' steps run on the worker pool: on Quarkus'
     * pool, 40 mirrors' cycles once grew it by seven threads.
     */
    private static final int BOUND = WORKER_THREADS + FETCHER_THREADS + 1 + 1 + 1 + 1 + 3;
    /** What 30 more mirrors may add: only what grows on demand under the requests. */
    private static final int BOUND_FROM_TEN = 3;

    private static ServiceProcess service;

    @BeforeAll
    static void startAServiceOfItsOwn() {
        service = bed.newService(
                        "threads",
                        Map.of(
                                "mirror.state.topic.name",
                                uniqueName("__mirror_state_threads"),
                                "mirror.state.topic.num.partitions",
                                "1"))
                .start();
        target = service;
    }

    @AfterAll
    static void stopIt() {
        target = null;
        service.stop();
    }

    @Test
    void fortyMirrorsShouldAddNoMoreThanAConstantNumberOfThreads() throws Exception {
        // the thread names come from jcmd, which cannot attach to a native executable (the one IT case native skips)
        assumeTrue(ServiceProcess.NATIVE_EXECUTABLE == null, "jcmd cannot dump a native executable's threads");
        // Given the service with no mirror (dumped first: the dump's attach listener thread stays)
        List<String> namesWithNone = service.threadNames();
        double none = liveThreads();

        // When 10, then 40 mirrors each mirror a one-partition topic of the source, all MIRRORING with lag 0
        List<String> mirrors = new ArrayList<>();
        mirrorMore(mirrors, 10);
        double ten = liveThreads();
        List<String> namesWithTen = service.threadNames();
        mirrorMore(mirrors, 30);
        double forty = liveThreads();
        List<String> namesWithForty = service.threadNames();

        Map<String, Long> grownByTen = grown(namesWithNone, namesWithTen, mirrors);
        Map<String, Long> grownByForty = grown(namesWithNone, namesWithForty, mirrors);
        String report = String.format(
                "live threads: %.0f with no mirror, %.0f with 10, %.0f with 40 (bound: %d more than with none)%n"
                        + "thread names grown with 10 mirrors: %s%nthread names grown with 40 mirrors: %s",
                none, ten, forty, BOUND, grownByTen, grownByForty);
        System.out.println(report);

        // Then the 40 mirrors share one source Admin, the workers are the pool's, and the growth is a constant
        assertThat(namesWithForty.stream()
                        .filter(n -> n.startsWith("kafka-admin-client-thread | cluster-mirror-source-")))
                .as(report)
                .hasSize(1);
        assertThat(namesWithForty.stream().filter(n -> n.startsWith("mirror-worker-")))
                .as(report)
                .hasSizeLessThanOrEqualTo(WORKER_THREADS);
        assertThat(namesWithForty.stream().filter(n -> n.startsWith("cluster-mirror-fetcher-")))
                .as(report)
                .hasSizeLessThanOrEqualTo(FETCHER_THREADS);
        assertThat(forty - none).as(report).isLessThanOrEqualTo(BOUND);
        assertThat(forty - ten).as(report).isLessThanOrEqualTo(BOUND_FROM_TEN);
    }

    /** Creates {@code count} more mirrors, each of a new one-partition topic with a few records, and waits until mirrored. */
    private static void mirrorMore(List<String> mirrors, int count) throws Exception {
        Map<String, String> added = new LinkedHashMap<>();
        try (Admin admin = bed.sourceAdmin();
                var producer = Kafka.producer(bed.source().bootstrapServers(), Map.of())) {
            for (int i = 0; i < count; i++) {
                String name = uniqueName("threads");
                Kafka.createTopic(admin, name, 1, Map.of());
                Kafka.produce(producer, name, 5, "threads");
                createMirror(name); // the mirror is named after its one topic
                startTopics(name, name);
                added.put(name, name);
            }
        }
        awaitConverged(added);
        mirrors.addAll(added.keySet());
    }

    /**
     * The service's {@code jvm_threads_live_threads} once settled: the same in three reads a second apart (threads
     * that serve a request end with it or idle on).
     */
    private static double liveThreads() {
        List<Double> reads = new ArrayList<>();
        await("live threads settle")
                .atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofSeconds(1))
                .until(() -> {
                    reads.add(metric("jvm_threads_live_threads"));
                    int n = reads.size();
                    return n >= 3
                            && reads.get(n - 1).equals(reads.get(n - 2))
                            && reads.get(n - 2).equals(reads.get(n - 3));
                });
        return reads.get(reads.size() - 1);
    }

    private static double metric(String name) {
        String body = api().get("/q/metrics").then().statusCode(200).extract().asString();
        List<Double> values = body.lines()
                .filter(line -> line.startsWith(name + " ") || line.startsWith(name + "{"))
                .map(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
                .toList();
        assertThat(values).as(name + " in /q/metrics").hasSize(1);
        return values.get(0);
    }

    /**
     * How many more threads of each name there are {@code after} than {@code before}, a mirror's name and any number
     * in a thread name taken out, so that "one per mirror" shows as a count.
     */
    private static Map<String, Long> grown(List<String> before, List<String> after, List<String> mirrors) {
        Map<String, Long> was = shapes(before, mirrors);
        Map<String, Long> grown = new TreeMap<>();
        shapes(after, mirrors).forEach((shape, count) -> {
            long more = count - was.getOrDefault(shape, 0L);
            if (more != 0) {
                grown.put(shape, more);
            }
        });
        return grown;
    }

    private static Map<String, Long> shapes(List<String> names, List<String> mirrors) {
        return names.stream()
                .map(name -> {
                    String shape = name;
                    for (String mirror : mirrors) {
                        shape = shape.replace(mirror, "<mirror>");
                    }
                    return shape.replaceAll("\\d+", "N");
                })
                .collect(Collectors.groupingBy(shape -> shape, TreeMap::new, Collectors.counting()));
    }
}
