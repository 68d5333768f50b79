package io.clustermirror.fetch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.clustermirror.kafka.WireNetwork;
import io.clustermirror.mirror.MirrorPartition;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.kafka.clients.ClientRequest;
import org.apache.kafka.clients.MockClient;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.Test;

/**
 * The coordinator's add and remove are commands the fetcher runs at the start of its next turn, in the order they were
 * posted: a partition is Entering until then, is fetched in that turn, and none is ever left Entering once its data
 * plane ended. The test runs the fetcher's turns itself, on its own thread, over kafka-clients' {@link MockClient}.
 */
class DataPlaneCommandsTest {

    private static final MirrorPartition PARTITION = DataPlaneLivenessTest.PARTITION;

    private final MockClient sourceNetwork = new MockClient(Time.SYSTEM);
    /** The fetcher's turns, each run when the test says. */
    private final Queue<Runnable> turns = new ArrayDeque<>();

    private final DataPlaneLivenessTest.RecordingListener listener = new DataPlaneLivenessTest.RecordingListener();
    private final MirrorFetcher dataPlane = start();

    @Test
    void anAddedPartitionShouldBeEnteringUntilTheFetchersNextTurnAndFetchedInIt() {
        turn(); // the data plane is attached and has gone round once

        dataPlane.add(PARTITION, 0, -1, -1);

        assertThat(dataPlane.phase(PARTITION)).containsInstanceOf(FetchPartition.Entering.class);
        assertThat(fetched()).isEmpty();
        turn();
        assertThat(dataPlane.phase(PARTITION)).containsInstanceOf(FetchPartition.Fetching.class);
        assertThat(fetched()).containsExactly(new TopicPartition("orders", 0));
    }

    @Test
    void aRemovalPostedRightAfterTheAddShouldFindThePartitionTakenUpAndLetItGo() {
        // Given a partition added, not taken up yet
        dataPlane.add(PARTITION, 0, -1, -1);

        // When it is removed before the fetcher turns
        CompletableFuture<DataPlane.Progress> removed = dataPlane.remove(PARTITION, false);

        // Then one turn takes it up and lets it go: nothing of it was fetched
        turn();
        assertThat(removed).isCompletedWithValueMatching(progress -> progress.destinationEnd() == 0);
        assertThat(dataPlane.phase(PARTITION)).isEmpty();
        assertThat(fetched()).isEmpty();
        // and it may enter again
        dataPlane.add(PARTITION, 0, -1, -1);
        turn();
        assertThat(dataPlane.phase(PARTITION)).containsInstanceOf(FetchPartition.Fetching.class);
    }

    @Test
    void aPartitionAddedJustBeforeTheDataPlaneDiedShouldFailAndNeverBeTakenUp() {
        // Given a partition added, not taken up yet
        turn();
        dataPlane.add(PARTITION, 0, -1, -1);

        // When the data plane is found dead before the fetcher turns again
        listener.failures.clear();
        dataPlaneDies();

        // Then the partition failed with the reason and is gone, and the add command takes nothing up
        assertThat(listener.failures.get(PARTITION)).contains("the data plane's fetcher thread died");
        assertThat(dataPlane.whenGone(PARTITION)).isDone();
        turn();
        assertThat(dataPlane.phase(PARTITION)).isEmpty();
        assertThat(fetched()).isEmpty();
        assertThatThrownBy(() -> dataPlane.add(PARTITION, 0, -1, -1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("takes no more partitions");
    }

    @Test
    void aPartitionStillEnteringWhenTheDataPlaneLeavesItsFetcherShouldBeLetGo() {
        // Given a partition added, not taken up yet
        turn();
        dataPlane.add(PARTITION, 0, -1, -1);

        // When the data plane leaves its fetcher before the fetcher turns (closed, or the fetcher stopped)
        dataPlane.detached();

        // Then whoever waits for the partition hears it, and no partition is taken any more
        assertThat(dataPlane.whenGone(PARTITION)).isDone();
        assertThat(dataPlane.phase(PARTITION)).isEmpty();
        turn();
        assertThat(dataPlane.phase(PARTITION)).isEmpty();
        assertThatThrownBy(() -> dataPlane.add(new MirrorPartition("orders", 1), 0, -1, -1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("takes no more partitions");
    }

    // ---------------------------------------------------------------- helpers

    /** The fetcher's next turn, on this thread: its commands, the data plane's rounds, one poll of the network. */
    private void turn() {
        turns.remove().run();
    }

    /** A loop of the data plane died (what the liveness check of a stuck one says from its own thread). */
    private void dataPlaneDies() {
        dataPlane.networkDied("fetcher-0", new IllegalStateException("simulated"));
    }

    /** The partitions of the Fetches sent so far and not answered. */
    private List<TopicPartition> fetched() {
        return sourceNetwork.requests().stream()
                .map(ClientRequest::requestBuilder)
                .filter(FetchRequest.Builder.class::isInstance)
                .flatMap(b -> ((FetchRequest.Builder) b).fetchData().keySet().stream())
                .toList();
    }

    private MirrorFetcher start() {
        Executor byTheTest = turns::add;
        return DataPlaneLivenessTest.dataPlane(
                new Fetcher(0, WireNetwork.over("test", sourceNetwork), byTheTest, null).start(), listener, 30_000);
    }
}
