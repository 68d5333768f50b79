package io.clustermirror.topics;

import io.clustermirror.state.StateSignature;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * Recognises a Cluster Mirror state topic on the destination by its records, whatever it is named (another instance
 * may use any {@code mirror.state.topic.name}): the first records of each partition of the existing topics are read,
 * with one consumer for all of them, at most {@value #RECORDS_PER_PARTITION} per partition and within a timeout, and a
 * topic holding a record whose key is a state key ({@link StateSignature}) is a state topic. A topic the destination
 * does not have, or whose partitions are all empty, is not. Reads uncommitted records too: the state is written in
 * transactions, and an open one must not hide it. Blocking: call on a worker thread.
 */
public final class ForeignStateTopics {

    static final int RECORDS_PER_PARTITION = 5;

    /** What the first records of a destination topic say. */
    public enum Verdict {
        /** A record of it is a state record. */
        STATE_TOPIC,
        /** Missing, empty, or its first records are not state records. */
        NOT_STATE_TOPIC,
        /** A non-empty partition could not be read within the timeout: unknown. */
        UNREAD
    }

    private final Supplier<Admin> destination;
    private final Supplier<? extends Consumer<byte[], byte[]>> reader;
    private final long timeoutMs;

    public ForeignStateTopics(
            Supplier<Admin> destination, Supplier<? extends Consumer<byte[], byte[]>> reader, long timeoutMs) {
        this.destination = destination;
        this.reader = reader;
        this.timeoutMs = timeoutMs;
    }

    public long timeoutMs() {
        return timeoutMs;
    }

    /** A verdict for each of {@code topics}, read with one consumer. */
    public Map<String, Verdict> check(Collection<String> topics) throws Exception {
        Map<String, Verdict> verdicts = new TreeMap<>();
        if (topics.isEmpty()) {
            return verdicts;
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        Map<String, Integer> existing = partitions(topics, deadline, verdicts);
        if (existing.isEmpty()) {
            return verdicts;
        }
        Set<TopicPartition> all = new HashSet<>();
        existing.forEach((topic, count) -> {
            for (int p = 0; p < count; p++) {
                all.add(new TopicPartition(topic, p));
            }
        });
        Set<TopicPartition> open = new HashSet<>(all); // not yet read far enough
        Set<String> state = new HashSet<>();
        try (Consumer<byte[], byte[]> consumer = reader.get()) {
            Map<TopicPartition, Long> begin = consumer.beginningOffsets(all, remaining(deadline));
            Map<TopicPartition, Long> end = consumer.endOffsets(all, remaining(deadline));
            open.removeIf(tp -> end.getOrDefault(tp, 0L) <= begin.getOrDefault(tp, 0L)); // empty
            Map<TopicPartition, Integer> read = new HashMap<>();
            consumer.assign(open);
            open.forEach(tp -> consumer.seek(tp, begin.get(tp)));
            while (!open.isEmpty() && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(
                        Duration.ofMillis(Math.min(200, remaining(deadline).toMillis())))) {
                    read.merge(new TopicPartition(record.topic(), record.partition()), 1, Integer::sum);
                    if (StateSignature.isStateKey(record.key())) {
                        state.add(record.topic());
                    }
                }
                Set<TopicPartition> done = new HashSet<>();
                for (TopicPartition tp : open) {
                    if (state.contains(tp.topic())
                            || read.getOrDefault(tp, 0) >= RECORDS_PER_PARTITION
                            || consumer.position(tp, remaining(deadline)) >= end.get(tp)) {
                        done.add(tp); // a state record seen, enough records read, or only control records
                    }
                }
                open.removeAll(done);
                consumer.pause(done);
            }
        } catch (org.apache.kafka.common.errors.TimeoutException e) {
            // what was not read in time stays open: UNREAD unless a state record was seen
        }
        Set<String> unread = new HashSet<>();
        open.forEach(tp -> unread.add(tp.topic()));
        existing.keySet()
                .forEach(topic -> verdicts.put(
                        topic,
                        state.contains(topic)
                                ? Verdict.STATE_TOPIC
                                : unread.contains(topic) ? Verdict.UNREAD : Verdict.NOT_STATE_TOPIC));
        return verdicts;
    }

    /** Partition counts of the topics the destination has; the others are no state topic, unreadable ones UNREAD. */
    private Map<String, Integer> partitions(Collection<String> topics, long deadline, Map<String, Verdict> verdicts)
            throws InterruptedException {
        Map<String, KafkaFuture<TopicDescription>> described =
                destination.get().describeTopics(List.copyOf(topics)).topicNameValues();
        Map<String, Integer> existing = new TreeMap<>();
        for (var entry : described.entrySet()) {
            try {
                existing.put(
                        entry.getKey(),
                        entry.getValue()
                                .get(remaining(deadline).toMillis(), TimeUnit.MILLISECONDS)
                                .partitions()
                                .size());
            } catch (ExecutionException e) {
                verdicts.put(
                        entry.getKey(),
                        e.getCause() instanceof UnknownTopicOrPartitionException
                                ? Verdict.NOT_STATE_TOPIC
                                : Verdict.UNREAD);
            } catch (java.util.concurrent.TimeoutException e) {
                verdicts.put(entry.getKey(), Verdict.UNREAD);
            }
        }
        return existing;
    }

    private static Duration remaining(long deadline) {
        return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
    }
}
