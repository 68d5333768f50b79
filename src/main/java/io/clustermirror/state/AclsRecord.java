package io.clustermirror.state;

import io.clustermirror.mirror.AclEntry;
import java.util.List;

/** Value of a mirror's {@code acls} record: the ACLs the mirror created on the destination (so it deletes only those). */
public record AclsRecord(int v, List<AclEntry> acls) {

    public AclsRecord {
        acls = List.copyOf(acls);
    }
}
