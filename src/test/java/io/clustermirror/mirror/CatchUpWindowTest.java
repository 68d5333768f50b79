package io.clustermirror.mirror;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CatchUpWindowTest {

    /** A sample of a partition whose records are 100 bytes each and one offset each. */
    private static CatchUpWindow.Sample at(long ms, long sourceEnd, long destinationEnd) {
        return new CatchUpWindow.Sample(ms, sourceEnd, destinationEnd, destinationEnd, destinationEnd * 100);
    }

    @Test
    void ratesShouldBeUnknownUntilTwoSamplesSpanASecond() {
        CatchUpWindow window = new CatchUpWindow();
        assertThat(window.rates()).isNull();
        window.add(at(0, 10_000, 0));
        assertThat(window.rates()).isNull();
        window.add(at(999, 10_000, 500));
        assertThat(window.rates()).isNull();

        window.add(at(2_000, 10_000, 1_000));

        CatchUpWindow.Rates rates = window.rates();
        assertThat(rates.recordsPerSecond()).isEqualTo(500.0);
        assertThat(rates.bytesPerSecond()).isEqualTo(50_000.0);
        assertThat(rates.destinationOffsetsPerSecond()).isEqualTo(500.0);
        assertThat(rates.catchUpPerSecond()).isEqualTo(500.0);
        assertThat(rates.spanMs()).isEqualTo(2_000);
    }

    @Test
    void ratesShouldCoverOnlyTheLastWindow() {
        // Given 1,000 records/s for a minute, then 100 records/s for 40 s
        CatchUpWindow window = new CatchUpWindow(30_000);
        long end = 0;
        for (int s = 0; s <= 100; s += 2) {
            window.add(at(s * 1_000L, 1_000_000, end));
            end += s < 60 ? 2_000 : 200;
        }

        // Then the rates are those of the last 30 s only
        assertThat(window.rates().recordsPerSecond()).isCloseTo(100.0, within(0.01));
        assertThat(window.rates().spanMs()).isEqualTo(30_000);
    }

    @Test
    void etaShouldShrinkAsTheLagShrinksAtASteadyRate() {
        // Given a source of 100,000 offsets no longer written, copied at 1,000 offsets/s
        CatchUpWindow window = new CatchUpWindow();
        List<Integer> etas = new ArrayList<>();
        for (int s = 0; s <= 60; s += 2) {
            long destinationEnd = s * 1_000L;
            window.add(at(s * 1_000L, 100_000, destinationEnd));
            etas.add(CatchUpWindow.etaSeconds(100_000 - destinationEnd, window.rates()));
        }

        // Then the ETA is unknown for the first sample only, then the lag over 1,000/s, falling as the lag does
        assertThat(etas.get(0)).isNull();
        assertThat(etas.subList(1, etas.size())).doesNotContainNull().isSortedAccordingTo((a, b) -> b - a);
        assertThat(etas.get(1)).isEqualTo(98);
        assertThat(etas.get(etas.size() - 1)).isEqualTo(40);
    }

    @Test
    void etaShouldBeNetOfTheSourcesGrowth() {
        // Given the destination appends 1,000 offsets/s while the source grows by 600/s
        CatchUpWindow window = new CatchUpWindow();
        window.add(at(0, 10_000, 0));
        window.add(at(10_000, 16_000, 10_000));

        // Then the lag of 6,000 shrinks by 400/s
        assertThat(window.rates().catchUpPerSecond()).isCloseTo(400.0, within(1e-9));
        assertThat(CatchUpWindow.etaSeconds(6_000, window.rates())).isEqualTo(15);
    }

    @Test
    void etaShouldBeNullWhileTheLagGrows() {
        // Given the source grows by 2,000 offsets/s and the destination by 1,000/s (a throttle)
        CatchUpWindow window = new CatchUpWindow();
        window.add(at(0, 20_000, 0));
        window.add(at(10_000, 40_000, 10_000));

        assertThat(window.rates().catchUpPerSecond()).isEqualTo(-1_000.0);
        assertThat(CatchUpWindow.etaSeconds(30_000, window.rates())).isNull();
    }

    @Test
    void etaShouldBeNullWhileNothingMoves() {
        CatchUpWindow window = new CatchUpWindow();
        window.add(at(0, 5_000, 1_000));
        window.add(at(10_000, 5_000, 1_000));

        assertThat(CatchUpWindow.etaSeconds(4_000, window.rates())).isNull();
    }

    @Test
    void etaShouldBeZeroWhenCaughtUp() {
        // no lag: caught up, measured or not
        assertThat(CatchUpWindow.etaSeconds(0, null)).isZero();
        // a live source: the lag is what is in flight, less than the destination appends in a second
        CatchUpWindow window = new CatchUpWindow();
        window.add(at(0, 1_000, 900));
        window.add(at(10_000, 11_000, 10_900));
        assertThat(window.rates().catchUpPerSecond()).isZero();
        assertThat(CatchUpWindow.etaSeconds(100, window.rates())).isZero();
        assertThat(CatchUpWindow.etaSeconds(1_000, window.rates())).isZero();
        assertThat(CatchUpWindow.etaSeconds(1_001, window.rates())).isNull();
    }

    @Test
    void etaShouldBeUnknownWithoutTheLagRatesOrTheSourceEnd() {
        assertThat(CatchUpWindow.etaSeconds(-1, null)).isNull();
        assertThat(CatchUpWindow.etaSeconds(500, null)).isNull();
        CatchUpWindow window = new CatchUpWindow();
        window.add(at(0, -1, 0));
        window.add(at(10_000, 50_000, 10_000));
        assertThat(window.rates().catchUpPerSecond()).isNull();
        assertThat(window.rates().recordsPerSecond()).isEqualTo(1_000.0);
        assertThat(CatchUpWindow.etaSeconds(40_000, window.rates())).isNull();
    }

    @Test
    void theCatchUpShouldBeMeasuredFromTheFirstSampleThatKnewTheSourcesEnd() {
        // Given a partition new in the data plane, sampled before its first Fetch answer told it the source's end
        CatchUpWindow window = new CatchUpWindow();
        window.add(at(0, -1, 0));
        window.add(at(2_000, 50_000, 2_000));
        assertThat(window.rates().catchUpPerSecond())
                .as("one sample knows the source's end")
                .isNull();

        window.add(at(4_000, 50_000, 4_000));

        // Then the lag's shrinking is known from then on, without waiting for the first sample to leave the window
        assertThat(window.rates().catchUpPerSecond()).isEqualTo(1_000.0);
        assertThat(window.rates().recordsPerSecond()).isEqualTo(1_000.0);
        assertThat(CatchUpWindow.etaSeconds(46_000, window.rates())).isEqualTo(46);
    }

    @Test
    void countersGoingBackShouldStartTheWindowAfresh() {
        // Given a window of a partition that left the data plane and came back (its counters start at 0 again)
        CatchUpWindow window = new CatchUpWindow();
        window.add(new CatchUpWindow.Sample(0, 10_000, 5_000, 5_000, 500_000));
        window.add(new CatchUpWindow.Sample(2_000, 10_000, 6_000, 6_000, 600_000));

        window.add(new CatchUpWindow.Sample(4_000, 10_000, 6_000, 0, 0));

        assertThat(window.rates()).isNull();
        window.add(new CatchUpWindow.Sample(6_000, 10_000, 6_400, 400, 40_000));
        assertThat(window.rates().recordsPerSecond()).isEqualTo(200.0);
    }
}
