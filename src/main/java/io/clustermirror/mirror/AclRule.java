package io.clustermirror.mirror;

import com.google.re2j.Pattern;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * One rule of {@code mirror.acl.include}: {@code resourceType;resourceName-regex;operation;permissionType;principal},
 * where {@code *} in any position but the regex matches anything.
 */
public record AclRule(
        String resourceType, Pattern resourceName, String operation, String permissionType, String principal) {

    static final Set<String> RESOURCE_TYPES =
            Set.of("TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER");
    static final Set<String> OPERATIONS = Set.of(
            "ALL",
            "READ",
            "WRITE",
            "CREATE",
            "DELETE",
            "ALTER",
            "DESCRIBE",
            "CLUSTER_ACTION",
            "DESCRIBE_CONFIGS",
            "ALTER_CONFIGS",
            "IDEMPOTENT_WRITE",
            "CREATE_TOKENS",
            "DESCRIBE_TOKENS",
            "TWO_PHASE_COMMIT");
    static final Set<String> PERMISSION_TYPES = Set.of("ALLOW", "DENY");
    public static final String ANY = "*";

    /** Whether the ACL falls under this rule. */
    public boolean matches(AclEntry acl) {
        return (resourceType.equals(ANY) || resourceType.equals(acl.resourceType()))
                && resourceName.matcher(acl.resourceName()).matches()
                && (operation.equals(ANY) || operation.equals(acl.operation()))
                && (permissionType.equals(ANY) || permissionType.equals(acl.permission()))
                && (principal.equals(ANY) || principal.equals(acl.principal()));
    }

    /** Parses one rule; throws {@link IllegalArgumentException} with a reason an operator can act on. */
    public static AclRule parse(String rule) {
        List<String> parts = List.of(rule.trim().split(";", -1));
        if (parts.size() != 5) {
            throw new IllegalArgumentException("ACL rule '" + rule
                    + "' must have 5 parts: resourceType;resourceName-regex;operation;permissionType;principal");
        }
        String resourceType = oneOf(parts.get(0), RESOURCE_TYPES, "resource type", rule);
        Pattern resourceName;
        try {
            resourceName = RegexList.compile(List.of(parts.get(1).trim())).get(0);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("ACL rule '" + RegexList.abbreviate(rule)
                    + "' has an invalid resource name regex: " + e.getMessage());
        }
        String operation = oneOf(parts.get(2), OPERATIONS, "operation", rule);
        String permissionType = oneOf(parts.get(3), PERMISSION_TYPES, "permission type", rule);
        String principal = parts.get(4).trim();
        if (!principal.equals(ANY) && !principal.matches("[^:]+:.+")) {
            throw new IllegalArgumentException("ACL rule '" + RegexList.abbreviate(rule) + "' has principal '"
                    + RegexList.abbreviate(principal) + "'; expected '*' or 'Type:name' (e.g. User:alice)");
        }
        return new AclRule(resourceType, resourceName, operation, permissionType, principal);
    }

    private static String oneOf(String raw, Set<String> allowed, String what, String rule) {
        String value = raw.trim().toUpperCase(Locale.ROOT);
        if (!value.equals(ANY) && !allowed.contains(value)) {
            throw new IllegalArgumentException("ACL rule '" + RegexList.abbreviate(rule) + "' has unknown " + what
                    + " '" + RegexList.abbreviate(raw.trim()) + "'; expected '*' or one of "
                    + allowed.stream().sorted().toList());
        }
        return value;
    }
}
