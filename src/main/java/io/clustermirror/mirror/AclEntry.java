package io.clustermirror.mirror;

import java.util.Comparator;

/**
 * One ACL binding as plain values (resource type and pattern type, resource name, principal, host, operation,
 * permission), so that ACL plans stay pure and can be persisted as they are.
 */
public record AclEntry(
        String resourceType,
        String patternType,
        String resourceName,
        String principal,
        String host,
        String operation,
        String permission)
        implements Comparable<AclEntry> {

    private static final Comparator<AclEntry> ORDER = Comparator.comparing(AclEntry::resourceType)
            .thenComparing(AclEntry::resourceName)
            .thenComparing(AclEntry::principal)
            .thenComparing(AclEntry::operation)
            .thenComparing(AclEntry::permission)
            .thenComparing(AclEntry::patternType)
            .thenComparing(AclEntry::host);

    /** The read-only guard of a mirrored topic: nobody but the service (a super user) may write to it. */
    public static AclEntry readOnly(String topic) {
        return new AclEntry("TOPIC", "LITERAL", topic, "User:*", "*", "WRITE", "DENY");
    }

    @Override
    public int compareTo(AclEntry other) {
        return ORDER.compare(this, other);
    }
}
