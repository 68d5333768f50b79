package io.clustermirror.fetch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.Test;

/** The replication budget's arithmetic on a fake clock: grants, debts, settling, rate changes, throttle time. */
class ReplicationThrottleTest {

    private static final int MiB = 1 << 20;
    private static final int WANTED = 16 * MiB;

    private final MockTime time = new MockTime();

    @Test
    void aNewLimitShouldLetOneFetchGoAtOnceAndTheNextWhenItsBytesArePaidFor() {
        ReplicationThrottle throttle = new ReplicationThrottle(MiB, time);

        assertThat(throttle.acquire(WANTED, MiB)).isEqualTo(MiB); // empty, not in debt: the least worth asking for
        assertThat(throttle.acquire(WANTED, MiB)).isZero(); // that MiB is owed now
        assertThat(throttle.delayMs()).isEqualTo(1000);

        time.sleep(999);
        assertThat(throttle.acquire(WANTED, MiB)).isZero();
        assertThat(throttle.delayMs()).isEqualTo(1);
        time.sleep(1);
        assertThat(throttle.delayMs()).isZero();
        assertThat(throttle.acquire(WANTED, MiB)).isEqualTo(MiB);
    }

    @Test
    void aFetchShouldAskForWhatTheBucketHoldsUpToOneSecondOfTheRate() {
        ReplicationThrottle throttle = new ReplicationThrottle(4L * MiB, time);
        time.sleep(500);
        assertThat(throttle.acquire(WANTED, MiB)).isEqualTo(2 * MiB);

        time.sleep(60_000); // idle: it saves up one second's worth, no more
        assertThat(throttle.acquire(WANTED, MiB)).isEqualTo(4 * MiB);
        time.sleep(60_000);
        assertThat(throttle.acquire(3 * MiB, MiB)).isEqualTo(3 * MiB); // never more than wanted
        assertThat(throttle.acquire(WANTED, 2 * MiB)).isEqualTo(2 * MiB); // the 1 MiB left, raised to atLeast
        assertThat(throttle.acquire(WANTED, MiB)).isZero();
    }

    @Test
    void settlingShouldChargeWhatCameBackNotWhatWasAskedFor() {
        ReplicationThrottle throttle = new ReplicationThrottle(MiB, time);

        int granted = throttle.acquire(WANTED, MiB);
        throttle.settle(granted, 3L * MiB); // the broker returned a whole first batch larger than asked
        assertThat(throttle.delayMs()).isEqualTo(3000);

        time.sleep(3000);
        granted = throttle.acquire(WANTED, MiB);
        throttle.settle(granted, 0); // nothing there (or the Fetch failed): all given back
        assertThat(throttle.delayMs()).isZero();
        assertThat(throttle.acquire(WANTED, MiB)).isEqualTo(MiB);
    }

    @Test
    void aLongPollShouldTakeNothingWhenSentAndBeChargedWhatItBrings() {
        ReplicationThrottle throttle = new ReplicationThrottle(2L * MiB, time);
        time.sleep(1000);

        // the long polls of caught-up lanes may ask for what the bucket holds, and take none of it
        assertThat(throttle.allowance(WANTED, MiB)).isEqualTo(2 * MiB);
        assertThat(throttle.allowance(WANTED, MiB)).isEqualTo(2 * MiB);
        assertThat(throttle.acquire(WANTED, MiB))
                .as("a lane with a backlog: all of it")
                .isEqualTo(2 * MiB);
        throttle.settle(0, 0); // a long poll that brought nothing
        assertThat(throttle.delayMs()).isZero();

        throttle.settle(0, MiB); // one that brought 1 MiB that came meanwhile: owed now
        assertThat(throttle.delayMs()).isEqualTo(500);
        assertThat(throttle.allowance(WANTED, MiB)).as("in debt").isZero();
        time.sleep(500);
        assertThat(throttle.allowance(WANTED, MiB)).as("empty, not in debt").isEqualTo(MiB);
    }

    @Test
    void aGrantShouldBeTakenWhenSentSoThatOtherLoopsWaitMeanwhile() {
        ReplicationThrottle throttle = new ReplicationThrottle(2L * MiB, time);
        time.sleep(1000);

        int first = throttle.acquire(WANTED, MiB);

        assertThat(first).isEqualTo(2 * MiB); // all it holds: taken now, before the answer
        assertThat(throttle.acquire(WANTED, MiB))
                .as("a second broker or mirror: empty, not in debt")
                .isEqualTo(MiB);
        assertThat(throttle.acquire(WANTED, MiB)).as("a third: in debt").isZero();
        throttle.settle(first, MiB); // half of the first came back: the other half is free again
        assertThat(throttle.acquire(WANTED, MiB)).isEqualTo(MiB);
    }

    @Test
    void aNewRateShouldApplyFromNowAndCarryTheDebt() {
        ReplicationThrottle throttle = new ReplicationThrottle(MiB, time);
        throttle.settle(throttle.acquire(WANTED, MiB), 2L * MiB); // 2 MiB owed

        time.sleep(1000); // 1 MiB paid at the old rate
        throttle.rate(4L * MiB);

        assertThat(throttle.rate()).isEqualTo(4L * MiB);
        assertThat(throttle.delayMs()).isEqualTo(250);
        time.sleep(250);
        assertThat(throttle.acquire(WANTED, MiB)).isEqualTo(MiB);
    }

    @Test
    void unlimitedShouldGrantEverythingAndALimitAfterItShouldStartEmpty() {
        ReplicationThrottle throttle = new ReplicationThrottle(ReplicationThrottle.UNLIMITED, time);
        for (int i = 0; i < 100; i++) {
            throttle.settle(throttle.acquire(WANTED, MiB), WANTED);
        }
        assertThat(throttle.delayMs()).isZero();
        int inFlight = throttle.acquire(WANTED, MiB);
        assertThat(inFlight).isEqualTo(WANTED);

        time.sleep(10_000);
        throttle.rate(MiB);
        throttle.settle(inFlight, inFlight); // asked for while unlimited: nothing was taken, nothing is owed

        assertThat(throttle.acquire(WANTED, MiB))
                .as("no burst saved up while unlimited")
                .isEqualTo(MiB);
        assertThat(throttle.acquire(WANTED, MiB)).isZero();
        throttle.rate(ReplicationThrottle.UNLIMITED);
        assertThat(throttle.acquire(WANTED, MiB)).isEqualTo(WANTED);
    }

    @Test
    void throttleTimeShouldCountWaitsOnceAndEndThemWhenTheDebtIsPaid() {
        ReplicationThrottle throttle = new ReplicationThrottle(MiB, time);
        throttle.acquire(WANTED, MiB); // 1 MiB owed, paid off 1000 ms from now
        time.sleep(200);
        assertThat(throttle.throttleTimeSeconds()).isZero(); // owing, but nobody waits yet

        assertThat(throttle.acquire(WANTED, MiB)).isZero(); // a loop waits from 200 ms
        time.sleep(100);
        assertThat(throttle.acquire(WANTED, MiB)).isZero(); // another one too: the same wait
        assertThat(throttle.throttleTimeSeconds()).isEqualTo(0.1, within(1e-9));

        time.sleep(5000); // nobody asks again until long after it was paid off at 1000 ms
        assertThat(throttle.throttleTimeSeconds()).isEqualTo(0.8, within(1e-9));
        assertThat(throttle.acquire(WANTED, MiB)).isEqualTo(MiB); // the second saved up
        assertThat(throttle.acquire(WANTED, MiB)).isEqualTo(MiB); // empty, not in debt: now 1 MiB owed
        assertThat(throttle.throttleTimeSeconds()).isEqualTo(0.8, within(1e-9));

        assertThat(throttle.acquire(WANTED, MiB)).isZero(); // waits from 5300 ms
        time.sleep(300);
        throttle.rate(ReplicationThrottle.UNLIMITED); // lifted: the wait ends now
        time.sleep(1000);
        assertThat(throttle.throttleTimeSeconds()).isEqualTo(1.1, within(1e-9));
    }

    @Test
    void aRateShouldBePositive() {
        assertThatThrownBy(() -> new ReplicationThrottle(0, time)).isInstanceOf(IllegalArgumentException.class);
        ReplicationThrottle throttle = new ReplicationThrottle(MiB, time);
        assertThatThrownBy(() -> throttle.rate(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThat(throttle.rate()).isEqualTo(MiB);
    }

    /**
     * Three loops (brokers or mirrors) fetch a backlog through one budget, 1 ms per step, each answer 20 ms after its
     * Fetch and sometimes a whole batch larger than asked: over 30 s the bytes fetched are the rate's within one grant
     * per loop, and so over the next 10 s after the rate doubled.
     */
    @Test
    void bytesOverAWindowShouldBeTheRateTimesTheWindowWithinOneGrantPerLoop() {
        long rate = 2L * MiB;
        ReplicationThrottle throttle = new ReplicationThrottle(rate, time);
        Random random = new Random(42);
        List<long[]> inFlight = new ArrayList<>(); // {loop, granted, received, answeredAtMs}
        boolean[] fetching = new boolean[3];
        long[] receivedAt = new long[50_001]; // bytes received by the end of each ms
        long received = 0;
        for (int ms = 0; ms <= 50_000; ms++) {
            if (ms == 35_000) {
                throttle.rate(2 * rate);
            }
            for (var it = inFlight.iterator(); it.hasNext(); ) {
                long[] fetch = it.next();
                if (fetch[3] == ms) {
                    throttle.settle((int) fetch[1], fetch[2]);
                    received += fetch[2];
                    fetching[(int) fetch[0]] = false;
                    it.remove();
                }
            }
            for (int loop = 0; loop < 3; loop++) {
                if (!fetching[loop]) {
                    int granted = throttle.acquire(WANTED, MiB);
                    if (granted > 0) {
                        long bytes = random.nextInt(4) == 0 ? granted + 256 * 1024 : granted - 8 * 1024;
                        inFlight.add(new long[] {loop, granted, bytes, ms + 20});
                        fetching[loop] = true;
                    }
                }
            }
            receivedAt[ms] = received;
            time.sleep(1);
        }

        assertThat(receivedAt[35_000] - receivedAt[5_000]).isCloseTo(30 * rate, within(3L * (MiB + 256 * 1024)));
        assertThat(receivedAt[50_000] - receivedAt[40_000]).isCloseTo(20 * rate, within(3L * (MiB + 256 * 1024)));
    }
}
