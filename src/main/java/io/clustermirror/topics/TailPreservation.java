package io.clustermirror.topics;

import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.PreservedTail;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * Before a diverged destination topic is recreated (failback after an unplanned failover, policy {@code recreate}),
 * the records only it holds are copied into a preservation topic on the same cluster, {@value #PREFIX}{@code <topic>},
 * partition for partition: key, value, headers and timestamp as they were, plus headers naming the original
 * partition, offset and mirror. Only committed records are copied (read_committed); the copy waits, within the
 * timeout, for a transaction still open in the tail. Blocking; for a worker.
 */
public final class TailPreservation {

    /** The preservation topic of {@code orders} is {@code __diverged.orders}: the default topic excludes skip it. */
    public static final String PREFIX = "__diverged.";

    public static final String ORIGINAL_PARTITION = "cluster-mirror.original.partition";
    public static final String ORIGINAL_OFFSET = "cluster-mirror.original.offset";
    public static final String MIRROR = "cluster-mirror.mirror";

    private final Admin destination;
    private final Supplier<KafkaConsumer<byte[], byte[]>> reader;
    private final Supplier<KafkaProducer<byte[], byte[]>> writer;
    private final long timeoutMs;

    public TailPreservation(
            Admin destination,
            Supplier<KafkaConsumer<byte[], byte[]>> reader,
            Supplier<KafkaProducer<byte[], byte[]>> writer,
            long timeoutMs) {
        this.destination = destination;
        this.reader = reader;
        this.writer = writer;
        this.timeoutMs = timeoutMs;
    }

    /**
     * The records of a destination partition only it holds, offsets [from, to): what the divergence check found (a type
     * of this room's own, so that the data plane's LOG_TRUNCATION may use this room and not the other way round).
     */
    public record Tail(long from, long to) {}

    public static String topicFor(String topic) {
        String name = PREFIX + topic;
        return name.length() <= 249 ? name : name.substring(0, 249);
    }

    /**
     * Copies each destination partition's records in its range into the preservation topic, with one consumer and one
     * producer for all of them; what it copied, per partition.
     */
    public List<PreservedTail> preserve(String mirror, Map<MirrorPartition, Tail> ranges) throws Exception {
        if (ranges.isEmpty()) {
            return List.of();
        }
        String topic = ranges.keySet().iterator().next().topic();
        String target = topicFor(topic);
        ensure(
                target,
                ranges.keySet().stream()
                                .mapToInt(MirrorPartition::partition)
                                .max()
                                .orElse(0)
                        + 1);
        Map<TopicPartition, Long> copied = new HashMap<>();
        Map<TopicPartition, Long> ends = new HashMap<>();
        try (KafkaConsumer<byte[], byte[]> consumer = reader.get();
                KafkaProducer<byte[], byte[]> producer = writer.get()) {
            ranges.forEach((p, range) -> {
                TopicPartition tp = new TopicPartition(p.topic(), p.partition());
                ends.put(tp, range.to());
                copied.put(tp, 0L);
            });
            consumer.assign(ends.keySet());
            ranges.forEach((p, range) -> consumer.seek(new TopicPartition(p.topic(), p.partition()), range.from()));
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            while (ends.entrySet().stream().anyMatch(e -> consumer.position(e.getKey()) < e.getValue())) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("could not read " + topic + " up to " + ends + " within "
                            + timeoutMs + " ms (a transaction still open there?)");
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    if (r.offset() >= ends.get(tp)) {
                        continue;
                    }
                    RecordHeaders headers = new RecordHeaders(r.headers().toArray());
                    headers.add(ORIGINAL_PARTITION, bytes(Integer.toString(r.partition())));
                    headers.add(ORIGINAL_OFFSET, bytes(Long.toString(r.offset())));
                    headers.add(MIRROR, bytes(mirror));
                    producer.send(
                            new ProducerRecord<>(target, r.partition(), r.timestamp(), r.key(), r.value(), headers));
                    copied.merge(tp, 1L, Long::sum);
                }
            }
            producer.flush();
        }
        List<PreservedTail> preserved = new ArrayList<>();
        ranges.forEach((p, range) -> preserved.add(new PreservedTail(
                p.topic(),
                p.partition(),
                range.from(),
                range.to(),
                copied.get(new TopicPartition(p.topic(), p.partition())),
                target)));
        return preserved;
    }

    private void ensure(String topic, int partitions) throws Exception {
        try {
            destination
                    .createTopics(List.of(new NewTopic(topic, Optional.of(partitions), Optional.empty())))
                    .all()
                    .get(timeoutMs, TimeUnit.MILLISECONDS);
            return;
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw e;
            }
        }
        TopicDescription existing = destination
                .describeTopics(List.of(topic))
                .allTopicNames()
                .get(timeoutMs, TimeUnit.MILLISECONDS)
                .get(topic);
        if (existing.partitions().size() < partitions) {
            destination
                    .createPartitions(Map.of(topic, NewPartitions.increaseTo(partitions)))
                    .all()
                    .get(timeoutMs, TimeUnit.MILLISECONDS);
        }
    }

    private static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }
}
