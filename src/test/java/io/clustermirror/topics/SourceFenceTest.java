package io.clustermirror.topics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.AdminResults;
import org.apache.kafka.clients.admin.DeleteAclsOptions;
import org.apache.kafka.clients.admin.DeleteAclsResult;
import org.apache.kafka.clients.admin.DescribeAclsOptions;
import org.apache.kafka.clients.admin.DescribeAclsResult;
import org.apache.kafka.clients.admin.MockAdminClient;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.SecurityDisabledException;
import org.junit.jupiter.api.Test;

/**
 * Lifting a promote's fence: a source that will not let this mirror change its ACLs any more must not be taken for one
 * without the fence, or the promotion is forgotten while its DENY WRITE stays on the source for every producer.
 */
class SourceFenceTest {

    @Test
    void aLiftRefusedWhileTheFenceIsThereShouldFailSoThatThePromotionIsKeptAndTriedAgain() {
        // the mirror's source credentials lost ALTER after the promote fenced "orders"
        RefusingSource source = new RefusingSource(new ClusterAuthorizationException("no ALTER on the cluster"));
        source.bindings.add(SourceFence.binding("orders"));

        assertThatThrownBy(() -> new SourceFence(source, 1000).lift(List.of("orders")))
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(ClusterAuthorizationException.class);
    }

    @Test
    void aLiftRefusedWithoutAnyOfTheFencesThereShouldHaveNothingToLift() throws Exception {
        // a promote refused before it fenced (no ALTER): its rollback lifts nothing, and forgets the promotion
        RefusingSource source = new RefusingSource(new ClusterAuthorizationException("no ALTER on the cluster"));
        source.bindings.add(SourceFence.binding("another-topic"));

        new SourceFence(source, 1000).lift(List.of("orders"));

        assertThat(source.deletes).isEqualTo(1);
    }

    @Test
    void aSourceWithoutAnAuthorizerHoldsNoFence() throws Exception {
        RefusingSource source = new RefusingSource(new SecurityDisabledException("no authorizer"));

        new SourceFence(source, 1000).lift(List.of("orders"));

        assertThat(source.deletes).isEqualTo(1);
    }

    /** A source whose ACL deletes fail with {@code refusal}; its ACLs can be described. */
    private static final class RefusingSource extends MockAdminClient {
        final java.util.List<AclBinding> bindings = new java.util.ArrayList<>();
        final RuntimeException refusal;
        int deletes;

        RefusingSource(RuntimeException refusal) {
            this.refusal = refusal;
        }

        @Override
        public synchronized DeleteAclsResult deleteAcls(
                Collection<AclBindingFilter> filters, DeleteAclsOptions options) {
            deletes++;
            Map<AclBindingFilter, KafkaFuture<DeleteAclsResult.FilterResults>> results = new HashMap<>();
            filters.forEach(f -> {
                org.apache.kafka.common.internals.KafkaFutureImpl<DeleteAclsResult.FilterResults> failed =
                        new org.apache.kafka.common.internals.KafkaFutureImpl<>();
                failed.completeExceptionally(refusal);
                results.put(f, failed);
            });
            return AdminResults.deleteAcls(results);
        }

        @Override
        public synchronized DescribeAclsResult describeAcls(AclBindingFilter filter, DescribeAclsOptions options) {
            return AdminResults.describeAcls(KafkaFuture.<Collection<AclBinding>>completedFuture(
                    bindings.stream().filter(filter::matches).toList()));
        }
    }
}
