package io.clustermirror.state;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.WakeupException;

/**
 * The service settings as the owner of their state partition writes them, followed by an instance that does not own
 * it: one consumer kept open on that partition, each read taking up what was written since the last (a new consumer for
 * every read connected, logged in and replayed the whole partition every few seconds). A failed read closes the
 * consumer: the next read starts again from the partition's beginning. One reader at a time; {@link #close()} from any
 * thread (it wakes a read under way, which then closes the consumer and reads nothing: a closed store has nothing to
 * follow, and its close is no failure to report).
 */
final class ServiceConfigFollower implements AutoCloseable {

    private final MirrorStateStore.Clients clients;
    private final TopicPartition partition;
    private final long timeoutMs;
    private final ReentrantLock reading = new ReentrantLock();
    /** The settings read so far (a new one with every new consumer). */
    private StateImage image = new StateImage(Set.of(StateKey.KIND_CONFIG));

    /** Written under {@link #reading}; read by {@link #close()} from other threads to wake a read. */
    private volatile KafkaConsumer<byte[], byte[]> consumer;

    private volatile boolean closed;

    ServiceConfigFollower(MirrorStateStore.Clients clients, TopicPartition partition, long timeoutMs) {
        this.clients = clients;
        this.partition = partition;
        this.timeoutMs = timeoutMs;
    }

    /**
     * The settings up to the partition's committed end now; empty once {@link #close()} was called, before or during
     * the read. Blocking, for up to the timeout.
     */
    Optional<Map<String, String>> read() {
        reading.lock();
        try {
            if (closed) {
                return Optional.empty();
            }
            if (consumer == null) {
                consumer = clients.stateReader();
                consumer.assign(List.of(partition));
                consumer.seekToBeginning(List.of(partition));
                image = new StateImage(Set.of(StateKey.KIND_CONFIG));
            }
            // a close that came while the consumer was built found none to wake: it is seen here (both volatile)
            if (closed) {
                return Optional.empty();
            }
            long end = consumer.endOffsets(List.of(partition), Duration.ofMillis(timeoutMs))
                    .get(partition);
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            while (consumer.position(partition) < end) {
                if (System.nanoTime() > deadline) {
                    throw new TimeoutException("Reading the service settings of " + partition
                            + " did not reach its end offset " + end + " within " + timeoutMs + " ms");
                }
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    image.apply(record);
                }
            }
            return Optional.of(Map.copyOf(image.configs));
        } catch (WakeupException e) { // only close() wakes it
            return Optional.empty();
        } catch (RuntimeException e) {
            closeConsumer();
            throw e;
        } finally {
            if (closed) {
                closeConsumer();
            }
            reading.unlock();
        }
    }

    @Override
    public void close() {
        closed = true;
        if (reading.tryLock()) {
            try {
                closeConsumer();
            } finally {
                reading.unlock();
            }
        } else {
            KafkaConsumer<byte[], byte[]> current = consumer;
            if (current != null) {
                current.wakeup(); // the read under way ends, and closes it
            }
        }
    }

    private void closeConsumer() {
        if (consumer != null) {
            consumer.close(); // assigned, no group: nothing to commit or leave
            consumer = null;
        }
    }
}
