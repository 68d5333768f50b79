package io.clustermirror.bench;

import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The baseline copier of the benchmark, run as its own process: what MirrorMaker 2 does at heart, a
 * KafkaConsumer feeding a KafkaProducer (decompress, re-batch, re-compress), with
 * either the client defaults (plus lz4, as MirrorMaker 2 runs it) or throughput settings.
 * It prints {@code ready} once its clients are built, and waits for its standard input to close once it copied.
 * Usage: {@code ConsumerProducerCopy <source> <destination> <topic> <targetTopic> <records> <defaults|tuned>}.
 */
public final class ConsumerProducerCopy {

    private ConsumerProducerCopy() {}

    public static void main(String[] args) throws IOException {
        String source = args[0];
        String destination = args[1];
        String topic = args[2];
        String target = args[3];
        long records = Long.parseLong(args[4]);
        boolean tuned = args.length > 5 && args[5].equals("tuned");
        Map<String, Object> consumer = new HashMap<>();
        consumer.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, source);
        consumer.put(ConsumerConfig.GROUP_ID_CONFIG, "bench-copy-" + System.nanoTime());
        consumer.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        consumer.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        if (tuned) {
            consumer.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
        }
        Map<String, Object> producer = new HashMap<>();
        producer.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, destination);
        producer.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        producer.put(ProducerConfig.ACKS_CONFIG, "all");
        producer.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        if (tuned) {
            producer.put(ProducerConfig.LINGER_MS_CONFIG, 10);
            producer.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
            producer.put(ProducerConfig.BUFFER_MEMORY_CONFIG, 128L << 20);
        }
        long copied = 0;
        try (KafkaConsumer<byte[], byte[]> in =
                        new KafkaConsumer<>(consumer, new ByteArrayDeserializer(), new ByteArrayDeserializer());
                KafkaProducer<byte[], byte[]> out =
                        new KafkaProducer<>(producer, new ByteArraySerializer(), new ByteArraySerializer())) {
            System.out.println("ready");
            System.out.flush();
            in.subscribe(java.util.List.of(topic));
            while (copied < records) {
                for (ConsumerRecord<byte[], byte[]> r : in.poll(Duration.ofMillis(500))) {
                    out.send(new ProducerRecord<>(
                            target, r.partition(), r.timestamp(), r.key(), r.value(), r.headers()));
                    copied++;
                }
            }
            out.flush();
        }
        System.out.println("copied " + copied);
        System.out.flush();
        while (System.in.read() >= 0) {
            // wait for the benchmark to read this process's CPU time and close the pipe
        }
    }
}
