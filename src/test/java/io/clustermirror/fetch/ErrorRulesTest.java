package io.clustermirror.fetch;

import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.fetch.ErrorRules.Verdict;
import java.util.List;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

/** Which partition errors the data plane retries: kafka-clients' rule, and the producer-state errors by name. */
class ErrorRulesTest {

    @Test
    void anUnknownServerErrorShouldNotBeRetried() {
        assertThat(ErrorRules.retriable(Errors.UNKNOWN_SERVER_ERROR)).isFalse();
        assertThat(ErrorRules.verdict(Errors.UNKNOWN_SERVER_ERROR, false)).isEqualTo(Verdict.FAIL);
    }

    @Test
    void staleMetadataAndTransientBrokerErrorsShouldBeRetriedAfterAMetadataRefresh() {
        List<Errors> transientErrors = List.of(
                Errors.NOT_LEADER_OR_FOLLOWER,
                Errors.FENCED_LEADER_EPOCH,
                Errors.UNKNOWN_LEADER_EPOCH,
                Errors.LEADER_NOT_AVAILABLE,
                Errors.UNKNOWN_TOPIC_ID,
                Errors.UNKNOWN_TOPIC_OR_PARTITION,
                Errors.KAFKA_STORAGE_ERROR,
                Errors.REPLICA_NOT_AVAILABLE,
                Errors.OFFSET_NOT_AVAILABLE,
                Errors.NOT_ENOUGH_REPLICAS,
                Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
                Errors.REQUEST_TIMED_OUT,
                Errors.NETWORK_EXCEPTION,
                Errors.INCONSISTENT_TOPIC_ID,
                Errors.COORDINATOR_LOAD_IN_PROGRESS,
                Errors.CONCURRENT_TRANSACTIONS,
                Errors.COORDINATOR_NOT_AVAILABLE,
                Errors.NOT_COORDINATOR);

        assertThat(transientErrors).allMatch(ErrorRules::retriable);
        assertThat(transientErrors).allMatch(error -> ErrorRules.verdict(error, false) == Verdict.RETRY);
        assertThat(ErrorRules.staleMetadata(Errors.NOT_LEADER_OR_FOLLOWER)).isTrue();
        assertThat(ErrorRules.staleMetadata(Errors.NOT_ENOUGH_REPLICAS)).isFalse();
    }

    @Test
    void refusalsRetryingCannotCureShouldStopThePartition() {
        List<Errors> refusals = List.of(
                Errors.OFFSET_OUT_OF_RANGE,
                Errors.TOPIC_AUTHORIZATION_FAILED,
                Errors.MESSAGE_TOO_LARGE,
                Errors.INVALID_RECORD,
                Errors.CORRUPT_MESSAGE,
                Errors.INVALID_TXN_STATE);
        assertThat(refusals).noneMatch(ErrorRules::retriable);
        assertThat(ErrorRules.retriable(Errors.NONE)).isFalse();
        assertThat(refusals).allMatch(error -> ErrorRules.verdict(error, true) == Verdict.FAIL);
    }

    @Test
    void anAnswerWithoutErrorShouldBeAnAppend() {
        assertThat(ErrorRules.verdict(Errors.NONE, true)).isEqualTo(Verdict.APPENDED);
    }

    @Test
    void outOfOrderBehindAnUnsettledBatchShouldBeRetriedInOrderAndOtherwiseReset() {
        // an earlier batch has not landed yet: this one could not follow it, both go again
        assertThat(ErrorRules.verdict(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, true))
                .isEqualTo(Verdict.RETRY);
        // everything before it acknowledged: the destination lacks what it acknowledged, or the producer state
        assertThat(ErrorRules.verdict(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, false))
                .isEqualTo(Verdict.RESET);
        assertThat(ErrorRules.fenced(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER)).isFalse();
    }

    @Test
    void lostOrFencedProducerStateShouldResetAndANewerEpochShouldBeAFence() {
        List<Errors> lost = List.of(Errors.UNKNOWN_PRODUCER_ID, Errors.INVALID_PRODUCER_EPOCH, Errors.PRODUCER_FENCED);
        assertThat(lost).allMatch(error -> ErrorRules.verdict(error, true) == Verdict.RESET);
        // a newer epoch of the partition's own producer id: another instance took the mirror over (AppendLoop stops)
        assertThat(List.of(Errors.INVALID_PRODUCER_EPOCH, Errors.PRODUCER_FENCED))
                .allMatch(ErrorRules::fenced);
        assertThat(ErrorRules.fenced(Errors.UNKNOWN_PRODUCER_ID)).isFalse();
        assertThat(ErrorRules.fenced(Errors.NOT_LEADER_OR_FOLLOWER)).isFalse();
    }

    @Test
    void aDuplicateWithoutItsOffsetShouldBeReadBackByTheReset() {
        assertThat(ErrorRules.verdict(Errors.DUPLICATE_SEQUENCE_NUMBER, false)).isEqualTo(Verdict.RESET);
        assertThat(ErrorRules.fenced(Errors.DUPLICATE_SEQUENCE_NUMBER)).isFalse();
    }
}
