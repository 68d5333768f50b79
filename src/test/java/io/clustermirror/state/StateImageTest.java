package io.clustermirror.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.MirrorPartitionState;
import io.clustermirror.mirror.PartitionStatus;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/** The fold of {@code __mirror_state} records into what they hold, as compaction leaves it. */
class StateImageTest {

    private static final Instant AT = Instant.parse("2026-12-01T00:00:00Z");
    private long offset;

    @Test
    void theLastValueOfAKeyShouldWinAndATombstoneShouldRemoveIt() {
        StateImage image = new StateImage(StateImage.ALL);
        PartitionStatus first = PartitionStatus.initial(AT);
        PartitionStatus second = first.moveTo(MirrorPartitionState.LOG_TRUNCATION, null, AT);

        image.apply(record(
                StateKey.mirror("m1"), StateSerde.value(StateSecrets.clear().seal(mirror("m1")))));
        image.apply(record(StateKey.partition("m1", "t", 0), StateSerde.value(PartitionRecord.of(first))));
        image.apply(record(StateKey.partition("m1", "t", 0), StateSerde.value(PartitionRecord.of(second))));
        image.apply(record(StateKey.partition("m1", "t", 1), StateSerde.value(PartitionRecord.of(first))));
        image.apply(record(StateKey.partition("m1", "t", 1), null));
        image.apply(record(
                StateKey.config("mirror.replication.throttled.rate"),
                StateSerde.value(new ServiceConfigRecord(StateSerde.FORMAT_VERSION, "1048576"))));
        image.apply(record(
                StateKey.verified("m1", "t", 0), StateSerde.value(new VerifiedRecord(StateSerde.FORMAT_VERSION, 42))));

        assertThat(image.mirrors).containsOnlyKeys("m1");
        assertThat(image.partitions).isEqualTo(Map.of("m1", Map.of(new MirrorPartition("t", 0), second)));
        assertThat(image.configs).isEqualTo(Map.of("mirror.replication.throttled.rate", "1048576"));
        assertThat(image.verified).isEqualTo(Map.of("m1", Map.of(new MirrorPartition("t", 0), 42L)));

        image.apply(record(StateKey.mirror("m1"), null));
        assertThat(image.mirrors).isEmpty();
    }

    @Test
    void kindsNotAskedForShouldPassUnreadAndUnknownKindsShouldBeSkipped() {
        StateImage image = new StateImage(Set.of(StateKey.KIND_CONFIG));

        // a mirror record whose value could not even be read: not asked for, so never parsed
        image.apply(record(StateKey.mirror("m1"), "not json".getBytes(StandardCharsets.UTF_8)));
        image.apply(record(
                "{\"v\":1,\"kind\":\"from-a-later-release\",\"mirror\":\"m1\"}".getBytes(StandardCharsets.UTF_8),
                "{}".getBytes(StandardCharsets.UTF_8)));
        image.apply(record(
                StateKey.config("k"), StateSerde.value(new ServiceConfigRecord(StateSerde.FORMAT_VERSION, "v"))));

        assertThat(image.mirrors).isEmpty();
        assertThat(image.configs).isEqualTo(Map.of("k", "v"));
        assertThatThrownBy(() -> new StateImage(StateImage.ALL)
                        .apply(record(StateKey.mirror("m1"), "not json".getBytes(StandardCharsets.UTF_8))))
                .isInstanceOf(RuntimeException.class);
    }

    @Test
    void aRecordOfAKindALaterReleaseWritesShouldBeSkippedByAFullReplayAndAConfigTombstoneShouldRemoveIt() {
        StateImage image = new StateImage(StateImage.ALL);

        image.apply(record(
                "{\"v\":1,\"kind\":\"from-a-later-release\",\"mirror\":\"m1\"}".getBytes(StandardCharsets.UTF_8),
                "{\"anything\":true}".getBytes(StandardCharsets.UTF_8)));
        image.apply(record(
                StateKey.config("k"), StateSerde.value(new ServiceConfigRecord(StateSerde.FORMAT_VERSION, "v"))));
        image.apply(record(StateKey.config("k"), null));

        assertThat(image.mirrors).isEmpty();
        assertThat(image.configs).isEmpty();
        assertThatThrownBy(() -> new StateImage(Set.of("from-a-later-release")))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aRecordWithoutAKeyShouldBeRefusedNamingWhereItIs() {
        StateImage image = new StateImage(StateImage.ALL);

        assertThatThrownBy(() -> image.apply(record((byte[]) null, null)))
                .isInstanceOf(StateFormatException.class)
                .hasMessageContaining("__mirror_state-3@0 has no key");
    }

    private ConsumerRecord<byte[], byte[]> record(StateKey key, byte[] value) {
        return record(StateSerde.key(key), value);
    }

    private ConsumerRecord<byte[], byte[]> record(byte[] key, byte[] value) {
        return new ConsumerRecord<>("__mirror_state", 3, offset++, key, value);
    }

    private static Mirror mirror(String name) {
        return new Mirror(name, new MirrorConfig(Map.of("bootstrap.servers", "k:1")), "cid", AT, AT);
    }
}
