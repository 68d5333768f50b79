package io.clustermirror.sync;

import static io.clustermirror.sync.Fixtures.await;
import static io.clustermirror.sync.Fixtures.mirror;
import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.mirror.MirrorConfig;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ConfigStepTest {

    private final Fixtures fixtures = new Fixtures();
    private final FakeCluster source = new FakeCluster();
    private final FakeCluster destination = new FakeCluster();

    @Test
    void theSourcesExplicitConfigsShouldBeSetAndTheOnesItDroppedDeletedButOwnedAndExcludedOnesKept() {
        source.configs.put("t", Map.of("retention.ms", "1000", "cleanup.policy", "compact", "retention.bytes", "5"));
        destination.configs.put(
                "t",
                new HashMap<>(Map.of(
                        "retention.ms",
                        "99",
                        "segment.ms",
                        "7",
                        "message.timestamp.type",
                        "LogAppendTime",
                        "retention.bytes",
                        "9")));

        await(ConfigStep.sync(
                mirror(MirrorConfig.TOPIC_PROPERTIES_EXCLUDE, "retention.bytes"),
                Set.of("t"),
                source,
                destination,
                fixtures.log));

        assertThat(destination.writes)
                .containsExactly("alter config t set {cleanup.policy=compact, retention.ms=1000} delete [segment.ms]");
        assertThat(destination.configs.get("t"))
                .containsEntry("message.timestamp.type", "LogAppendTime") // owned by the mirror
                .containsEntry("retention.bytes", "9"); // excluded
        assertThat(fixtures.report().errors()).isEmpty();
    }

    @Test
    void topicsInStepShouldCauseNoWrite() {
        source.configs.put("t", Map.of("retention.ms", "1000"));
        destination.configs.put("t", new HashMap<>(Map.of("retention.ms", "1000")));

        await(ConfigStep.sync(mirror(), Set.of("t"), source, destination, fixtures.log));

        assertThat(destination.writes).isEmpty();
    }

    @Test
    void aTopicThatCannotBeReadShouldBeReportedWhileTheOthersAreSynced() {
        source.configs.put("t", Map.of("retention.ms", "1000"));
        source.configs.put("u", Map.of("retention.ms", "2000"));
        destination.configs.put("t", new HashMap<>());
        destination.configs.put("u", new HashMap<>());
        source.unreadableConfigs.add("u");

        await(ConfigStep.sync(mirror(), Set.of("t", "u"), source, destination, fixtures.log));

        assertThat(destination.writes).containsExactly("alter config t set {retention.ms=1000} delete []");
        assertThat(fixtures.report().errors()).singleElement().asString().startsWith("config of topic u: ");
        assertThat(fixtures.errors("TopicConfigMetadataSyncError")).isEqualTo(1);
    }

    @Test
    void aTopicNotYetOnTheDestinationShouldBeLeftToTheTopicStep() {
        source.configs.put("t", Map.of("retention.ms", "1000"));

        await(ConfigStep.sync(mirror(), Set.of("t"), source, destination, fixtures.log));

        assertThat(destination.writes).isEmpty();
        assertThat(fixtures.report().errors()).isEmpty();
    }
}
