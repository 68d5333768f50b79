package io.clustermirror.topics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.SecurityDisabledException;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * Lifting a promote's fence when the source refuses the delete (pure: the refusal and whether a fence is still there
 * are handed in). A source that will not let this mirror change its ACLs any more must not be taken for one without
 * the fence, or the promotion is forgotten while its DENY WRITE stays on the source for every producer.
 */
class SourceFenceTest {

    @Test
    void aLiftRefusedForAuthorizationWhileAFenceIsThereShouldNotCountAsLifted() throws Exception {
        // the mirror's source credentials lost ALTER after the promote fenced the topic
        assertThat(SourceFence.nothingToLift(new ClusterAuthorizationException("no ALTER"), () -> true))
                .isFalse();
    }

    @Test
    void aLiftRefusedForAuthorizationWithNoFenceThereShouldHaveNothingToLift() throws Exception {
        // a promote refused before it fenced (no ALTER): its rollback lifts nothing, and forgets the promotion
        assertThat(SourceFence.nothingToLift(new ClusterAuthorizationException("no ALTER"), () -> false))
                .isTrue();
    }

    @Test
    void aSourceWithoutAnAuthorizerHoldsNoFenceAndIsNotAskedWhetherItDoes() throws Exception {
        AtomicInteger asked = new AtomicInteger();

        assertThat(SourceFence.nothingToLift(new SecurityDisabledException("no authorizer"), () -> {
                    asked.incrementAndGet();
                    return true;
                }))
                .isTrue();
        assertThat(asked).hasValue(0);
    }

    @Test
    void anyOtherRefusalShouldBeTriedAgain() throws Exception {
        assertThat(SourceFence.nothingToLift(new TimeoutException("no answer"), () -> false))
                .isFalse();
    }
}
