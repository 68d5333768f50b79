package io.clustermirror.fetch;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The instance's budget for fetched batches waiting to be appended ({@code mirror.fetcher.buffer.bytes}), over every
 * partition of every mirror: a partition fetches only what its own queue and this budget both have room for, so 10,000
 * partitions cannot fill the heap with their queues. Safe from any thread.
 */
public final class FetchBudget {

    /** No bound beyond each partition's own queue (unit tests). */
    static final FetchBudget UNLIMITED = new FetchBudget(Long.MAX_VALUE / 2);

    private final long limit;
    private final AtomicLong queued = new AtomicLong();

    public FetchBudget(long limit) {
        if (limit < FetchLoop.MIN_FREE_QUEUE_BYTES) {
            throw new IllegalArgumentException("mirror.fetcher.buffer.bytes must be at least "
                    + FetchLoop.MIN_FREE_QUEUE_BYTES + ", was " + limit);
        }
        this.limit = limit;
    }

    long available() {
        return limit - queued.get();
    }

    void add(long bytes) {
        queued.addAndGet(bytes);
    }

    void release(long bytes) {
        queued.addAndGet(-bytes);
    }

    /** Bytes fetched and queued now, over every partition. */
    public long queued() {
        return queued.get();
    }

    public long limit() {
        return limit;
    }
}
