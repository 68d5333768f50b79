package io.clustermirror.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.fetch.DataPlane;
import io.clustermirror.mirror.MirrorPartition;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PartitionRatesTest {

    private static final MirrorPartition P0 = new MirrorPartition("orders", 0);
    private static final MirrorPartition P1 = new MirrorPartition("orders", 1);

    private final PartitionRates rates = new PartitionRates();

    private static DataPlane.Counts counts(long instance, long destinationEnd) {
        return new DataPlane.Counts(instance, 100_000, destinationEnd, destinationEnd, destinationEnd * 10);
    }

    @Test
    void ratesShouldBePublishedOnceASecondSampleIsIn() {
        rates.sample("m", Map.of(P0, counts(1, 0)), 0);
        assertThat(rates.rates("m", P0)).isNull();

        rates.sample("m", Map.of(P0, counts(1, 4_000)), 2_000);

        assertThat(rates.rates("m", P0).recordsPerSecond()).isEqualTo(2_000.0);
        assertThat(rates.rates("m", P0).bytesPerSecond()).isEqualTo(20_000.0);
        assertThat(rates.measured("other")).isEmpty();
        // and the lag as the data plane saw it at the sample
        assertThat(rates.measured("m").get(P0).lag()).isEqualTo(96_000);
        rates.sample("m", Map.of(P1, new DataPlane.Counts(9, -1, 10, 10, 100)), 4_000);
        assertThat(rates.measured("m").get(P1).lag())
                .as("source end not known yet")
                .isEqualTo(-1);
    }

    @Test
    void aPartitionBackInTheDataPlaneShouldStartANewWindow() {
        // Given partition 0 measured as instance 1, then back in the data plane as instance 2 whose counters have
        // already passed instance 1's
        rates.sample("m", Map.of(P0, counts(1, 0), P1, counts(7, 0)), 0);
        rates.sample("m", Map.of(P0, counts(1, 100), P1, counts(7, 100)), 2_000);

        rates.sample("m", Map.of(P0, counts(2, 5_000), P1, counts(7, 200)), 4_000);

        // Then partition 0 is not measured across the two instances; partition 1 goes on
        assertThat(rates.rates("m", P0)).isNull();
        assertThat(rates.rates("m", P1)).isNotNull();
        rates.sample("m", Map.of(P0, counts(2, 5_100), P1, counts(7, 300)), 6_000);
        assertThat(rates.rates("m", P0).recordsPerSecond()).isEqualTo(50.0);
    }

    @Test
    void partitionsAndMirrorsThatLeftShouldBeForgotten() {
        rates.sample("m", Map.of(P0, counts(1, 0), P1, counts(2, 0)), 0);
        rates.sample("m", Map.of(P0, counts(1, 100), P1, counts(2, 100)), 2_000);
        rates.sample("gone", Map.of(P0, counts(3, 0)), 0);
        rates.sample("gone", Map.of(P0, counts(3, 100)), 2_000);

        rates.sample("m", Map.of(P1, counts(2, 200)), 4_000);
        rates.retain(Set.of("m"));

        assertThat(rates.measured("m")).containsOnlyKeys(P1);
        assertThat(rates.measured("gone")).isEmpty();
    }
}
