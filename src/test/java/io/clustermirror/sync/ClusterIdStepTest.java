package io.clustermirror.sync;

import static io.clustermirror.sync.Fixtures.await;
import static io.clustermirror.sync.Fixtures.mirror;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class ClusterIdStepTest {

    private final FakeCluster source = new FakeCluster();

    @Test
    void theMirrorsClusterShouldAskForNothing() {
        assertThat(await(ClusterIdStep.check(mirror(), false, source))).isEmpty();
    }

    @Test
    void anotherClusterBehindTheSameAddressShouldHaltTheMirror() {
        source.clusterId = "cluster-b";

        assertThat(await(ClusterIdStep.check(mirror(), false, source))).contains(new SyncAction.Halt("cluster-b"));
        assertThat(await(ClusterIdStep.check(mirror(), true, source))).contains(new SyncAction.Halt("cluster-b"));
    }

    @Test
    void theRightClusterAgainShouldUnhaltAHaltedMirror() {
        assertThat(await(ClusterIdStep.check(mirror(), true, source))).isEqualTo(Optional.of(new SyncAction.Unhalt()));
    }
}
