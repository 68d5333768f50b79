package io.clustermirror.fetch;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TroubleSpanTest {

    private static final long GAP = 2_000;

    @Test
    void sightingsCloserThanTheGapShouldCountFromTheFirst() {
        TroubleSpan span = new TroubleSpan();

        assertThat(span.seen(100, GAP, true)).isZero(); // the first starts the count
        assertThat(span.seen(1_100, GAP, true)).isEqualTo(1_000);
        assertThat(span.seen(3_000, GAP, true)).isEqualTo(2_900);
        assertThat(span.seen(4_900, GAP, true)).isEqualTo(4_800);
    }

    @Test
    void aSightingMoreThanTheGapAfterTheLastShouldStartTheCountAgain() {
        // Given a trouble seen for a while, then nothing (the partition idle)
        TroubleSpan span = new TroubleSpan();
        span.seen(0, GAP, true);
        span.seen(1_500, GAP, true);

        // When it is seen again more than the gap later, its old start is not held against it
        assertThat(span.seen(3_501, GAP, true)).isZero();
        assertThat(span.seen(4_000, GAP, true)).isEqualTo(499);
    }

    @Test
    void aSightingThatDoesNotCountOrAClearShouldStopTheCount() {
        TroubleSpan span = new TroubleSpan();
        span.seen(0, GAP, true);
        span.seen(1_000, GAP, true);

        // a sighting that does not count (nothing waits on the partition) stops the count, and so does the next one
        assertThat(span.seen(1_500, GAP, false)).isZero();
        assertThat(span.seen(2_000, GAP, false)).isZero();
        // the next that counts starts it anew
        assertThat(span.seen(2_500, GAP, true)).isZero();
        assertThat(span.seen(3_000, GAP, true)).isEqualTo(500);

        // and once the trouble is over, a new sighting starts anew
        span.clear();
        assertThat(span.seen(3_500, GAP, true)).isZero();
    }
}
