package io.clustermirror.truncation;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.errors.LeaderNotAvailableException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.Test;

class NotServedYetTest {

    @Test
    void aPartitionTheBrokerDoesNotKnowOrLeadYetIsNotServedYetWhereverTheErrorIsWrapped() {
        assertThat(NotServedYet.is(new UnknownTopicOrPartitionException("unknown")))
                .isTrue();
        assertThat(NotServedYet.is(new ExecutionException(new LeaderNotAvailableException("no leader"))))
                .isTrue();
        assertThat(NotServedYet.is(
                        new CompletionException(new IllegalStateException(new NotLeaderOrFollowerException("moved")))))
                .isTrue();
    }

    @Test
    void otherFailuresAreNot() {
        assertThat(NotServedYet.is(new TimeoutException("no answer"))).isFalse();
        assertThat(NotServedYet.is(new IllegalStateException("the source answers with cluster id x, not y")))
                .isFalse();
        assertThat(NotServedYet.is(null)).isFalse();
    }

    @Test
    void itIsAskedAgainSoonAtFirstThenLessOften() {
        assertThat(NotServedYet.delayMs(0)).isEqualTo(250);
        assertThat(NotServedYet.delayMs(4_000)).isEqualTo(1_000);
        assertThat(NotServedYet.delayMs(100_000)).isEqualTo(5_000);
    }
}
