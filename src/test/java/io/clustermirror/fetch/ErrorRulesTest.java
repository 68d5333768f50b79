package io.clustermirror.fetch;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

/** Which partition errors the data plane retries: kafka-clients' rule, and the producer-identity errors by name. */
class ErrorRulesTest {

    @Test
    void anUnknownServerErrorShouldNotBeRetried() {
        assertThat(ErrorRules.retriable(Errors.UNKNOWN_SERVER_ERROR)).isFalse();
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
    }

    @Test
    void refusalsRetryingCannotCureShouldStopThePartition() {
        assertThat(List.of(
                        Errors.NONE,
                        Errors.OFFSET_OUT_OF_RANGE,
                        Errors.TOPIC_AUTHORIZATION_FAILED,
                        Errors.MESSAGE_TOO_LARGE,
                        Errors.INVALID_RECORD,
                        Errors.CORRUPT_MESSAGE,
                        Errors.INVALID_TXN_STATE))
                .noneMatch(ErrorRules::retriable);
    }

    @Test
    void producerIdentityErrorsShouldAskForANewIdentityAndOthersShouldNot() {
        assertThat(List.of(
                        Errors.OUT_OF_ORDER_SEQUENCE_NUMBER,
                        Errors.UNKNOWN_PRODUCER_ID,
                        Errors.INVALID_PRODUCER_EPOCH,
                        Errors.PRODUCER_FENCED,
                        Errors.DUPLICATE_SEQUENCE_NUMBER))
                .allMatch(ErrorRules::needsNewIdentity);
        assertThat(ErrorRules.needsNewIdentity(Errors.NOT_LEADER_OR_FOLLOWER)).isFalse();
    }
}
