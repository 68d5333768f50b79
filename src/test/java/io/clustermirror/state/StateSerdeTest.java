package io.clustermirror.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.clustermirror.mirror.LossReport;
import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionStatus;
import io.clustermirror.mirror.PreservedTail;
import io.clustermirror.mirror.TopicDivergence;
import io.clustermirror.mirror.TopicPromotion;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StateSerdeTest {

    @Test
    void mirrorRecordShouldRoundTripWithItsFormatVersion() throws Exception {
        Mirror mirror = new Mirror(
                "m1",
                new MirrorConfig(Map.of("bootstrap.servers", "k:1", "sasl.jaas.config", "s")),
                "cid",
                Instant.parse("2026-01-01T00:00:00Z"),
                Instant.parse("2026-01-02T00:00:00Z"));

        byte[] key = StateSerde.key(StateKey.mirror("m1"));
        byte[] value = StateSerde.value(StateSecrets.clear().seal(mirror));

        assertThat(new String(key, StandardCharsets.UTF_8))
                .isEqualTo("{\"v\":1,\"kind\":\"mirror\",\"mirror\":\"m1\"}");
        assertThat(StateSerde.readKey(key)).isEqualTo(StateKey.mirror("m1"));
        assertThat(StateSecrets.clear().open(StateSerde.readMirror(value))).isEqualTo(mirror);
        assertThat(new String(value, StandardCharsets.UTF_8))
                .contains("\"v\":1")
                .doesNotContain("sealed");
    }

    @Test
    void serviceConfigRecordShouldRoundTripUnderAKeyOfItsOwnAndLeaveTheOtherKeysAsTheyWere() {
        byte[] key = StateSerde.key(StateKey.config("mirror.replication.throttled.rate"));
        byte[] value = StateSerde.value(new ServiceConfigRecord(StateSerde.FORMAT_VERSION, "2097152"));

        assertThat(new String(key, StandardCharsets.UTF_8))
                .isEqualTo(
                        "{\"v\":1,\"kind\":\"config\",\"mirror\":\"\",\"name\":\"mirror.replication.throttled.rate\"}");
        assertThat(StateSerde.readKey(key)).isEqualTo(StateKey.config("mirror.replication.throttled.rate"));
        assertThat(StateSerde.readServiceConfig(value).value()).isEqualTo("2097152");
        // compaction keeps the newest value per key's bytes: the keys written before this kind existed are unchanged
        assertThat(new String(StateSerde.key(StateKey.partition("m1", "t", 3)), StandardCharsets.UTF_8))
                .isEqualTo("{\"v\":1,\"kind\":\"partition\",\"mirror\":\"m1\",\"topic\":\"t\",\"partition\":3}");
        assertThatThrownBy(() ->
                        StateSerde.readServiceConfig("{\"v\":2,\"value\":\"1\"}".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(StateFormatException.class)
                .hasMessageContaining("config value has format version 2");
    }

    private static final String K1 = "k1:" + Base64.getEncoder().encodeToString(new byte[32]);
    private static final String K2 = "k2:"
            + Base64.getEncoder()
                    .encodeToString("0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.US_ASCII));

    private static StateSecrets secrets(String... keys) {
        return new StateSecrets(
                SecretCipher.of(List.of(keys)), key -> key.contains("jaas") || key.contains("password"));
    }

    @Test
    void secretValuesShouldBeSealedWithTheFirstKeyAndOpenWithAnyGivenOne() throws Exception {
        Mirror mirror = new Mirror(
                "m1",
                new MirrorConfig(
                        Map.of("bootstrap.servers", "k:1", "sasl.jaas.config", "hunter2", "ssl.key.password", "")),
                "cid",
                Instant.EPOCH,
                Instant.EPOCH);

        byte[] value = StateSerde.value(secrets(K1).seal(mirror));
        String stored = new String(value, StandardCharsets.UTF_8);
        MirrorRecord record = StateSerde.readMirror(value);

        assertThat(stored)
                .doesNotContain("hunter2")
                .contains("\"keyId\":\"k1\"")
                .contains("\"v\":2");
        assertThat(record.config()).containsOnlyKeys("bootstrap.servers", "ssl.key.password");
        assertThat(secrets(K1).open(record)).isEqualTo(mirror);
        assertThat(secrets(K1).stale(record)).isFalse();
        // rotation: the new key first, the old one still opens; the record is stale until written again
        assertThat(secrets(K2, K1).open(record)).isEqualTo(mirror);
        assertThat(secrets(K2, K1).stale(record)).isTrue();
        assertThat(secrets(K2, K1).seal(mirror).sealed().get("sasl.jaas.config").keyId())
                .isEqualTo("k2");
        // a record in clear is stale once a key is given
        assertThat(secrets(K1).stale(StateSecrets.clear().seal(mirror))).isTrue();
    }

    @Test
    void aSealedRecordShouldNotOpenWithoutItsKeyOrMovedToAnotherMirror() {
        Mirror mirror = withJaas("hunter2");
        MirrorRecord record = secrets(K1).seal(mirror);

        assertThatThrownBy(() -> secrets(K2).open(record))
                .isInstanceOf(StateSecrets.Unreadable.class)
                .hasMessageContaining("[k1]");
        assertThatThrownBy(() -> StateSecrets.clear().open(record)).isInstanceOf(StateSecrets.Unreadable.class);
        MirrorRecord moved =
                new MirrorRecord(2, "m2", record.config(), record.sealed(), "cid", Instant.EPOCH, Instant.EPOCH);
        assertThatThrownBy(() -> secrets(K1).open(moved))
                .isInstanceOf(StateSecrets.Unreadable.class)
                .hasMessageContaining("sasl.jaas.config");
        String otherKeySameId = "k1:"
                + Base64.getEncoder().encodeToString(new byte[] {
                    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
                    28, 29, 30, 31, 32
                });
        assertThatThrownBy(() -> secrets(otherKeySameId).open(record)).isInstanceOf(StateSecrets.Unreadable.class);
    }

    private static Mirror withJaas(String jaas) {
        return new Mirror(
                "m1",
                new MirrorConfig(Map.of("bootstrap.servers", "k:1", "sasl.jaas.config", jaas)),
                "cid",
                Instant.EPOCH,
                Instant.EPOCH);
    }

    @Test
    void aDamagedSealedValueShouldBeUnreadableNamingItsSetting() {
        Mirror mirror = withJaas("hunter2");
        MirrorRecord record = secrets(K1).seal(mirror);
        for (SecretCipher.Sealed damaged : List.of(
                new SecretCipher.Sealed("k1", "not base64!"),
                new SecretCipher.Sealed("k1", "AAAA"),
                new SecretCipher.Sealed(null, "AAAA"))) {
            MirrorRecord broken = new MirrorRecord(
                    2, "m1", record.config(), Map.of("sasl.jaas.config", damaged), "cid", Instant.EPOCH, Instant.EPOCH);
            assertThatThrownBy(() -> secrets(K1).open(broken))
                    .isInstanceOf(StateSecrets.Unreadable.class)
                    .hasMessageContaining("sasl.jaas.config");
        }
    }

    @Test
    void malformedKeysShouldBeNamed() {
        assertThatThrownBy(() -> SecretCipher.of(List.of("k1:short"))).hasMessageContaining("'k1'");
        assertThatThrownBy(() -> SecretCipher.of(List.of(K1, K1))).hasMessageContaining("twice");
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
    void aStoppedPartitionShouldKeepItsLossReportAndAnOlderRecordShouldReadWithout() {
        Instant at = Instant.parse("2026-12-01T00:00:00Z");
        PartitionStatus stopped = mirroring(at)
                .moveTo(MirrorPartitionState.STOPPING, null, at)
                .moveTo(MirrorPartitionState.STOPPED, null, at)
                .withLossAtStop(new LossReport(at, false, 35, at.minusSeconds(40), 20, 15, 41_000, true));

        assertThat(StateSerde.readPartition(StateSerde.value(PartitionRecord.of(stopped)))
                        .toStatus())
                .isEqualTo(stopped);
        byte[] older = ("{\"v\":1,\"state\":\"STOPPED\",\"previousState\":\"STOPPING\",\"stateEpoch\":4,"
                        + "\"retryAttempt\":0,\"lastMirroredEpoch\":-1,\"updatedAt\":\"2026-12-01T00:00:00Z\"}")
                .getBytes(StandardCharsets.UTF_8);
        assertThat(StateSerde.readPartition(older).toStatus().lossAtStop()).isNull();
    }

    @Test
    void aStoppingPartitionShouldKeepWhatItWaitsForBesideItsReasonAndAnOlderRecordShouldReadWithout() {
        Instant at = Instant.parse("2026-12-01T00:00:00Z");
        PartitionStatus waiting = mirroring(at)
                .moveTo(MirrorPartitionState.STOPPING, "source topic deleted", at)
                .waitingFor("stopping waits for the mirror's clients: no bootstrap", at.plusSeconds(1));

        PartitionStatus read = StateSerde.readPartition(StateSerde.value(PartitionRecord.of(waiting)))
                .toStatus();
        assertThat(read).isEqualTo(waiting);
        assertThat(read.error()).isEqualTo("source topic deleted");
        assertThat(read.stateEpoch()).isEqualTo(4);
        assertThat(read.moveTo(MirrorPartitionState.STOPPED, read.error(), at).waiting())
                .isNull();
        byte[] older = ("{\"v\":1,\"state\":\"STOPPING\",\"previousState\":\"MIRRORING\",\"stateEpoch\":3,"
                        + "\"retryAttempt\":0,\"lastMirroredEpoch\":-1,\"error\":\"source topic deleted\","
                        + "\"updatedAt\":\"2026-12-01T00:00:00Z\"}")
                .getBytes(StandardCharsets.UTF_8);
        assertThat(StateSerde.readPartition(older).toStatus().waiting()).isNull();
        // and what an instance of before sees in a record of this release: a field it does not know, skipped
        byte[] later = ("{\"v\":1,\"state\":\"STOPPING\",\"previousState\":\"MIRRORING\",\"stateEpoch\":4,"
                        + "\"retryAttempt\":0,\"lastMirroredEpoch\":-1,\"error\":\"source topic deleted\","
                        + "\"updatedAt\":\"2026-12-01T00:00:01Z\",\"fromALaterRelease\":\"x\"}")
                .getBytes(StandardCharsets.UTF_8);
        assertThat(StateSerde.readPartition(later).toStatus().error()).isEqualTo("source topic deleted");
    }

    /** A partition that passed LOG_TRUNCATION and mirrors (state epoch 2). */
    private static PartitionStatus mirroring(Instant at) {
        return PartitionStatus.initial(at)
                .moveTo(MirrorPartitionState.LOG_TRUNCATION, null, at)
                .moveTo(MirrorPartitionState.MIRRORING, null, at);
    }

    @Test
    void verifiedRecordShouldRoundTripUnderAPartitionKeyOfItsOwnKind() {
        byte[] key = StateSerde.key(StateKey.verified("m1", "orders", 2));
        byte[] value = StateSerde.value(new VerifiedRecord(StateSerde.FORMAT_VERSION, 4711));

        assertThat(new String(key, StandardCharsets.UTF_8))
                .isEqualTo("{\"v\":1,\"kind\":\"verified\",\"mirror\":\"m1\",\"topic\":\"orders\",\"partition\":2}");
        assertThat(StateSerde.readKey(key)).isEqualTo(StateKey.verified("m1", "orders", 2));
        assertThat(new String(value, StandardCharsets.UTF_8)).isEqualTo("{\"v\":1,\"offset\":4711}");
        assertThat(StateSerde.readVerified(value).offset()).isEqualTo(4711);
        assertThat(StateSerde.key(StateKey.verified("m1", "orders", 2)))
                .isNotEqualTo(StateSerde.key(StateKey.partition("m1", "orders", 2)));
        assertThatThrownBy(() -> StateSerde.readVerified("{\"v\":2,\"offset\":1}".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(StateFormatException.class)
                .hasMessageContaining("verified value has format version 2");
    }

    @Test
    void newerFormatShouldBeRefusedNotMisread() {
        byte[] key = "{\"v\":3,\"kind\":\"mirror\",\"mirror\":\"m1\"}".getBytes(StandardCharsets.UTF_8);

        assertThatThrownBy(() -> StateSerde.readKey(key))
                .isInstanceOf(StateFormatException.class)
                .hasMessageContaining("format version 3");
    }

    @Test
    void garbageShouldBeAStateFormatError() {
        assertThatThrownBy(() -> StateSerde.readKey("not json".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(StateFormatException.class);
    }

    @Test
    void recordToStringShouldNotCarrySecrets() {
        Mirror mirror = withJaas("hunter2");

        assertThat(StateSecrets.clear().seal(mirror).toString()).doesNotContain("hunter2");
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
