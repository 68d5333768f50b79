package io.clustermirror.sync;

import static io.clustermirror.sync.Fixtures.await;
import static io.clustermirror.sync.Fixtures.mirror;
import static org.assertj.core.api.Assertions.assertThat;

import io.clustermirror.mirror.AclEntry;
import io.clustermirror.mirror.MirrorConfig;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class AclStepTest {

    private static final AclEntry ALICE_READS_T =
            new AclEntry("TOPIC", "LITERAL", "t", "User:alice", "*", "READ", "ALLOW");
    private static final AclEntry BOB_READS_T = new AclEntry("TOPIC", "LITERAL", "t", "User:bob", "*", "READ", "ALLOW");
    private static final AclEntry CAROL_READS_T =
            new AclEntry("TOPIC", "LITERAL", "t", "User:carol", "*", "READ", "ALLOW");

    private final Fixtures fixtures = new Fixtures();
    private final FakeCluster source = new FakeCluster();
    private final FakeCluster destination = new FakeCluster();
    private final AclStep step = new AclStep(fixtures.metrics);
    private final Ledger ledger = new Ledger();

    /** The state topic's record of what the mirror created, with every write kept in order. */
    private static final class Ledger implements AclStep.Ledger {
        Set<AclEntry> created = new TreeSet<>();
        final List<Set<AclEntry>> records = new ArrayList<>();

        @Override
        public Set<AclEntry> created() {
            return created;
        }

        @Override
        public Uni<Void> record(Set<AclEntry> acls) {
            created = new TreeSet<>(acls);
            records.add(created);
            return Uni.createFrom().voidItem();
        }
    }

    /** One step of a mirror that copies the ACLs {@code include} matches and holds topic t. */
    private Uni<Void> syncOfT(String include) {
        return step.sync(
                mirror(MirrorConfig.ACL_INCLUDE, include),
                () -> Set.of("t"),
                source,
                destination,
                ledger,
                fixtures.log);
    }

    @Test
    void everyMirroredTopicShouldGetItsReadOnlyGuardOnce() {
        destination.acls.add(AclEntry.readOnly("u"));

        await(step.sync(mirror(), () -> Set.of("t", "u"), source, destination, ledger, fixtures.log));
        await(step.sync(mirror(), () -> Set.of("t", "u"), source, destination, ledger, fixtures.log));

        assertThat(destination.writes).containsExactly("create ACLs [DENY WRITE TOPIC t for User:*]");
        assertThat(fixtures.report().acls()).isEqualTo("read-only enforced; 0 ACL(s) created by this mirror");
    }

    @Test
    void aGuardPutBackWhileItsTopicStoppedShouldBeDeletedAgain() {
        // t is held when the guards are planned; its stop (persisted STOPPING, then the guard lifted) lands before the
        // creation answers, so nothing else would lift the guard this step put back
        Iterator<Set<String>> held = List.of(Set.of("t", "u"), Set.of("u")).iterator();

        await(step.sync(mirror(), held::next, source, destination, ledger, fixtures.log));

        assertThat(destination.writes)
                .containsExactly(
                        "create ACLs [DENY WRITE TOPIC t for User:*, DENY WRITE TOPIC u for User:*]",
                        "delete ACLs [DENY WRITE TOPIC t for User:*]");
        assertThat(destination.acls).contains(AclEntry.readOnly("u")).doesNotContain(AclEntry.readOnly("t"));
    }

    @Test
    void matchingSourceAclsShouldBeCopiedAfterTheLedgerHoldsThemAndOnlyTheMirrorsOwnDeleted() {
        source.acls.addAll(Set.of(ALICE_READS_T, BOB_READS_T));
        destination.acls.addAll(Set.of(AclEntry.readOnly("t"), CAROL_READS_T));
        String include = "TOPIC;t;READ;ALLOW;*";

        await(syncOfT(include));

        assertThat(destination.writes)
                .containsExactly("create ACLs [ALLOW READ TOPIC t for User:alice, ALLOW READ TOPIC t for User:bob]");
        assertThat(ledger.records.get(0))
                .containsExactlyInAnyOrder(ALICE_READS_T, BOB_READS_T); // recorded before they were created
        assertThat(fixtures.report().acls()).isEqualTo("read-only enforced; 2 ACL(s) created by this mirror");

        source.acls.remove(BOB_READS_T);
        await(syncOfT(include));

        assertThat(destination.writes).last().isEqualTo("delete ACLs [ALLOW READ TOPIC t for User:bob]");
        assertThat(destination.acls).contains(CAROL_READS_T, AclEntry.readOnly("t")); // never the mirror's to delete
        assertThat(ledger.created).containsExactly(ALICE_READS_T);
    }

    @Test
    void anAclTheDestinationRefusesShouldBeCountedAndNotKeepTheMirrorsStaleCopiesFromBeingDeleted() {
        String include = "TOPIC;t;READ;ALLOW;*";
        source.acls.add(BOB_READS_T);
        destination.acls.add(AclEntry.readOnly("t"));
        await(syncOfT(include));
        assertThat(destination.acls).contains(BOB_READS_T);

        // the source drops bob's ACL and gains alice's, which the destination refuses
        source.acls.remove(BOB_READS_T);
        source.acls.add(ALICE_READS_T);
        destination.refusedAcls.add(ALICE_READS_T);
        await(syncOfT(include));

        assertThat(destination.writes)
                .endsWith(
                        "create ACLs [ALLOW READ TOPIC t for User:alice]",
                        "delete ACLs [ALLOW READ TOPIC t for User:bob]");
        assertThat(destination.acls).doesNotContain(BOB_READS_T, ALICE_READS_T);
        assertThat(ledger.created)
                .as("alice's stays recorded, to be created again")
                .containsExactly(ALICE_READS_T);
        assertThat(fixtures.errors("AclSyncError")).isEqualTo(1);
    }

    @Test
    void aDestinationWithoutAuthorizerShouldBeReportedOnceNotAsAnErrorEveryCycle() {
        destination.noAuthorizer = true;

        await(step.sync(mirror(), () -> Set.of("t"), source, destination, ledger, fixtures.log));
        await(step.sync(mirror(), () -> Set.of("t"), source, destination, ledger, fixtures.log));

        assertThat(fixtures.report().acls())
                .isEqualTo("destination has no authorizer: ACL sync and read-only enforcement inactive");
        assertThat(fixtures.report().errors()).isEmpty();
        assertThat(fixtures.errors("AclSyncError")).isEqualTo(1);
    }

    @Test
    void aSourceWithoutAuthorizerShouldStillLeaveTheGuardsInPlace() {
        source.noAuthorizer = true;

        await(step.sync(
                mirror(MirrorConfig.ACL_INCLUDE, "TOPIC;.*;*;*;*"),
                () -> Set.of("t"),
                source,
                destination,
                ledger,
                fixtures.log));

        assertThat(destination.writes).containsExactly("create ACLs [DENY WRITE TOPIC t for User:*]");
        assertThat(fixtures.report().errors()).isEmpty();
        // mirror.acl.include asks for ACLs the source cannot have: shown, and counted once
        await(step.sync(
                mirror(MirrorConfig.ACL_INCLUDE, "TOPIC;.*;*;*;*"),
                () -> Set.of("t"),
                source,
                destination,
                ledger,
                fixtures.log));
        assertThat(fixtures.report().acls())
                .isEqualTo("read-only enforced; 0 ACL(s) created by this mirror; the source has no authorizer: no ACLs"
                        + " to copy (mirror.acl.include is set)");
        assertThat(fixtures.errors("AclSyncError")).isEqualTo(1);
    }
}
