package io.clustermirror.bench;

import io.clustermirror.embedded.KafkaBrokerProcess;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Transactions mirrored per second: a backlog of N source transactions (default 5,000; 5 records of 100 B
 * on each of P partitions (default 1), every fifth one aborted) is replayed by the service, markers
 * included, and timed until the destination's log ends equal the source's.
 * Run with {@code bench/transactions.sh [n] [p]}.
 */
public final class TransactionBenchmark {

    private static final int RECORDS_PER_TRANSACTION = 5;

    private TransactionBenchmark() {}

    public static void main(String[] args) throws Exception {
        int transactions = args.length > 0 ? Integer.parseInt(args[0]) : 5000;
        int partitions = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        Path root = Path.of("target", "bench", "txn-" + ProcessHandle.current().pid())
                .toAbsolutePath();
        KafkaBrokerProcess[] clusters = BenchSupport.startClusters(root);
        try (KafkaBrokerProcess source = clusters[0];
                KafkaBrokerProcess destination = clusters[1];
                Admin sourceAdmin = BenchSupport.admin(source);
                Admin destinationAdmin = BenchSupport.admin(destination)) {
            sourceAdmin
                    .createTopics(List.of(new NewTopic("txn", partitions, (short) 1)))
                    .all()
                    .get();
            System.out.printf(
                    "Producing %,d source transactions of %d records on each of %d partition(s)...%n",
                    transactions, RECORDS_PER_TRANSACTION, partitions);
            long produceStarted = System.nanoTime();
            produce(source, transactions, partitions);
            double produceSeconds = (System.nanoTime() - produceStarted) / 1e9;
            long sourceEnd = end(sourceAdmin, partitions);

            try (BenchSupport.Service service = BenchSupport.startService(destination, root)) {
                service.post(
                        "/v1/mirrors",
                        "{\"name\":\"txn\",\"config\":{\"bootstrap.servers\":\"" + source.bootstrapServers() + "\"}}");
                double cpuBefore = service.cpuSeconds();
                long started = System.nanoTime();
                service.post("/v1/mirrors/txn/topics:start", "{\"topics\":[\"txn\"]}");
                long deadline = System.currentTimeMillis() + 1_800_000;
                while (end(destinationAdmin, partitions) < sourceEnd) {
                    if (System.currentTimeMillis() > deadline) {
                        throw new IllegalStateException("the destination did not reach " + sourceEnd + "; "
                                + service.get("/v1/mirrors/txn/topics/txn"));
                    }
                    Thread.sleep(20);
                }
                double seconds = (System.nanoTime() - started) / 1e9;
                double cpu = service.cpuSeconds() - cpuBefore;
                System.out.printf(
                        "%nSource:      %,d transactions (%,d offsets with markers) produced in %.1f s = %,.0f transactions/s "
                                + "(one KafkaProducer, for scale)%n",
                        transactions, sourceEnd, produceSeconds, transactions / produceSeconds);
                System.out.printf(
                        "Mirrored:    %,d transactions replayed on %d partition(s) in %.1f s = %,.0f transactions/s "
                                + "(%,.0f markers/s), service CPU %.1f s   (target >= 200/s on one partition)%n",
                        transactions,
                        partitions,
                        seconds,
                        transactions / seconds,
                        transactions * (double) partitions / seconds,
                        cpu);
            }
        }
    }

    private static void produce(KafkaBrokerProcess source, int transactions, int partitions) {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(
                Map.of(
                        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                        source.bootstrapServers(),
                        ProducerConfig.TRANSACTIONAL_ID_CONFIG,
                        "bench-txn",
                        ProducerConfig.LINGER_MS_CONFIG,
                        0),
                new ByteArraySerializer(),
                new ByteArraySerializer())) {
            producer.initTransactions();
            byte[] value = new byte[100];
            for (int t = 0; t < transactions; t++) {
                producer.beginTransaction();
                for (int p = 0; p < partitions; p++) {
                    for (int r = 0; r < RECORDS_PER_TRANSACTION; r++) {
                        producer.send(new ProducerRecord<>("txn", p, ("k" + r).getBytes(), value));
                    }
                }
                if (t % 5 == 4) {
                    producer.abortTransaction();
                } else {
                    producer.commitTransaction();
                }
            }
        }
    }

    private static long end(Admin admin, int partitions) throws Exception {
        Map<TopicPartition, OffsetSpec> request = new java.util.HashMap<>();
        for (int p = 0; p < partitions; p++) {
            request.put(new TopicPartition("txn", p), OffsetSpec.latest());
        }
        return admin.listOffsets(request).all().get().values().stream()
                .mapToLong(i -> i.offset())
                .sum();
    }
}
