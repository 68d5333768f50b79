package io.clustermirror.mirror;

import static io.clustermirror.mirror.ClusterMirrorOperation.ALTER;
import static io.clustermirror.mirror.ClusterMirrorOperation.CREATE;
import static io.clustermirror.mirror.ClusterMirrorOperation.DELETE;
import static io.clustermirror.mirror.ClusterMirrorOperation.DESCRIBE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.re2j.Pattern;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class MirrorAccessPolicyTest {

    private static MirrorAccessPolicy.Caller caller(String principal, String... roles) {
        return new MirrorAccessPolicy.Caller(principal, Set.of(roles));
    }

    @Test
    void rolesShouldGiveTheirOperationsOnEveryMirror() {
        MirrorAccessPolicy policy = new MirrorAccessPolicy(List.of());

        assertThat(policy.operations(caller("v", MirrorAccessPolicy.VIEWER), "any"))
                .containsExactly(DESCRIBE);
        assertThat(policy.operations(caller("o", MirrorAccessPolicy.OPERATOR), "any"))
                .containsExactly(DESCRIBE, ALTER);
        assertThat(policy.operations(caller("a", MirrorAccessPolicy.ADMIN), "any"))
                .containsExactly(CREATE, DESCRIBE, ALTER, DELETE);
        assertThat(policy.operations(caller("nobody", "payments"), "any")).isEmpty();
    }

    @Test
    void grantsShouldApplyToTheirPrincipalsOrRolesOnMatchingMirrorsOnly() {
        MirrorAccessPolicy policy = new MirrorAccessPolicy(List.of(
                new MirrorAccessPolicy.Grant(
                        Set.of("carol"), Set.of(), Set.of(DESCRIBE, ALTER), Pattern.compile("payments-.*")),
                new MirrorAccessPolicy.Grant(
                        Set.of(), Set.of("team-b"), Set.of(CREATE, DELETE), Pattern.compile("b-.*"))));

        assertThat(policy.operations(caller("carol"), "payments-east")).containsExactly(DESCRIBE, ALTER);
        assertThat(policy.operations(caller("carol"), "orders-east")).isEmpty();
        assertThat(policy.operations(caller("carol"), "xpayments-east"))
                .as("the whole name")
                .isEmpty();
        assertThat(policy.operations(caller("dave", "team-b", MirrorAccessPolicy.VIEWER), "b-1"))
                .containsExactly(CREATE, DESCRIBE, DELETE);
        assertThat(policy.allows(caller("dave", "team-b"), ALTER, "b-1")).isFalse();
    }

    @Test
    void onlyTheAdminRoleShouldReachTheServiceSettingsWhateverItIsGranted() {
        MirrorAccessPolicy policy = new MirrorAccessPolicy(List.of(new MirrorAccessPolicy.Grant(
                Set.of("carol"), Set.of(), Set.of(CREATE, DESCRIBE, ALTER, DELETE), Pattern.compile(".*"))));

        assertThat(policy.allowsServiceWide(caller("a", MirrorAccessPolicy.ADMIN)))
                .isTrue();
        assertThat(policy.allowsServiceWide(caller("o", MirrorAccessPolicy.OPERATOR)))
                .isFalse();
        assertThat(policy.allowsServiceWide(caller("v", MirrorAccessPolicy.VIEWER)))
                .isFalse();
        assertThat(policy.allowsServiceWide(caller("carol")))
                .as("every operation on every mirror, by a grant")
                .isFalse();
    }

    @Test
    void aGrantShouldNameSomeone() {
        assertThatThrownBy(
                        () -> new MirrorAccessPolicy.Grant(Set.of(), Set.of(), Set.of(DESCRIBE), Pattern.compile(".*")))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
