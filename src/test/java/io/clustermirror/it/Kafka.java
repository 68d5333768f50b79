package io.clustermirror.it;

import io.clustermirror.embedded.KafkaBrokerProcess;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.Predicate;
import java.util.stream.Stream;
import java.util.zip.CRC32;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.FileLogInputStream;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.awaitility.Awaitility;

/** Test helpers that talk to the real clusters: produce, read back, list offsets, and read batches straight from the log files. */
final class Kafka {

    private Kafka() {}

    /** One record as a consumer sees it; equal records have equal fields. */
    record Rec(int partition, long offset, String key, String value, List<String> headers, long timestamp) {}

    /** One batch as it sits in a log segment. */
    record Batch(
            long baseOffset,
            long lastOffset,
            Integer count,
            int size,
            String compression,
            long recordsCrc,
            boolean transactional,
            boolean control) {}

    static void createTopic(Admin admin, String topic, int partitions, Map<String, String> configs) throws Exception {
        admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1).configs(configs)))
                .all()
                .get();
        awaitLeaders(admin, topic);
    }

    /**
     * Waits until every partition's leader has loaded its log. An idempotent producer that writes to a
     * partition before that can have its first batch refused while later ones land; kafka-clients 4.1.2
     * then retries that batch forever with OUT_OF_ORDER_SEQUENCE_NUMBER and loses it at the delivery
     * timeout (seen in CI: "0 (incoming seq. number), 1083 (current end sequence number)").
     */
    static void awaitLeaders(Admin admin, String topic) throws Exception {
        // ListOffsets is answered only by a leader that has the log; right after CreateTopics the broker may not know
        // the topic yet and answers UNKNOWN_TOPIC_OR_PARTITION, which the Admin client does not retry (seen in CI)
        org.awaitility.Awaitility.await(topic + " has leaders")
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(100))
                .ignoreExceptionsMatching(e -> e.getCause() instanceof RetriableException)
                .until(() -> offsets(admin, topic, OffsetSpec.latest()) != null);
    }

    static KafkaProducer<byte[], byte[]> producer(String bootstrap, Map<String, Object> overrides) {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        props.putAll(overrides);
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    /**
     * {@code mib} MiB of incompressible 1 KiB records (no key), round-robin over {@code partitions} partitions in 16 KiB
     * batches, uncompressed: a backlog whose log size is what a throttle counts.
     */
    static void produceIncompressible(String bootstrap, String topic, int partitions, int mib, long seed)
            throws Exception {
        int oneMiB = 1 << 20;
        byte[] noise = new byte[oneMiB + 1024];
        new SplittableRandom(seed).nextBytes(noise);
        Map<String, Object> config = Map.of(
                ProducerConfig.ACKS_CONFIG,
                "1",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
                false,
                ProducerConfig.BATCH_SIZE_CONFIG,
                16384,
                ProducerConfig.COMPRESSION_TYPE_CONFIG,
                "none");
        try (KafkaProducer<byte[], byte[]> producer = producer(bootstrap, config)) {
            List<Future<?>> sends = new ArrayList<>();
            for (int i = 0; i < mib * 1024; i++) {
                byte[] value = Arrays.copyOfRange(noise, i % oneMiB, i % oneMiB + 1024);
                sends.add(producer.send(new ProducerRecord<>(topic, i % partitions, null, value)));
            }
            producer.flush();
            for (Future<?> send : sends) {
                send.get();
            }
        }
    }

    /** Produces {@code count} keyed records with headers, spread over the partitions, and flushes. */
    static void produce(String bootstrap, String topic, int count, String compression, String tag) {
        produce(bootstrap, topic, count, compression, tag, Map.of());
    }

    static void produce(
            String bootstrap, String topic, int count, String compression, String tag, Map<String, Object> overrides) {
        Map<String, Object> config = new HashMap<>(overrides);
        config.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
        try (KafkaProducer<byte[], byte[]> producer = producer(bootstrap, config)) {
            produce(producer, topic, count, tag);
        }
    }

    /** {@link #produce} with a producer of the caller's: one for many topics. */
    static void produce(KafkaProducer<byte[], byte[]> producer, String topic, int count, String tag) {
        List<Future<?>> sends = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(
                        topic,
                        null,
                        System.currentTimeMillis() - 1000L * (i % 7),
                        (tag + "-key-" + (i % 1000)).getBytes(),
                        (tag + "-value-" + i + "-" + "x".repeat(i % 50)).getBytes());
                record.headers()
                        .add("tag", tag.getBytes())
                        .add("i", Integer.toString(i).getBytes());
                sends.add(producer.send(record));
            }
            producer.flush();
            for (Future<?> send : sends) {
                send.get(); // a record the source did not take must fail the test, not vanish from both sides
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("producing to " + topic + " failed: " + e.getCause(), e.getCause());
        }
    }

    static Map<TopicPartition, Long> offsets(Admin admin, String topic, OffsetSpec spec) throws Exception {
        int partitions = admin.describeTopics(List.of(topic))
                .allTopicNames()
                .get()
                .get(topic)
                .partitions()
                .size();
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            request.put(new TopicPartition(topic, p), spec);
        }
        Map<TopicPartition, Long> result = new HashMap<>();
        admin.listOffsets(request).all().get().forEach((tp, info) -> result.put(tp, info.offset()));
        return result;
    }

    /** The log end offsets of the topic's partitions on {@code broker}. */
    static Map<TopicPartition, Long> offsetsOf(KafkaBrokerProcess broker, String topic) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", broker.bootstrapServers()))) {
            return offsets(admin, topic, OffsetSpec.latest());
        }
    }

    /** The sum of the partitions' offsets. */
    static long total(Map<TopicPartition, Long> offsets) {
        return offsets.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Every record of the topic, from each partition's log start to its end, in offset order. */
    static List<Rec> readAll(String bootstrap, String topic) {
        return readAll(bootstrap, topic, "read_uncommitted");
    }

    /** Every record a consumer with {@code isolation} sees, from each partition's log start to its end (the LSO for read_committed). */
    static List<Rec> readAll(String bootstrap, String topic, String isolation) {
        Properties props = new Properties();
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
        List<Rec> records = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            readToEnd(consumer, partitions(consumer, topic), Duration.ofSeconds(120), r -> {
                List<String> headers = new ArrayList<>();
                for (Header h : r.headers()) {
                    headers.add(h.key() + "=" + (h.value() == null ? null : new String(h.value())));
                }
                records.add(new Rec(
                        r.partition(),
                        r.offset(),
                        r.key() == null ? null : new String(r.key()),
                        r.value() == null ? null : new String(r.value()),
                        headers,
                        r.timestamp()));
            });
        }
        records.sort((a, b) -> a.partition() != b.partition()
                ? Integer.compare(a.partition(), b.partition())
                : Long.compare(a.offset(), b.offset()));
        return records;
    }

    /** What {@link #readToEnd} hands each record to; it may throw (a record a test cannot parse fails it). */
    @FunctionalInterface
    interface RecordSink<K, V> {
        void accept(ConsumerRecord<K, V> record) throws Exception;
    }

    /** The partitions of {@code topic}, as the consumer's metadata knows them. */
    static List<TopicPartition> partitions(KafkaConsumer<?, ?> consumer, String topic) {
        return consumer.partitionsFor(topic).stream()
                .map(p -> new TopicPartition(topic, p.partition()))
                .toList();
    }

    /**
     * Reads the partitions from their log start to the end offsets they have now (the LSO for a read_committed
     * consumer), handing each record to {@code sink}; fails the test when that end is not reached {@code within}: what
     * was read by then would be partial.
     */
    static <K, V> void readToEnd(
            KafkaConsumer<K, V> consumer,
            Collection<TopicPartition> partitions,
            Duration within,
            RecordSink<K, V> sink) {
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
        readAssignedToEnd(consumer, within, sink);
    }

    /** {@link #readToEnd} from the given offsets (a mark taken earlier) instead of the log start. */
    static <K, V> void readToEnd(
            KafkaConsumer<K, V> consumer, Map<TopicPartition, Long> from, Duration within, RecordSink<K, V> sink) {
        consumer.assign(from.keySet());
        from.forEach(consumer::seek);
        readAssignedToEnd(consumer, within, sink);
    }

    private static <K, V> void readAssignedToEnd(KafkaConsumer<K, V> consumer, Duration within, RecordSink<K, V> sink) {
        Set<TopicPartition> partitions = consumer.assignment();
        Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
        if (partitions.stream().allMatch(tp -> consumer.position(tp) >= ends.get(tp))) {
            return; // nothing to read: a poll would wait out its time-out for nothing
        }
        // on time-out the message names the positions reached
        pollUntil(
                consumer,
                "read " + partitions + " to its end " + ends,
                within,
                sink,
                () -> {
                    Map<TopicPartition, Long> positions = new HashMap<>();
                    partitions.forEach(tp -> positions.put(tp, consumer.position(tp)));
                    return positions;
                },
                positions -> positions.entrySet().stream().allMatch(p -> p.getValue() >= ends.get(p.getKey())));
    }

    /**
     * Polls the consumer on this thread (a KafkaConsumer is not for two threads), handing every record to {@code sink},
     * until {@code done} holds for what {@code progress} says; past {@code within} the test fails, naming {@code what}
     * and the last progress. What the sink throws fails it at once.
     */
    static <K, V, T> void pollUntil(
            KafkaConsumer<K, V> consumer,
            String what,
            Duration within,
            RecordSink<K, V> sink,
            Callable<T> progress,
            Predicate<T> done) {
        Awaitility.await(what)
                .atMost(within)
                .pollInSameThread()
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(1))
                .until(
                        () -> {
                            for (ConsumerRecord<K, V> record : consumer.poll(Duration.ofMillis(200))) {
                                sink.accept(record);
                            }
                            return progress.call();
                        },
                        done);
    }

    /** The batches of one partition at or after {@code fromOffset}, read from the broker's segment files. */
    static List<Batch> batches(KafkaBrokerProcess broker, String topic, int partition, long fromOffset)
            throws IOException {
        for (int attempt = 1; ; attempt++) {
            try {
                return batchesOnce(broker, topic, partition, fromOffset);
            } catch (NoSuchFileException e) {
                if (attempt == 5) {
                    throw e; // the cleaner or retention replaced a segment while it was read: read again
                }
            }
        }
    }

    /** The segment files of one partition on the broker, oldest first. */
    private static List<Path> segments(KafkaBrokerProcess broker, String topic, int partition) throws IOException {
        try (Stream<Path> files = Files.list(broker.logDir().resolve(topic + "-" + partition))) {
            return files.filter(f -> f.getFileName().toString().endsWith(".log"))
                    .sorted()
                    .toList();
        }
    }

    /** Who wrote a batch: its producer id and epoch, at its base offset. */
    record Stamp(long baseOffset, long lastOffset, long producerId, short producerEpoch) {}

    /** The producer id and epoch of every batch of one partition, read from the broker's segment files. */
    static List<Stamp> stamps(KafkaBrokerProcess broker, String topic, int partition) throws IOException {
        List<Path> segments = segments(broker, topic, partition);
        List<Stamp> stamps = new ArrayList<>();
        for (Path segment : segments) {
            // the broker appends meanwhile: read what the segment held when opened, and close the channel alone
            // (FileRecords.close() would trim the file to that size)
            FileRecords records = FileRecords.open(segment.toFile(), false);
            try {
                for (FileLogInputStream.FileChannelRecordBatch batch : records.batches()) {
                    stamps.add(new Stamp(
                            batch.baseOffset(), batch.lastOffset(), batch.producerId(), batch.producerEpoch()));
                }
            } finally {
                records.channel().close();
            }
        }
        return stamps;
    }

    private static List<Batch> batchesOnce(KafkaBrokerProcess broker, String topic, int partition, long fromOffset)
            throws IOException {
        List<Path> segments = segments(broker, topic, partition);
        List<Batch> batches = new ArrayList<>();
        for (Path segment : segments) {
            try (FileRecords records = FileRecords.open(segment.toFile(), false)) {
                for (FileLogInputStream.FileChannelRecordBatch batch : records.batches()) {
                    if (batch.lastOffset() < fromOffset) {
                        continue;
                    }
                    ByteBuffer bytes = ByteBuffer.allocate(batch.sizeInBytes());
                    batch.writeTo(bytes);
                    CRC32 crc = new CRC32();
                    crc.update(Arrays.copyOfRange(bytes.array(), 61, bytes.array().length));
                    batches.add(new Batch(
                            batch.baseOffset(),
                            batch.lastOffset(),
                            batch.countOrNull(),
                            batch.sizeInBytes(),
                            batch.compressionType().name,
                            crc.getValue(),
                            batch.isTransactional(),
                            batch.isControlBatch()));
                }
            }
        }
        return batches;
    }
}
