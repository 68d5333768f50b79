package org.apache.kafka.clients.admin;

import java.util.Collection;
import java.util.Map;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;

/** Admin results whose constructors kafka-clients keeps to its package, for fakes of {@link Admin} in unit tests. */
public final class AdminResults {

    private AdminResults() {}

    public static DescribeAclsResult describeAcls(KafkaFuture<Collection<AclBinding>> bindings) {
        return new DescribeAclsResult(bindings);
    }

    public static DeleteAclsResult deleteAcls(
            Map<AclBindingFilter, KafkaFuture<DeleteAclsResult.FilterResults>> results) {
        return new DeleteAclsResult(results);
    }
}
