package io.clustermirror.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.PreservedTail;
import io.clustermirror.mirror.TopicDivergence;
import io.clustermirror.mirror.TopicPromotion;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StateSerdeTest {

    @Test
    void mirrorRecordShouldRoundTripWithItsFormatVersion() {
        Mirror mirror = new Mirror(
                "m1",
                new MirrorConfig(Map.of("bootstrap.servers", "k:1", "sasl.jaas.config", "s")),
                "cid",
                Instant.parse("2026-01-01T00:00:00Z"),
                Instant.parse("2026-01-02T00:00:00Z"));

        byte[] key = StateSerde.key(StateKey.mirror("m1"));
        byte[] value = StateSerde.value(MirrorRecord.of(mirror));

        assertThat(new String(key, StandardCharsets.UTF_8))
                .isEqualTo("{\"v\":1,\"kind\":\"mirror\",\"mirror\":\"m1\"}");
        assertThat(StateSerde.readKey(key)).isEqualTo(StateKey.mirror("m1"));
        assertThat(StateSerde.readMirror(value).toMirror()).isEqualTo(mirror);
    }

    @Test
    void promotionAndDivergenceRecordsShouldRoundTrip() {
        Instant at = Instant.parse("2026-12-01T00:00:00Z");
        TopicPromotion promotion = TopicPromotion.promoting("orders", true, true, at)
                .promoted(List.of(new TopicPromotion.PromotedPartition(0, 120, 120, 3)), at.plusSeconds(2));
        TopicDivergence divergence = new TopicDivergence(
                "orders", at, List.of(new PreservedTail("orders", 0, 100, 130, 30, "__diverged.orders")));

        assertThat(StateSerde.readPromotion(StateSerde.value(new PromotionRecord(1, promotion)))
                        .promotion())
                .isEqualTo(promotion);
        assertThat(StateSerde.readDivergence(StateSerde.value(new DivergenceRecord(1, divergence)))
                        .divergence())
                .isEqualTo(divergence);
        assertThat(StateSerde.readKey(StateSerde.key(StateKey.divergence("m1", "orders"))))
                .isEqualTo(StateKey.divergence("m1", "orders"));
    }

    @Test
    void newerFormatShouldBeRefusedNotMisread() {
        byte[] key = "{\"v\":2,\"kind\":\"mirror\",\"mirror\":\"m1\"}".getBytes(StandardCharsets.UTF_8);

        assertThatThrownBy(() -> StateSerde.readKey(key))
                .isInstanceOf(StateFormatException.class)
                .hasMessageContaining("format version 2");
    }

    @Test
    void garbageShouldBeAStateFormatError() {
        assertThatThrownBy(() -> StateSerde.readKey("not json".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(StateFormatException.class);
    }

    @Test
    void recordToStringShouldNotCarrySecrets() {
        Mirror mirror = new Mirror(
                "m1",
                new MirrorConfig(Map.of("bootstrap.servers", "k:1", "sasl.jaas.config", "hunter2")),
                "cid",
                Instant.EPOCH,
                Instant.EPOCH);

        assertThat(MirrorRecord.of(mirror).toString()).doesNotContain("hunter2");
    }

    @Test
    void coordinatorPartitionShouldBeStableAndInRange() {
        assertThat(MirrorStateStore.partitionFor("dr-east", 50))
                .isEqualTo(MirrorStateStore.partitionFor("dr-east", 50))
                .isBetween(0, 49);
        for (int i = 0; i < 1000; i++) {
            assertThat(MirrorStateStore.partitionFor("m" + i, 7)).isBetween(0, 6);
        }
    }
}
