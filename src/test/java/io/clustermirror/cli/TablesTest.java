package io.clustermirror.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.client.model.InstanceDescription;
import io.clustermirror.client.model.InstanceList;
import io.clustermirror.client.model.MirrorSummary;
import io.clustermirror.client.model.PartitionDescription;
import io.clustermirror.client.model.TopicDescription;
import java.util.List;
import org.junit.jupiter.api.Test;

class TablesTest {

    private static PartitionDescription partition(int partition, String state, long source, long destination) {
        return new PartitionDescription()
                .partition(partition)
                .state(state)
                .sourceOffset(source)
                .destinationOffset(destination)
                .lag(source - destination);
    }

    private static TopicDescription topic(String mirror, String topic, PartitionDescription... partitions) {
        return new TopicDescription().mirror(mirror).topic(topic).partitions(List.of(partitions));
    }

    @Test
    void describeShouldPrintTheKipColumnsAlignedWithEta() {
        List<String> lines = Tables.describe(
                List.of(topic(
                        "dr",
                        "orders",
                        partition(0, "MIRRORING", 120000, 119800),
                        partition(1, "LOG_TRUNCATION", 5, 0))),
                false);

        assertThat(lines)
                .containsExactly(
                        "MIRROR  TOPIC   PARTITION  SOURCE-OFFSET  DESTINATION-OFFSET  LAG  STATE           ETA  RPO",
                        "dr      orders  0          120000         119800              200  MIRRORING       -    -",
                        "dr      orders  1          5              0                   5    LOG_TRUNCATION  -    -");
    }

    @Test
    void anOffsetACLusterDidNotGiveShouldPrintAsADashAndSoShouldItsLag() {
        PartitionDescription unknownSource = partition(0, "MIRRORING", -1, 10);

        List<String> lines = Tables.describe(List.of(topic("m", "t", unknownSource)), false);

        assertThat(lines.get(1))
                .isEqualTo("m       t      0          -              10                  -    MIRRORING  -    -");
    }

    @Test
    void failedShouldKeepOnlyFailedPartitionsWithTheirErrorOnOneLine() {
        PartitionDescription failed = partition(2, "FAILED", 10, 4).error("diverged:\nthe destination holds [4, 9)");

        List<String> lines = Tables.describe(
                List.of(
                        topic("m", "t", partition(0, "MIRRORING", 1, 1), failed),
                        topic("m", "u", partition(0, "PAUSED", 1, 1))),
                true);

        assertThat(lines)
                .containsExactly(
                        "MIRROR  TOPIC  PARTITION  SOURCE-OFFSET  DESTINATION-OFFSET  LAG  STATE   ETA  RPO  ERROR",
                        "m       t      2          10             4                   6    FAILED  -    -    diverged: the"
                                + " destination holds [4, 9)");
    }

    @Test
    void theRpoColumnShouldShowWholeSecondsAndMarkAnUpperBound() {
        assertThat(Tables.rpo(partition(0, "PAUSED", 10, 4).rpoMs(7_480L).rpoBound(false)))
                .isEqualTo("7s");
        assertThat(Tables.rpo(partition(0, "MIRRORING", 10, 10).rpoMs(0L).rpoBound(false)))
                .isEqualTo("0s");
        assertThat(Tables.rpo(partition(0, "PAUSED", -1, 4).rpoMs(125_001L).rpoBound(true)))
                .isEqualTo("<=2m06s");
        assertThat(Tables.rpo(partition(0, "STOPPED", 10, 4))).isEqualTo("-");
    }

    @Test
    void listShouldPrintTheKipColumns() {
        List<String> lines = Tables.list(List.of(
                new MirrorSummary()
                        .name("dr-east")
                        .topicCount(12)
                        .sourceClusterId("MkU3OEVBNTcwNTJENDM2Qk")
                        .sourceBootstrapServers("east-1:9092,east-2:9092"),
                new MirrorSummary().name("x").topicCount(0)));

        assertThat(lines)
                .containsExactly(
                        "MIRROR   TOPICS  SOURCE-CLUSTER-ID       SOURCE-BOOTSTRAP-SERVER",
                        "dr-east  12      MkU3OEVBNTcwNTJENDM2Qk  east-1:9092,east-2:9092",
                        "x        0       -                       -");
    }

    @Test
    void anEmptyTableShouldStillHaveItsHeader() {
        assertThat(Tables.list(List.of()))
                .containsExactly("MIRROR  TOPICS  SOURCE-CLUSTER-ID  SOURCE-BOOTSTRAP-SERVER");
    }

    @Test
    void theEtaShouldBeTheServicesEstimateOrADashWithoutOne() {
        assertThat(Tables.eta(partition(0, "MIRRORING", 10, 0))).isEqualTo("-");
        assertThat(Tables.eta(partition(0, "MIRRORING", 10, 0).etaSeconds(65))).isEqualTo("1m05s");
        assertThat(Tables.eta(partition(0, "MIRRORING", 10, 10).etaSeconds(0))).isEqualTo("0s");
    }

    @Test
    void durationsShouldReadAsTheEtaColumnShowsThem() {
        assertThat(Tables.duration(null)).isEqualTo("-");
        assertThat(Tables.duration(-1L)).isEqualTo("-");
        assertThat(Tables.duration(0L)).isEqualTo("0s");
        assertThat(Tables.duration(59L)).isEqualTo("59s");
        assertThat(Tables.duration(65L)).isEqualTo("1m05s");
        assertThat(Tables.duration(3599L)).isEqualTo("59m59s");
        assertThat(Tables.duration(3600L)).isEqualTo("1h00m");
        assertThat(Tables.duration(90061L)).isEqualTo("25h01m");
    }

    @Test
    void instancesShouldListEachWithItsStatePartitionsAsRangesAndMarkTheOneThatAnswered() {
        InstanceList list = new InstanceList()
                .answeredBy("mirror-1")
                .instances(List.of(
                        new InstanceDescription()
                                .id("mirror-0")
                                .url("http://10.0.0.7:8080")
                                .statePartitions(List.of(0, 1, 2, 3, 7, 9, 10))
                                .mirrors(11),
                        new InstanceDescription()
                                .id("mirror-1")
                                .url("http://10.0.0.8:8080")
                                .statePartitions(List.of())
                                .mirrors(0)));

        assertThat(Tables.instances(list))
                .containsExactly(
                        "INSTANCE    URL                   STATE-PARTITIONS  MIRRORS",
                        "mirror-0    http://10.0.0.7:8080  0-3,7,9-10        11",
                        "mirror-1 *  http://10.0.0.8:8080  -                 0");
    }
}
