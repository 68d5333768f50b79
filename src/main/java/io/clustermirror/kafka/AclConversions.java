package io.clustermirror.kafka;

import io.clustermirror.mirror.AclEntry;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;

/** Between Kafka's ACL bindings and the plain {@link AclEntry} values the plans work on. */
public final class AclConversions {

    private AclConversions() {}

    public static AclEntry entry(AclBinding binding) {
        ResourcePattern pattern = binding.pattern();
        AccessControlEntry ace = binding.entry();
        return new AclEntry(
                pattern.resourceType().name(),
                pattern.patternType().name(),
                pattern.name(),
                ace.principal(),
                ace.host(),
                ace.operation().name(),
                ace.permissionType().name());
    }

    public static AclBinding binding(AclEntry entry) {
        return new AclBinding(
                new ResourcePattern(
                        ResourceType.valueOf(entry.resourceType()),
                        entry.resourceName(),
                        PatternType.valueOf(entry.patternType())),
                new AccessControlEntry(
                        entry.principal(),
                        entry.host(),
                        AclOperation.valueOf(entry.operation()),
                        AclPermissionType.valueOf(entry.permission())));
    }

    /** A filter that matches exactly this binding. */
    public static AclBindingFilter exactly(AclEntry entry) {
        return new AclBindingFilter(
                new ResourcePatternFilter(
                        ResourceType.valueOf(entry.resourceType()),
                        entry.resourceName(),
                        PatternType.valueOf(entry.patternType())),
                new AccessControlEntryFilter(
                        entry.principal(),
                        entry.host(),
                        AclOperation.valueOf(entry.operation()),
                        AclPermissionType.valueOf(entry.permission())));
    }
}
