package io.clustermirror.mirror;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.Test;

class FailuresTest {

    @Test
    void aFailureIsCausedByAKindWhereverThatKindIsInItsChain() {
        Exception wrapped = new CompletionException(new ExecutionException(new UnknownTopicOrPartitionException("x")));

        assertThat(Failures.causedBy(wrapped, UnknownTopicOrPartitionException.class))
                .isTrue();
        assertThat(Failures.causedBy(wrapped, TimeoutException.class, UnknownTopicOrPartitionException.class))
                .isTrue();
        assertThat(Failures.causedBy(wrapped, TimeoutException.class)).isFalse();
        assertThat(Failures.causedBy(null, TimeoutException.class)).isFalse();
    }
}
