package io.clustermirror.topics;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.topics.DestinationTopicPlan.Align;
import io.clustermirror.topics.DestinationTopicPlan.Answer;
import io.clustermirror.topics.DestinationTopicPlan.Create;
import io.clustermirror.topics.DestinationTopicPlan.Restore;
import io.clustermirror.topics.DestinationTopicPlan.Settled;
import io.clustermirror.topics.DestinationTopicPlan.Step;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.apache.kafka.common.errors.SecurityDisabledException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.Test;

/** The rules of a batched preparation, per topic, from what the two clusters answered. */
class DestinationTopicPlanTest {

    private static final Set<String> EXCLUDED = Set.of("follower.replication.throttled.replicas");

    /** A source topic with 3 partitions, a retention set on it, an excluded and an owned config set on it. */
    private static final Config SOURCE_CONFIG = new Config(List.of(
            entry("retention.ms", "86400000", ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG),
            entry("follower.replication.throttled.replicas", "*", ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG),
            entry("compression.type", "gzip", ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG),
            entry("segment.bytes", "1073741824", ConfigEntry.ConfigSource.DEFAULT_CONFIG),
            entry("max.message.bytes", "2000000", ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG)));

    private static final Map<String, String> OWNED = Map.of(
            "compression.type", "producer",
            "message.timestamp.type", "CreateTime",
            "message.timestamp.after.max.ms", String.valueOf(Long.MAX_VALUE),
            "message.timestamp.before.max.ms", String.valueOf(Long.MAX_VALUE),
            "max.message.bytes", "2000000");

    @Test
    void aTopicMissingOnTheDestinationShouldBeCreatedWithTheSourcesConfigsAndTheOwnedOnes() {
        Step step = plan(false, ok(3), ok(SOURCE_CONFIG), failed(new UnknownTopicOrPartitionException("no")));

        Map<String, String> expected = new HashMap<>(OWNED);
        expected.put("retention.ms", "86400000"); // set on the source, not excluded, not owned
        assertThat(step).isEqualTo(new Create("t", 3, expected, false));
        assertThat(((Create) step).records()).isEqualTo(1 + 3 + 6);
    }

    @Test
    void anExistingDestinationTopicThatMayNotBeAdoptedShouldBeAConflictAndLeftUntouched() {
        Step step = plan(false, ok(3), ok(SOURCE_CONFIG), ok(3));

        assertThat(step).isEqualTo(new Settled(new TopicPreparation.Conflict("t")));
        assertThat(((TopicPreparation.Conflict) ((Settled) step).outcome()).reason())
                .isEqualTo(new DestinationTopics.TopicConflictException("t").getMessage());
    }

    @Test
    void anAdoptableDestinationTopicWithFewerPartitionsShouldGrowAndGetTheOwnedConfigs() {
        Step step = plan(true, ok(3), ok(SOURCE_CONFIG), ok(2));

        assertThat(step).isEqualTo(new Align("t", 3, 2, OWNED));
        assertThat(((Align) step).grows()).isTrue();
        assertThat(((Align) step).newPartitions()).isEqualTo(1);
    }

    @Test
    void anAdoptableDestinationTopicWithAsManyPartitionsShouldOnlyGetTheOwnedConfigs() {
        Step step = plan(true, ok(3), ok(SOURCE_CONFIG), ok(3));

        assertThat(step).isEqualTo(new Align("t", 3, 3, OWNED));
        assertThat(((Align) step).grows()).isFalse();
    }

    @Test
    void aDestinationTopicWithMorePartitionsThanTheSourceShouldBeAMismatch() {
        Step step = plan(true, ok(3), ok(SOURCE_CONFIG), ok(4));

        assertThat(step)
                .isEqualTo(new Settled(
                        new TopicPreparation.Mismatch("t", "destination topic t has 4 partitions, the source only 3")));
    }

    @Test
    void aTopicTheSourceDoesNotKnowShouldBeNotOnSourceWhateverElseFailed() {
        Exception unknown = wrapped(new UnknownTopicOrPartitionException("gone"));

        Step step = plan(true, failed(unknown), failed(unknown), failed(wrapped(new TopicAuthorizationException("x"))));

        assertThat(step).isEqualTo(new Settled(new TopicPreparation.NotOnSource("t")));
    }

    @Test
    void aFailedDescriptionShouldFailOnlyThatTopicWithTheErrorAsIs() {
        Exception denied = wrapped(new TopicAuthorizationException("denied"));

        assertThat(plan(true, failed(denied), ok(SOURCE_CONFIG), ok(3)))
                .isEqualTo(new Settled(new TopicPreparation.Failed("t", denied)));
        assertThat(plan(true, ok(3), failed(denied), ok(3)))
                .isEqualTo(new Settled(new TopicPreparation.Failed("t", denied)));
        assertThat(plan(true, ok(3), ok(SOURCE_CONFIG), failed(denied)))
                .isEqualTo(new Settled(new TopicPreparation.Failed("t", denied)));
    }

    @Test
    void aSourceConfigWithoutMaxMessageBytesShouldFailTheTopicWithAReason() {
        Step step = plan(true, ok(3), ok(new Config(List.of())), ok(3));

        TopicPreparation.Failed failed = (TopicPreparation.Failed) ((Settled) step).outcome();
        assertThat(failed.error()).hasMessage("the source did not report max.message.bytes of topic t");
    }

    @Test
    void aCreationRacedByAnotherCreatorShouldGoOnToTheGuardOnlyWhenTheTopicMayBeAdopted() {
        Exception exists = wrapped(new TopicExistsException("exists"));

        assertThat(DestinationTopicPlan.createFailed(new Create("t", 1, OWNED, true), exists))
                .isEmpty();
        assertThat(DestinationTopicPlan.createFailed(new Create("t", 1, OWNED, false), exists))
                .contains(new TopicPreparation.Conflict("t"));
        Exception refused = wrapped(new PolicyViolationException("no"));
        assertThat(DestinationTopicPlan.createFailed(new Create("t", 1, OWNED, true), refused))
                .contains(new TopicPreparation.Failed("t", refused));
    }

    @Test
    void aDestinationWithoutAnAuthorizerShouldLeaveTheTopicPreparedWithoutAGuard() {
        assertThat(DestinationTopicPlan.guardFailed("t", 3, wrapped(new SecurityDisabledException("off"))))
                .isEqualTo(new TopicPreparation.Prepared("t", 3));
        Exception denied = wrapped(new TopicAuthorizationException("denied"));
        assertThat(DestinationTopicPlan.guardFailed("t", 3, denied))
                .isEqualTo(new TopicPreparation.Failed("t", denied));
    }

    @Test
    void requestsShouldHoldAtMostFiveHundredTopics() {
        List<Integer> topics = IntStream.range(0, 1001).boxed().toList();

        List<List<Integer>> requests = DestinationTopicPlan.requests(topics, t -> 1);

        assertThat(requests).extracting(List::size).containsExactly(500, 500, 1);
        assertThat(requests.stream().flatMap(List::stream).toList()).isEqualTo(topics);
    }

    @Test
    void requestsShouldStayWithinTheControllersRecordLimitAndACostlyTopicGoAlone() {
        // 300 topics of 20 partitions: 22 records each (topic, partitions, one config), 227 fit in 5,000
        List<Create> creates = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            creates.add(new Create("t" + i, 20, Map.of("retention.ms", "1"), false));
        }
        creates.add(1, new Create("huge", 6000, Map.of(), false));

        List<List<Create>> requests = DestinationTopicPlan.requests(creates, Create::records);

        assertThat(requests).extracting(List::size).containsExactly(1, 1, 227, 72);
        assertThat(requests.get(1).get(0).topic()).isEqualTo("huge");
        assertThat(requests)
                .allSatisfy(r -> assertThat(r.size() == 1
                                || r.stream().mapToInt(Create::records).sum()
                                        <= DestinationTopicPlan.MAX_RECORDS_PER_REQUEST)
                        .isTrue());
    }

    @Test
    void aTopicHandedBackShouldGetTheSourcesValuesOfTheOwnedConfigsAndLoseTheOthers() {
        // the source sets compression.type and max.message.bytes on the topic, the three timestamp configs not
        Answer<Optional<Restore>> restore = DestinationTopicPlan.restore("t", ok(3), ok(SOURCE_CONFIG), ok(3));

        assertThat(restore)
                .isEqualTo(ok(Optional.of(new Restore(
                        "t",
                        Map.of("compression.type", "gzip", "max.message.bytes", "2000000"),
                        Set.of(
                                "message.timestamp.type",
                                "message.timestamp.after.max.ms",
                                "message.timestamp.before.max.ms")))));
    }

    @Test
    void aTopicHandedBackThatTheSourceNoLongerHasShouldLoseEveryOwnedConfig() {
        UnknownTopicOrPartitionException unknown = new UnknownTopicOrPartitionException("no");
        Answer<Optional<Restore>> restore = DestinationTopicPlan.restore("t", failed(unknown), failed(unknown), ok(3));

        assertThat(restore.value().orElseThrow().set()).isEmpty();
        assertThat(restore.value().orElseThrow().delete()).isEqualTo(OWNED.keySet());
    }

    @Test
    void aTopicHandedBackThatTheDestinationNoLongerHasShouldNeedNothingWhateverTheSourceSaid() {
        Answer<?> unknown = failed(new UnknownTopicOrPartitionException("no"));
        Answer<?> timedOut = failed(new org.apache.kafka.common.errors.TimeoutException("source gone"));

        assertThat(DestinationTopicPlan.restore("t", timedOut, failed(new TimeoutException()), unknown))
                .isEqualTo(ok(Optional.empty()));
    }

    @Test
    void aTopicHandedBackWhoseSourceOrDestinationCannotBeReadShouldFailWithThatAnswer() {
        Exception sourceGone = wrapped(new org.apache.kafka.common.errors.TimeoutException("source gone"));
        Exception denied = wrapped(new TopicAuthorizationException("no describe"));

        assertThat(DestinationTopicPlan.restore("t", failed(sourceGone), failed(sourceGone), ok(3))
                        .error())
                .isSameAs(sourceGone);
        assertThat(DestinationTopicPlan.restore("t", ok(3), failed(denied), ok(3))
                        .error())
                .isSameAs(denied);
        assertThat(DestinationTopicPlan.restore("t", ok(3), ok(SOURCE_CONFIG), failed(denied))
                        .error())
                .isSameAs(denied);
    }

    private static Step plan(
            boolean mayAdopt, Answer<Integer> sourcePartitions, Answer<Config> config, Answer<Integer> destination) {
        return DestinationTopicPlan.plan("t", mayAdopt, sourcePartitions, config, destination, EXCLUDED);
    }

    private static <T> Answer<T> ok(T value) {
        return new Answer<>(value, null);
    }

    private static <T> Answer<T> failed(Exception error) {
        return new Answer<>(null, error instanceof ExecutionException ? error : wrapped(error));
    }

    /** A per-topic future's failure, as KafkaFuture.get throws it. */
    private static ExecutionException wrapped(Exception kafkaError) {
        return new ExecutionException(kafkaError);
    }

    private static ConfigEntry entry(String name, String value, ConfigEntry.ConfigSource source) {
        return new ConfigEntry(name, value, source, false, false, List.of(), ConfigEntry.ConfigType.STRING, null);
    }
}
