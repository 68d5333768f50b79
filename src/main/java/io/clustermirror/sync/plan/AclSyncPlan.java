package io.clustermirror.sync.plan;

import io.clustermirror.mirror.AclEntry;
import io.clustermirror.mirror.AclRule;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * ACLs to create on and delete from the destination: the source's ACLs that match {@code mirror.acl.include}
 * and are missing there are created; ACLs this mirror created earlier that the source no longer has (or that
 * no longer match) are deleted. ACLs the mirror did not create, and its read-only guards, are never touched.
 *
 * @param created what the mirror will have created after applying the plan (to persist)
 */
public record AclSyncPlan(Set<AclEntry> create, Set<AclEntry> delete, Set<AclEntry> created) {

    public AclSyncPlan {
        create = Set.copyOf(new TreeSet<>(create));
        delete = Set.copyOf(new TreeSet<>(delete));
        created = Set.copyOf(new TreeSet<>(created));
    }

    public static AclSyncPlan plan(
            Collection<AclEntry> source,
            Collection<AclEntry> destination,
            Collection<AclEntry> createdBefore,
            List<AclRule> rules) {
        Set<AclEntry> wanted = new TreeSet<>();
        source.stream()
                .filter(acl -> rules.stream().anyMatch(rule -> rule.matches(acl)))
                .filter(acl -> !isReadOnlyGuard(acl))
                .forEach(wanted::add);
        Set<AclEntry> create = new TreeSet<>(wanted);
        create.removeAll(destination);
        Set<AclEntry> delete = new TreeSet<>(createdBefore);
        delete.removeAll(wanted);
        delete.retainAll(destination);
        Set<AclEntry> created = new TreeSet<>(createdBefore);
        created.removeAll(delete);
        created.retainAll(wanted);
        created.addAll(create);
        return new AclSyncPlan(create, delete, created);
    }

    private static boolean isReadOnlyGuard(AclEntry acl) {
        return acl.equals(AclEntry.readOnly(acl.resourceName()));
    }

    public boolean isEmpty() {
        return create.isEmpty() && delete.isEmpty();
    }
}
