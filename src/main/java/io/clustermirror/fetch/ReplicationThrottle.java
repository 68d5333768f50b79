package io.clustermirror.fetch;

import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Quota;
import org.apache.kafka.common.metrics.stats.TokenBucket;
import org.apache.kafka.common.utils.Time;

/**
 * This instance's replication budget, {@code mirror.replication.throttled.rate}: the bytes per second every mirror's
 * fetch loop together may fetch from the sources (decisions §33). The bucket is Kafka's own {@link TokenBucket} (the
 * quota rule of KIP-599), holding at most one second of the rate, and allowed into debt. A Fetch is sent only while
 * the bucket is not in debt; it asks for at most what the bucket holds (never less than {@code atLeast}: a smaller
 * one would come back mostly as the cut tail of a batch), and that much is taken when it is sent, so that other loops
 * and other brokers cannot spend the same bytes meanwhile. When its answer arrives, the difference to the bytes that
 * actually came back is settled: a Fetch that brought more than it asked for (the broker always returns a whole first
 * batch) leaves a debt the next ones wait out, one that brought less gives the rest back. A long poll takes nothing when
 * sent and is charged what it brought ({@link #allowance}). Over any window the bytes fetched are therefore the rate
 * times the window, plus at most one second's burst and one grant per Fetch in flight.
 *
 * <p>Thread-safe. A grant whose answer never comes (its data plane was closed meanwhile) stays taken: a one-off debt
 * that the rate pays off, never a lasting loss. A grant made while unlimited is settled as if nothing had been taken.
 */
public final class ReplicationThrottle {

    /** No limit: Kafka's value for an unthrottled replication rate. */
    public static final long UNLIMITED = Long.MAX_VALUE;

    private final Time time;
    private final TokenBucket bucket = new TokenBucket();
    private long rate;
    /** The bucket's rate and burst; null while unlimited. */
    private MetricConfig limit;
    /** What the bucket held at {@link #updatedMs}: negative is debt. */
    private double tokens;

    private long updatedMs;
    /** Since when a Fetch has been held back for a debt not yet paid off, or -1. */
    private long waitingSinceMs = -1;
    /** Time Fetches were held back, over the waits that ended. */
    private long throttledMs;

    /** @param bytesPerSecond the rate, or {@link #UNLIMITED} */
    public ReplicationThrottle(long bytesPerSecond) {
        this(bytesPerSecond, Time.SYSTEM);
    }

    /** With a clock of the caller's (tests); only its monotonic {@link Time#hiResClockMs()} is read. */
    ReplicationThrottle(long bytesPerSecond, Time time) {
        this.time = time;
        rate(bytesPerSecond);
    }

    /**
     * Applies a new rate from now on. What accrued until now accrued at the old rate; a debt is carried over, and so is
     * what the bucket held, up to a second of the new rate. Coming from unlimited, the bucket starts empty (not in debt):
     * a new limit never lets a burst through.
     */
    public synchronized void rate(long bytesPerSecond) {
        if (bytesPerSecond <= 0) {
            throw new IllegalArgumentException("a replication rate is a positive number of bytes per second");
        }
        long now = time.hiResClockMs();
        update(now);
        boolean wasUnlimited = limit == null;
        rate = bytesPerSecond;
        if (bytesPerSecond == UNLIMITED) {
            limit = null;
            stopWaiting(now);
            return;
        }
        limit = new MetricConfig()
                .quota(Quota.upperBound(bytesPerSecond))
                .samples(1)
                .timeWindow(1, TimeUnit.SECONDS);
        tokens = bucket.measure(limit, now);
        if (wasUnlimited) {
            bucket.record(limit, tokens, now);
            tokens = 0;
        }
        updatedMs = now;
    }

    public synchronized long rate() {
        return rate;
    }

    /**
     * How many bytes the next Fetch may ask for, taken from the budget now; 0 while the budget is in debt (send it after
     * {@link #delayMs()}).
     *
     * @param wanted what the Fetch would ask for unthrottled
     * @param atLeast the least worth asking for: granted even when the bucket holds less (the debt is waited out after)
     */
    synchronized int acquire(int wanted, int atLeast) {
        return grant(wanted, atLeast, true);
    }

    /**
     * How many bytes a long poll may ask for (a Fetch whose partitions are all caught up: the broker holds it until new
     * data comes or its wait ends), taking nothing now; 0 while the budget is in debt, as {@link #acquire}. Its answer
     * is charged in full: settle it with a grant of 0. A long poll that took its grant when sent would hold the budget
     * through the broker's wait and bring nothing back, and the caught-up lanes of every mirror would take the bucket in
     * turn from the lanes that have bytes to fetch (a mirror copying a backlog next to idle mirrors got 8% of the rate).
     * Its answer may bring data that came meanwhile, up to what it asked for: a debt the next Fetches wait out, as an
     * answer larger than its grant leaves.
     */
    synchronized int allowance(int wanted, int atLeast) {
        return grant(wanted, atLeast, false);
    }

    private int grant(int wanted, int atLeast, boolean take) {
        if (limit == null) {
            return wanted;
        }
        long now = time.hiResClockMs();
        update(now);
        if (inDebt()) {
            if (waitingSinceMs < 0) {
                waitingSinceMs = now;
            }
            return 0;
        }
        int grant = (int) Math.min(wanted, Math.max(Math.min(atLeast, wanted), tokens));
        if (take) {
            take(grant, now);
        }
        return grant;
    }

    /** The answer to a Fetch granted {@code granted} bytes brought {@code received} (0 when it failed). */
    synchronized void settle(int granted, long received) {
        if (limit == null) {
            return;
        }
        long now = time.hiResClockMs();
        update(now);
        take(received - granted, now);
        if (!inDebt()) {
            stopWaiting(now);
        }
    }

    /** The throttle's clock (ms, monotonic), for the fetch loops' per-lane throttle time. */
    long nowMs() {
        return time.hiResClockMs();
    }

    /** How long until the budget is out of debt (0: a Fetch may be sent now), rounded up to whole milliseconds. */
    synchronized long delayMs() {
        if (limit == null) {
            return 0;
        }
        update(time.hiResClockMs());
        return inDebt() ? Math.max(1, msToPay(tokens)) : 0;
    }

    /**
     * Seconds during which a Fetch waited for the budget (at least one fetch loop held one back), since start: the
     * throttle time. Waits overlapping in several loops count once.
     */
    public synchronized double throttleTimeSeconds() {
        long now = time.hiResClockMs();
        update(now);
        long open = waitingSinceMs < 0 ? 0 : now - waitingSinceMs;
        return (throttledMs + open) / 1000.0;
    }

    private void take(double bytes, long now) {
        bucket.record(limit, bytes, now);
        tokens = bucket.measure(limit, now);
    }

    /** Refills the bucket to {@code now}; a wait that the refill ended ends when the debt reached 0. */
    private void update(long now) {
        if (limit == null) {
            return;
        }
        double before = tokens;
        long since = updatedMs;
        tokens = bucket.measure(limit, now);
        updatedMs = now;
        if (waitingSinceMs >= 0 && !inDebt()) {
            stopWaiting(Math.min(now, since + msToPay(before)));
        }
    }

    /**
     * Owing a whole byte or more. Bytes are whole; what the bucket's arithmetic in doubles leaves below one (a refill of
     * 0.999 s and one of 0.001 s need not add up to exactly a second's worth) is not a debt.
     */
    private boolean inDebt() {
        return tokens <= -1;
    }

    /** How long until what the bucket holds at {@code from} is no longer a debt, rounded up to whole milliseconds. */
    private long msToPay(double from) {
        return (long) Math.ceil((-from - 1) * 1000.0 / rate);
    }

    private void stopWaiting(long at) {
        if (waitingSinceMs >= 0) {
            throttledMs += Math.max(0, at - waitingSinceMs);
            waitingSinceMs = -1;
        }
    }
}
