package io.clustermirror.fetch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.clustermirror.kafka.ClusterView;
import io.clustermirror.kafka.TwoClusterClient;
import io.clustermirror.kafka.WireNetwork;
import io.clustermirror.mirror.MirrorPartition;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.apache.kafka.clients.ClientRequest;
import org.apache.kafka.clients.MockClient;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientUnitTestEnv;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData;
import org.apache.kafka.common.message.EndTxnResponseData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.message.ListTransactionsResponseData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.EndTransactionMarker;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.requests.EndTxnResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.ListTransactionsResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestTestUtils;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The destination-side control steps of the append loop (producer ids, resets' read-backs) run as requests whose
 * answers are taken up in later rounds, never as a blocking call in a fetcher's turn, and every request of a partition
 * goes over its pinned destination connection. The network on both sides is kafka-clients' {@link MockClient}.
 */
class ControlStepsTest {

    private static final Node SOURCE_BROKER = new Node(1, "source", 9092);
    private static final Node DESTINATION_BROKER = new Node(7, "destination", 9092);
    /** Both clusters' request timeout: longer than any wait here, so an unanswered request stays so. */
    private static final int TIMEOUT_MS = 30_000;

    private static final Node SOURCE_BROKER_B = new Node(2, "source-b", 9092);
    private static final Map<String, Uuid> SOURCE_IDS =
            Map.of("orders", Uuid.randomUuid(), "payments", Uuid.randomUuid());
    private static final Map<String, Uuid> DESTINATION_IDS =
            Map.of("orders", Uuid.randomUuid(), "payments", Uuid.randomUuid());

    private final MockClient sourceNetwork = new MockClient(Time.SYSTEM);
    private final MockClient sourceNetworkB = new MockClient(Time.SYSTEM);
    private final MockClient destinationNetwork = new MockClient(Time.SYSTEM);
    private final TwoClusterClient network = new TwoClusterClient(Map.of(
            SOURCE_BROKER.host(), sourceNetwork,
            SOURCE_BROKER_B.host(), sourceNetworkB,
            DESTINATION_BROKER.host(), destinationNetwork));
    private final Map<MirrorPartition, String> failures = new ConcurrentHashMap<>();
    /** The instance's append lease, as the test sets it. */
    private volatile boolean leaseHeld = true;
    /** Partitions the destination's view shows without a leader. */
    private final Set<TopicPartition> offlineOnDestination = new HashSet<>();

    /** How far the data planes' clock is ahead of System.nanoTime, as the test moves it. */
    private final AtomicLong clockAhead = new AtomicLong();

    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final List<MirrorFetcher> started = new ArrayList<>();
    private Fetcher pooled;

    @AfterEach
    void close() {
        started.forEach(MirrorFetcher::close);
        threads.shutdownNow();
    }

    @Test
    void producerIdsOfManyPartitionsShouldBeAskedForAtOnceAndTakenUpWhenAnswered() {
        // Given 20 partitions with a batch each, and a destination that has not answered any InitProducerId yet
        List<TopicPartition> tps = partitions(20);
        MirrorFetcher fetcher = start(tps);

        // When they enter the data plane (the fetcher turns meanwhile: the first Fetch may carry only some of them)
        tps.forEach(tp -> fetcher.add(new MirrorPartition(tp.topic(), tp.partition()), 0, -1, -1));

        // Then their coordinators are asked for together (one FindCoordinator names many), and then every one of them
        // has its InitProducerId under way at the same time, none waiting for another's answer
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            answerFetches(sourceNetwork);
            for (ClientRequest request : pending(ApiKeys.FIND_COORDINATOR)) {
                destinationNetwork.respondToRequest(request, coordinatorOf(request));
            }
            return sent(ApiKeys.FIND_COORDINATOR).stream()
                            .mapToInt(request -> keysOf(request).size())
                            .sum()
                    == tps.size();
        });
        assertThat(sent(ApiKeys.FIND_COORDINATOR).size()).isLessThan(tps.size());
        // (the coordinators are asked for from the partitions' entry on, their producer ids once their batch is
        // fetched: the source and the coordinator go on answering until all are under way)
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            answerFetches(sourceNetwork);
            for (ClientRequest request : pending(ApiKeys.FIND_COORDINATOR)) {
                destinationNetwork.respondToRequest(request, coordinatorOf(request));
            }
            return pending(ApiKeys.INIT_PRODUCER_ID).size() == tps.size();
        });
        // and once answered, each partition's batch goes under the producer id it was given
        long id = 1000;
        for (ClientRequest request : pending(ApiKeys.INIT_PRODUCER_ID)) {
            destinationNetwork.respondToRequest(request, producerId(id++));
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> producedIds().size() == tps.size());
        assertThat(producedIds())
                .containsExactlyInAnyOrderElementsOf(
                        LongStream.range(1000, 1000 + tps.size()).boxed().toList());
        assertThat(failures).isEmpty();
    }

    @Test
    void aPartitionsCoordinatorShouldBeFoundOnEntryAndItsProducerIdAskedForOnceItHasABatch() {
        // Given a partition whose source has not answered its first Fetch yet
        List<TopicPartition> tps = partitions(1);
        MirrorFetcher fetcher = start(tps);

        // When it enters the data plane
        fetcher.add(new MirrorPartition("orders", tps.get(0).partition()), 0, -1, -1);

        // Then its coordinator is asked for while that Fetch is unanswered, and its producer id is not (a write on
        // the coordinator, for a partition that may have nothing to send)
        await().atMost(Duration.ofSeconds(10))
                .until(() -> !pending(ApiKeys.FIND_COORDINATOR).isEmpty());
        assertThat(sourceNetwork.requests()).anyMatch(r -> r.apiKey() == ApiKeys.FETCH);
        pending(ApiKeys.FIND_COORDINATOR)
                .forEach(request -> destinationNetwork.respondToRequest(request, coordinatorOf(request)));
        await().during(Duration.ofMillis(200))
                .atMost(Duration.ofSeconds(1))
                .until(() -> sent(ApiKeys.INIT_PRODUCER_ID).isEmpty());
        // and once its first batch is fetched, the producer id is one InitProducerId away: no second FindCoordinator
        answerFetches(sourceNetwork);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> !pending(ApiKeys.INIT_PRODUCER_ID).isEmpty());
        assertThat(sent(ApiKeys.FIND_COORDINATOR)).hasSize(1);
        assertThat(failures).isEmpty();
    }

    @Test
    void aPartitionThatEntersBehindTheSourcesEndShouldAskForItsProducerIdWhileItsFirstFetchIsUnanswered() {
        // Given a partition whose LOG_TRUNCATION read a source end beyond where it starts
        List<TopicPartition> tps = partitions(1);
        MirrorFetcher fetcher = start(tps);

        // When it enters the data plane
        fetcher.add(new MirrorPartition("orders", tps.get(0).partition()), 0, -1, 10);

        // Then its producer id is asked for as soon as its coordinator is known, its first Fetch still unanswered
        await().atMost(Duration.ofSeconds(10))
                .until(() -> !pending(ApiKeys.FIND_COORDINATOR).isEmpty());
        pending(ApiKeys.FIND_COORDINATOR)
                .forEach(request -> destinationNetwork.respondToRequest(request, coordinatorOf(request)));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> !pending(ApiKeys.INIT_PRODUCER_ID).isEmpty());
        assertThat(sourceNetwork.requests()).anyMatch(r -> r.apiKey() == ApiKeys.FETCH);
        assertThat(failures).isEmpty();
    }

    @Test
    void aLostProducerIdRequestShouldBeAskedAgain() {
        // Given a destination that drops the connection under the first InitProducerId, then answers the second
        List<TopicPartition> tps = partitions(1);
        sourceFetchAnswer(sourceNetwork, tps);
        destinationNetwork.prepareResponse(coordinator("cluster-mirror/m1/orders/0"));
        destinationNetwork.prepareResponse(null, true);
        destinationNetwork.prepareResponse(coordinator("cluster-mirror/m1/orders/0"));
        destinationNetwork.prepareResponse(producerId(4711));
        destinationNetwork.prepareResponse(appended(tps.get(0), 0));
        MirrorFetcher fetcher = start(tps);

        // When the partition enters the data plane
        fetcher.add(new MirrorPartition("orders", tps.get(0).partition()), 0, -1, -1);

        // Then its producer id is asked for again, and its batch lands under the id of the second answer
        await().atMost(Duration.ofSeconds(10))
                .until(() -> fetcher.progress(
                                        new MirrorPartition("orders", tps.get(0).partition()))
                                .orElseThrow()
                                .destinationEnd()
                        == 1);
        assertThat(sent(ApiKeys.INIT_PRODUCER_ID)).hasSize(2);
        // (the coordinator is found again: a lost answer may mean it moved)
        assertThat(sent(ApiKeys.FIND_COORDINATOR)).hasSize(2);
        assertThat(failures).isEmpty();
    }

    @Test
    void aPartitionGivenNoProducerIdForFourRequestTimeoutsShouldFailWithTheLastReason() {
        // Given a destination whose transaction coordinator for the partition's name is never available
        List<TopicPartition> tps = partitions(1);
        sourceFetchAnswer(sourceNetwork, tps);
        MirrorPartition partition = new MirrorPartition("orders", 0);
        MirrorFetcher fetcher = start(tps);
        AtomicInteger refused = new AtomicInteger();
        Function<ClientRequest, AbstractResponse> unavailable = request -> switch (request.apiKey()) {
            case FIND_COORDINATOR -> coordinatorOf(request);
            case INIT_PRODUCER_ID -> {
                refused.incrementAndGet();
                yield new InitProducerIdResponse(
                        new InitProducerIdResponseData().setErrorCode(Errors.COORDINATOR_NOT_AVAILABLE.code()));
            }
            default -> null;
        };
        fetcher.add(partition, 0, -1, -1);
        // (a second refusal: the first was taken up by the fetcher before the clock moves, and the partition asked
        // again)
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            answer(unavailable);
            return refused.get() >= 2;
        });
        assertThat(failures).isEmpty();

        // When it keeps being refused while time goes on (five seconds a look)
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            clockAhead.addAndGet(TimeUnit.SECONDS.toNanos(5));
            answer(unavailable);
            return failures.containsKey(partition);
        });

        // Then it fails once that lasted four request timeouts, naming the name and the last reason
        assertThat(clockAhead.get()).isGreaterThan(TimeUnit.MILLISECONDS.toNanos(4L * TIMEOUT_MS));
        assertThat(failures.get(partition))
                .contains("no producer id for 120000 ms")
                .contains("cluster-mirror/m1/orders/0")
                .contains("InitProducerId: COORDINATOR_NOT_AVAILABLE");
    }

    @Test
    void aPartitionWhoseDestinationShowsNoLeaderForFourRequestTimeoutsShouldFailSayingSo() {
        // Given a partition whose destination partition has no leader (its topic deleted, or offline)
        List<TopicPartition> tps = partitions(1);
        offlineOnDestination.add(tps.get(0));
        sourceFetchAnswer(sourceNetwork, tps);
        MirrorPartition partition = new MirrorPartition("orders", 0);
        MirrorFetcher fetcher = start(tps);

        // When it is in the data plane while time goes on (ten seconds a look)
        fetcher.add(partition, 0, -1, -1);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> sourceNetwork.requests().stream().anyMatch(r -> r.apiKey() == ApiKeys.FETCH));
        assertThat(failures).isEmpty();
        await().atMost(Duration.ofSeconds(20)).until(() -> {
            clockAhead.addAndGet(TimeUnit.SECONDS.toNanos(10));
            return failures.containsKey(partition);
        });

        // Then it fails with the reason, after four request timeouts (120 s) of the clock at the least
        assertThat(failures.get(partition))
                .isEqualTo("the destination has shown no leader of the partition for 120000 ms: its topic was deleted "
                        + "or is not known to the destination, or the partition is offline");
        assertThat(clockAhead.get()).isGreaterThan(TimeUnit.MILLISECONDS.toNanos(4L * TIMEOUT_MS));
        assertThat(sent(ApiKeys.PRODUCE)).isEmpty();
    }

    @Test
    void aPartitionShouldAskForANewEpochOfItsProducerIdOnceItsIdIsADayOld() {
        // Given a partition whose first batch landed under producer id 4711, epoch 0
        TopicPartition tp = new TopicPartition("orders", 0);
        MirrorPartition partition = new MirrorPartition("orders", 0);
        MirrorFetcher fetcher = firstBatchLanded(tp, partition);

        // When a day and a second have passed, and the source has a second batch
        clockAhead.addAndGet(ProducerIds.REFRESH_NANOS + TimeUnit.SECONDS.toNanos(1));
        destinationNetwork.prepareResponse(new InitProducerIdResponse(
                new InitProducerIdResponseData().setProducerId(4711).setProducerEpoch((short) 1)));
        destinationNetwork.prepareResponse(appended(tp, 1));
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            for (ClientRequest fetch : List.copyOf(sourceNetwork.requests())) {
                sourceNetwork.respondToRequest(fetch, sourceAnswer(tp, 2, batch(1, 1)));
            }
            return fetcher.progress(partition).orElseThrow().destinationEnd() == 2;
        });

        // Then it asked its coordinator again under the same name (a name the coordinator keeps: used within its
        // transactional.id.expiration.ms, so the next holder is fenced by epoch), and the batch went under epoch 1
        List<ClientRequest> inits = sent(ApiKeys.INIT_PRODUCER_ID);
        assertThat(inits).hasSize(2);
        assertThat(inits)
                .extracting(r -> ((InitProducerIdRequest.Builder) r.requestBuilder()).data.transactionalId())
                .containsOnly(ProducerIds.transactionalId("m1", tp));
        RecordBatch last = ((MemoryRecords)
                        ((ProduceRequest.Builder) sent(ApiKeys.PRODUCE).get(1).requestBuilder())
                                .build()
                                .data()
                                .topicData()
                                .iterator()
                                .next()
                                .partitionData()
                                .get(0)
                                .records())
                .batches()
                .iterator()
                .next();
        assertThat(last.producerId()).isEqualTo(4711);
        assertThat(last.producerEpoch()).isEqualTo((short) 1);
        assertThat(last.baseSequence()).isZero();
        assertThat(failures).isEmpty();
    }

    @Test
    void aResetShouldTakeUpItsReadBackInALaterRoundWhileAnotherDataPlaneKeepsSending() {
        // Given two mirrors' data planes on one fetcher, and a destination that refuses the first batch of "orders"
        // out of order with nothing before it (the verified reset reads the destination back)
        TopicPartition orders = new TopicPartition("orders", 0);
        TopicPartition payments = new TopicPartition("payments", 0);
        sourceFetchAnswer(sourceNetwork, List.of(orders));
        sourceFetchAnswer(sourceNetworkB, List.of(payments));
        MirrorFetcher first = start("m1", SOURCE_BROKER, List.of(orders));
        MirrorFetcher second = start("m2", SOURCE_BROKER_B, List.of(payments));
        Function<ClientRequest, AbstractResponse> destination = request -> switch (request.apiKey()) {
            case FIND_COORDINATOR -> coordinatorOf(request);
            case INIT_PRODUCER_ID -> producerId(request.destination().hashCode());
            case PRODUCE -> {
                TopicPartition tp = producedPartition(request);
                yield tp.equals(orders) ? produceAnswer(tp, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, -1) : appended(tp, 0);
            }
            default -> null; // the read-back waits
        };
        first.add(new MirrorPartition("orders", 0), 0, -1, -1);
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            answer(destination);
            return !pending(ApiKeys.LIST_OFFSETS).isEmpty();
        });
        ClientRequest readBack = pending(ApiKeys.LIST_OFFSETS).get(0);

        // When the other data plane's partition enters while the read-back is unanswered
        second.add(new MirrorPartition("payments", 0), 0, -1, -1);

        // Then its batch is sent and acknowledged meanwhile: no turn of the fetcher waits for the read-back
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            answer(destination);
            return second.progress(new MirrorPartition("payments", 0))
                            .orElseThrow()
                            .destinationEnd()
                    == 1;
        });
        assertThat(first.resetting(new MirrorPartition("orders", 0))).isTrue();
        assertThat(destinationNetwork.requests()).contains(readBack);
        // and once it is answered (nothing of "orders" landed), a later round takes it up and the reset is over
        destinationNetwork.respondToRequest(readBack, endOffset(orders, 0));
        await().atMost(Duration.ofSeconds(10)).until(() -> !first.resetting(new MirrorPartition("orders", 0)));
        assertThat(failures).isEmpty();
    }

    @Test
    void aRetryAfterALostAnswerShouldGoOverThePartitionsPinnedConnectionAndItsProducerIdOverAProducerIdConnection() {
        // Given a partition pinned to the second connection to its leader, whose first Produce answer is lost
        TopicPartition tp = pinnedTo(1);
        sourceFetchAnswer(sourceNetwork, List.of(tp));
        prepareIdentity(tp, 4711);
        destinationNetwork.prepareResponse(null, true);
        destinationNetwork.prepareResponse(appended(tp, 0));
        MirrorFetcher fetcher = start(List.of(tp));

        // When it is mirrored
        fetcher.add(new MirrorPartition(tp.topic(), tp.partition()), 0, -1, -1);

        // Then its batch and the batch's retry went over that one connection, in order; its producer id over the
        // leader's producer-id connections, which keep InitProducerId requests out of the Produce connections'
        // in-flight
        // slots (with 10,000 partitions starting they filled them: bench/partitions.sh)
        await().atMost(Duration.ofSeconds(10))
                .until(() -> fetcher.progress(new MirrorPartition(tp.topic(), tp.partition()))
                                .orElseThrow()
                                .destinationEnd()
                        == 1);
        List<ClientRequest> destinationRequests = network.sent.stream()
                .filter(r -> r.apiKey() == ApiKeys.INIT_PRODUCER_ID || r.apiKey() == ApiKeys.PRODUCE)
                .toList();
        assertThat(destinationRequests)
                .extracting(ClientRequest::apiKey)
                .containsExactly(ApiKeys.INIT_PRODUCER_ID, ApiKeys.PRODUCE, ApiKeys.PRODUCE);
        assertThat(destinationRequests.subList(1, 3))
                .extracting(ClientRequest::destination)
                .containsOnly(destinationRequests.get(1).destination());
        assertThat(destinationRequests.get(0).destination())
                .isNotEqualTo(destinationRequests.get(1).destination());
        assertThat(failures).isEmpty();
    }

    @Test
    void aBatchRefusedForANewerEpochOfThePartitionsProducerIdShouldFailItAsFencedWithoutAReset() {
        // Given a partition whose producer id another instance has since taken a newer epoch of (it took the mirror
        // over while this one was paused)
        TopicPartition tp = new TopicPartition("orders", 0);
        MirrorPartition partition = new MirrorPartition("orders", 0);
        sourceFetchAnswer(sourceNetwork, List.of(tp));
        prepareIdentity(tp, 4711);
        destinationNetwork.prepareResponse(produceAnswer(tp, Errors.INVALID_PRODUCER_EPOCH, -1));
        MirrorFetcher fetcher = start(List.of(tp));

        // When its batch is refused for the old epoch
        fetcher.add(partition, 0, -1, -1);

        // Then the partition stops, fenced: no reset reads the destination back, and no newer epoch is asked for (which
        // would fence the new owner in turn)
        await().atMost(Duration.ofSeconds(10)).until(() -> failures.containsKey(partition));
        assertThat(failures.get(partition)).contains("fenced").contains("INVALID_PRODUCER_EPOCH");
        assertThat(sent(ApiKeys.LIST_OFFSETS)).isEmpty();
        assertThat(sent(ApiKeys.INIT_PRODUCER_ID)).hasSize(1);
    }

    @Test
    void nothingShouldGoToTheDestinationWhileTheAppendLeaseIsNotValid() {
        // Given an instance whose append lease lapsed (paused past it, or cut off from the group coordinator)
        leaseHeld = false;
        TopicPartition tp = new TopicPartition("orders", 0);
        MirrorPartition partition = new MirrorPartition("orders", 0);
        sourceFetchAnswer(sourceNetwork, List.of(tp));
        MirrorFetcher fetcher = start(List.of(tp));

        // When a partition with a fetched batch enters its data plane
        fetcher.add(partition, 0, -1, -1);

        // Then the source is fetched, but not a single request goes to the destination
        await().atMost(Duration.ofSeconds(10)).until(() -> !sourceNetwork.hasPendingResponses());
        await().during(Duration.ofMillis(500))
                .atMost(Duration.ofSeconds(2))
                .until(() -> destinationNetwork.requests().isEmpty()
                        && sent(ApiKeys.FIND_COORDINATOR).isEmpty());
        // and once the lease is renewed, the batch goes
        prepareIdentity(tp, 4711);
        destinationNetwork.prepareResponse(appended(tp, 0));
        leaseHeld = true;
        await().atMost(Duration.ofSeconds(10))
                .until(() -> fetcher.progress(partition).orElseThrow().destinationEnd() == 1);
        assertThat(failures).isEmpty();
    }

    @Test
    void aRemovalShouldBeTakenUpByTheFetcherAndCompleteWithThePartitionsProgress() {
        // Given a partition whose first batch has landed
        TopicPartition tp = new TopicPartition("orders", 0);
        MirrorPartition partition = new MirrorPartition("orders", 0);
        MirrorFetcher fetcher = firstBatchLanded(tp, partition);

        // When the coordinator removes it (a command the fetcher runs between rounds)
        CompletableFuture<DataPlane.Progress> removed = fetcher.remove(partition, false);

        // Then it leaves the data plane with where it got to
        assertThat(removed)
                .succeedsWithin(Duration.ofSeconds(10))
                .extracting(DataPlane.Progress::destinationEnd)
                .isEqualTo(1L);
        assertThat(fetcher.progress(partition)).isEmpty();
        assertThat(failures).isEmpty();
    }

    @Test
    void aTransactionsStepsShouldBeRequestsTakenUpInLaterRoundsWhileAnotherDataPlaneKeepsSending() {
        // Given a source transaction on "orders" (a transactional batch and its commit marker, then a plain batch), a
        // destination with no
        // transaction of this mirror open, and the data plane of another mirror on the same fetcher
        TopicPartition orders = new TopicPartition("orders", 0);
        TopicPartition payments = new TopicPartition("payments", 0);
        sourceNetwork.prepareResponse(sourceAnswer(orders, 3, sourceTransaction(42L, 0L)));
        sourceFetchAnswer(sourceNetworkB, List.of(payments));
        Cluster cluster =
                new Cluster("destination-cluster", List.of(DESTINATION_BROKER), List.of(), Set.of(), Set.of());
        try (AdminClientUnitTestEnv admin = new AdminClientUnitTestEnv(cluster)) {
            admin.kafkaClient()
                    .prepareResponse(
                            body -> body instanceof MetadataRequest,
                            RequestTestUtils.metadataResponse(
                                    List.of(DESTINATION_BROKER),
                                    "destination-cluster",
                                    DESTINATION_BROKER.id(),
                                    List.of()));
            admin.kafkaClient().prepareResponse(new ListTransactionsResponse(new ListTransactionsResponseData()));
            MirrorFetcher first = start("m1", SOURCE_BROKER, List.of(orders), admin.adminClient());
            MirrorFetcher second = start("m2", SOURCE_BROKER_B, List.of(payments), null);
            // the idempotent producer ids and the plain batches are answered as they come; the transaction's steps not
            Function<ClientRequest, AbstractResponse> plain = request -> switch (request.apiKey()) {
                case FIND_COORDINATOR -> forPartitionIdentity(request) ? coordinatorOf(request) : null;
                case INIT_PRODUCER_ID -> forPartitionIdentity(request) ? producerId(request.correlationId()) : null;
                case PRODUCE -> producedPartition(request).equals(payments) ? appended(payments, 0) : null;
                default -> null;
            };
            first.add(new MirrorPartition("orders", 0), 0, -1, -1);
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                answer(plain);
                return !pending(ApiKeys.FIND_COORDINATOR).isEmpty();
            });

            // When the other data plane's partition enters while the transaction's FindCoordinator is unanswered
            second.add(new MirrorPartition("payments", 0), 0, -1, -1);

            // Then its batch is sent and acknowledged meanwhile: no turn of the fetcher waits for a transaction step
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                answer(plain);
                return second.progress(new MirrorPartition("payments", 0))
                                .orElseThrow()
                                .destinationEnd()
                        == 1;
            });
            // and each answer of the transaction is taken up by a later round, step by step, until the destination's
            // marker is read back at the source marker's offset
            String transactionalId = "cluster-mirror/m1/orders/0/42";
            respond(
                    ApiKeys.FIND_COORDINATOR,
                    plain,
                    FindCoordinatorResponse.prepareResponse(Errors.NONE, transactionalId, DESTINATION_BROKER));
            respond(
                    ApiKeys.INIT_PRODUCER_ID,
                    plain,
                    new InitProducerIdResponse(
                            new InitProducerIdResponseData().setProducerId(5000).setProducerEpoch((short) 3)));
            respond(
                    ApiKeys.ADD_PARTITIONS_TO_TXN,
                    plain,
                    new AddPartitionsToTxnResponse(new AddPartitionsToTxnResponseData()
                            .setResultsByTopicV3AndBelow(AddPartitionsToTxnResponse.resultForTransaction(
                                            AddPartitionsToTxnResponse.V3_AND_BELOW_TXN_ID, Map.of(orders, Errors.NONE))
                                    .topicResults())));
            ClientRequest produce = respond(ApiKeys.PRODUCE, plain, appended(orders, 0));
            assertThat(((ProduceRequest.Builder) produce.requestBuilder())
                            .build()
                            .transactionalId())
                    .isEqualTo(transactionalId);
            respond(ApiKeys.END_TXN, plain, new EndTxnResponse(new EndTxnResponseData()));
            respond(ApiKeys.FETCH, plain, destinationAnswer(orders, 2, commitMarker(5000L, (short) 3, 1L)));
            // and only once the marker is read back does the plain batch after it go
            respond(ApiKeys.PRODUCE, plain, appended(orders, 2));
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> first.progress(new MirrorPartition("orders", 0))
                                    .orElseThrow()
                                    .destinationEnd()
                            == 3);
            assertThat(failures).isEmpty();
        }
    }

    /**
     * Waits until a request of {@code api} is pending at the destination (answering the others by {@code meanwhile}),
     * answers it with {@code response}, and returns it.
     */
    private ClientRequest respond(
            ApiKeys api, Function<ClientRequest, AbstractResponse> meanwhile, AbstractResponse response) {
        List<ClientRequest> found = new ArrayList<>();
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            answer(meanwhile);
            pending(api).stream()
                    .filter(r -> api != ApiKeys.INIT_PRODUCER_ID || meanwhile.apply(r) == null)
                    .findFirst()
                    .ifPresent(found::add);
            return !found.isEmpty();
        });
        // one step at a time: no other request of the transaction's partition is under way beside this one
        assertThat(destinationNetwork.requests().stream().filter(r -> switch (r.apiKey()) {
                    case FIND_COORDINATOR, ADD_PARTITIONS_TO_TXN, END_TXN, FETCH -> true;
                    case INIT_PRODUCER_ID, PRODUCE -> meanwhile.apply(r) == null; // the transaction's, not the others'
                    default -> false;
                }))
                .allMatch(r -> r == found.get(0));
        destinationNetwork.respondToRequest(found.get(0), response);
        return found.get(0);
    }

    // ---------------------------------------------------------------- the two clusters

    /** Answers each unanswered destination request that {@code script} has an answer for (null: it stays unanswered). */
    private void answer(Function<ClientRequest, AbstractResponse> script) {
        for (ClientRequest request : List.copyOf(destinationNetwork.requests())) {
            AbstractResponse response = script.apply(request);
            if (response != null) {
                destinationNetwork.respondToRequest(request, response);
            }
        }
    }

    /** The partition of a one-partition Produce. */
    private static TopicPartition producedPartition(ClientRequest request) {
        var topic = ((ProduceRequest.Builder) request.requestBuilder())
                .build()
                .data()
                .topicData()
                .iterator()
                .next();
        String name = DESTINATION_IDS.entrySet().stream()
                .filter(e -> e.getValue().equals(topic.topicId()) || e.getKey().equals(topic.name()))
                .findFirst()
                .orElseThrow()
                .getKey();
        return new TopicPartition(name, topic.partitionData().get(0).index());
    }

    static ListOffsetsResponse endOffset(TopicPartition tp, long offset) {
        return new ListOffsetsResponse(new ListOffsetsResponseData()
                .setTopics(List.of(
                        ListOffsetsResponse.singletonListOffsetsTopicResponse(tp, Errors.NONE, -1, offset, -1))));
    }

    /** {@code count} partitions of "orders", every other one pinned to each of a broker's connections. */
    private static List<TopicPartition> partitions(int count) {
        List<TopicPartition> tps = new ArrayList<>();
        for (int p = 0; p < count; p++) {
            tps.add(new TopicPartition("orders", p));
        }
        return tps;
    }

    /** The first partition of "orders" pinned to connection {@code index} of its leader. */
    static TopicPartition pinnedTo(int index) {
        for (int p = 0; ; p++) {
            TopicPartition tp = new TopicPartition("orders", p);
            if (Utils.abs(tp.hashCode()) % AppendLoop.CONNECTIONS_PER_BROKER == index) {
                return tp;
            }
        }
    }

    /** A data plane of mirror m1 with {@code tp} in it, once its first batch landed under producer id 4711, epoch 0. */
    private MirrorFetcher firstBatchLanded(TopicPartition tp, MirrorPartition partition) {
        sourceFetchAnswer(sourceNetwork, List.of(tp));
        prepareIdentity(tp, 4711);
        destinationNetwork.prepareResponse(appended(tp, 0));
        MirrorFetcher fetcher = start(List.of(tp));
        fetcher.add(partition, 0, -1, -1);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> fetcher.progress(partition).orElseThrow().destinationEnd() == 1);
        return fetcher;
    }

    private MirrorFetcher start(List<TopicPartition> tps) {
        return start("m1", SOURCE_BROKER, tps);
    }

    /** A mirror's data plane, on the one fetcher every data plane of a test shares, for partitions of one topic. */
    private MirrorFetcher start(String mirror, Node sourceBroker, List<TopicPartition> tps) {
        return start(mirror, sourceBroker, tps, null);
    }

    /** Like {@link #start(String, Node, List)}, transaction recovery reading the destination through {@code admin}. */
    private MirrorFetcher start(String mirror, Node sourceBroker, List<TopicPartition> tps, Admin admin) {
        String topic = tps.get(0).topic();
        Map<TopicPartition, Node> sourceLeaders = new HashMap<>();
        Map<TopicPartition, Node> destinationLeaders = new HashMap<>();
        tps.forEach(tp -> {
            sourceLeaders.put(tp, sourceBroker);
            if (!offlineOnDestination.contains(tp)) {
                destinationLeaders.put(tp, DESTINATION_BROKER);
            }
        });
        ClusterView source = new ClusterView(
                "source-cluster",
                List.of(sourceBroker),
                sourceLeaders,
                Map.of(topic, SOURCE_IDS.get(topic)),
                Map.of(SOURCE_IDS.get(topic), topic));
        ClusterView destination = new ClusterView(
                "destination-cluster",
                List.of(DESTINATION_BROKER),
                destinationLeaders,
                Map.of(topic, DESTINATION_IDS.get(topic)),
                Map.of(DESTINATION_IDS.get(topic), topic));
        if (pooled == null) {
            pooled = new Fetcher(
                            0,
                            WireNetwork.over("test", network),
                            threads,
                            null,
                            FetchBudget.UNLIMITED,
                            () -> leaseHeld,
                            () -> System.nanoTime() + clockAhead.get())
                    .start();
        }
        pooled.reserve(); // the pool places a data plane before it is built
        MirrorFetcher dataPlane = new MirrorFetcher(
                mirror,
                "source-cluster",
                pooled,
                pooled.sourceClient(mirror, "source", null, TIMEOUT_MS),
                pooled.destinationClient("destination", TIMEOUT_MS),
                topics -> CompletableFuture.completedFuture(source),
                topics -> CompletableFuture.completedFuture(destination),
                admin,
                new Listener(),
                1,
                TIMEOUT_MS,
                new ReplicationThrottle(ReplicationThrottle.UNLIMITED));
        started.add(dataPlane);
        return dataPlane;
    }

    /** Requests of {@code api} sent to the destination and not answered yet. */
    private List<ClientRequest> pending(ApiKeys api) {
        return destinationNetwork.requests().stream()
                .filter(r -> r.apiKey() == api)
                .toList();
    }

    /** Every request of {@code api} sent to the destination so far. */
    private List<ClientRequest> sent(ApiKeys api) {
        return network.sent.stream().filter(r -> r.apiKey() == api).toList();
    }

    /** The producer ids the Produce requests sent so far carried. */
    private Set<Long> producedIds() {
        return sent(ApiKeys.PRODUCE).stream()
                .map(r -> ((ProduceRequest.Builder) r.requestBuilder()).build())
                .flatMap(p -> p.data().topicData().stream())
                .flatMap(t -> t.partitionData().stream())
                .map(p -> ((MemoryRecords) p.records())
                        .batches()
                        .iterator()
                        .next()
                        .producerId())
                .collect(Collectors.toSet());
    }

    /**
     * Answers each unanswered Fetch of {@code source} with what it asks for: a batch of one record for each partition it
     * fetches from offset 0, nothing for the others. A Fetch carries the partitions that had entered when it was built,
     * so one answer prepared for all of them fits only a Fetch built after the last one entered: kafka-clients' fetch
     * session handler refuses an answer with partitions its request did not carry, and nothing answers the next Fetch.
     * (The source's request timeout is longer than any test, so no request times out while it is answered here.)
     */
    private static void answerFetches(MockClient source) {
        for (ClientRequest request : List.copyOf(source.requests())) {
            if (request.requestBuilder() instanceof FetchRequest.Builder fetch) {
                LinkedHashMap<TopicIdPartition, FetchResponseData.PartitionData> data = new LinkedHashMap<>();
                fetch.fetchData()
                        .forEach((tp, asked) -> data.put(
                                new TopicIdPartition(SOURCE_IDS.get(tp.topic()), tp),
                                new FetchResponseData.PartitionData()
                                        .setPartitionIndex(tp.partition())
                                        .setHighWatermark(1)
                                        .setRecords(asked.fetchOffset == 0 ? batch(0, 1) : MemoryRecords.EMPTY)));
                source.respondToRequest(request, FetchResponse.of(Errors.NONE, 0, 0, data, List.of()));
            }
        }
    }

    /** The source answers the first Fetch with one batch of one record for each partition. */
    static void sourceFetchAnswer(MockClient sourceNetwork, List<TopicPartition> tps) {
        LinkedHashMap<TopicIdPartition, FetchResponseData.PartitionData> data = new LinkedHashMap<>();
        for (TopicPartition tp : tps) {
            data.put(
                    new TopicIdPartition(SOURCE_IDS.get(tp.topic()), tp),
                    new FetchResponseData.PartitionData()
                            .setPartitionIndex(tp.partition())
                            .setHighWatermark(1)
                            .setRecords(batch(0, 1)));
        }
        sourceNetwork.prepareResponse(FetchResponse.of(Errors.NONE, 0, 0, data, List.of()));
    }

    /**
     * One source transaction of producer {@code producerId} from {@code baseOffset} (a batch of one record, then its
     * commit marker), and a plain batch of one record after it.
     */
    private static MemoryRecords sourceTransaction(long producerId, long baseOffset) {
        MemoryRecords data = MemoryRecords.withTransactionalRecords(
                baseOffset,
                Compression.NONE,
                producerId,
                (short) 0,
                0,
                0,
                new SimpleRecord(1_000L, "k".getBytes(), "v".getBytes()));
        MemoryRecords marker = commitMarker(producerId, (short) 0, baseOffset + 1);
        MemoryRecords plain = batch(baseOffset + 2, 1);
        ByteBuffer all = ByteBuffer.allocate(data.sizeInBytes() + marker.sizeInBytes() + plain.sizeInBytes());
        all.put(data.buffer()).put(marker.buffer()).put(plain.buffer()).flip();
        return MemoryRecords.readableRecords(all);
    }

    private static MemoryRecords commitMarker(long producerId, short epoch, long offset) {
        return MemoryRecords.withEndTransactionMarker(
                offset, 1_001L, 0, producerId, epoch, new EndTransactionMarker(ControlRecordType.COMMIT, 0));
    }

    /** A Fetch answer of the source for one partition. */
    private static FetchResponse sourceAnswer(TopicPartition tp, long highWatermark, MemoryRecords records) {
        return fetchAnswer(SOURCE_IDS, tp, highWatermark, records);
    }

    /** A Fetch answer of the destination for one partition. */
    private static FetchResponse destinationAnswer(TopicPartition tp, long highWatermark, MemoryRecords records) {
        return fetchAnswer(DESTINATION_IDS, tp, highWatermark, records);
    }

    private static FetchResponse fetchAnswer(
            Map<String, Uuid> ids, TopicPartition tp, long highWatermark, MemoryRecords records) {
        LinkedHashMap<TopicIdPartition, FetchResponseData.PartitionData> data = new LinkedHashMap<>();
        data.put(
                new TopicIdPartition(ids.get(tp.topic()), tp),
                new FetchResponseData.PartitionData()
                        .setPartitionIndex(tp.partition())
                        .setHighWatermark(highWatermark)
                        .setRecords(records));
        return FetchResponse.of(Errors.NONE, 0, 0, data, List.of());
    }

    static MemoryRecords batch(long baseOffset, int count) {
        MemoryRecordsBuilder builder = MemoryRecords.builder(
                ByteBuffer.allocate(1024),
                RecordBatch.CURRENT_MAGIC_VALUE,
                Compression.NONE,
                TimestampType.CREATE_TIME,
                baseOffset,
                1_000L,
                99L,
                (short) 0,
                (int) baseOffset,
                false,
                0);
        for (int i = 0; i < count; i++) {
            builder.append(1_000L + i, ("key-" + (baseOffset + i)).getBytes(), ("value-" + i).getBytes());
        }
        return builder.build();
    }

    /** The answers that give partition {@code tp} of mirror m1 producer id {@code id}: its coordinator, then the id. */
    private void prepareIdentity(TopicPartition tp, long id) {
        destinationNetwork.prepareResponse(coordinator(ProducerIds.transactionalId("m1", tp)));
        destinationNetwork.prepareResponse(producerId(id));
    }

    /** The transaction coordinator of a partition's producer id: the destination broker. */
    static FindCoordinatorResponse coordinator(String transactionalId) {
        return FindCoordinatorResponse.prepareResponse(Errors.NONE, transactionalId, DESTINATION_BROKER);
    }

    /** The destination broker as the transaction coordinator of every name a FindCoordinator asks for. */
    static FindCoordinatorResponse coordinatorOf(ClientRequest request) {
        return new FindCoordinatorResponse(new FindCoordinatorResponseData()
                .setCoordinators(keysOf(request).stream()
                        .map(key -> new FindCoordinatorResponseData.Coordinator()
                                .setKey(key)
                                .setNodeId(DESTINATION_BROKER.id())
                                .setHost(DESTINATION_BROKER.host())
                                .setPort(DESTINATION_BROKER.port()))
                        .toList()));
    }

    static List<String> keysOf(ClientRequest request) {
        return ((FindCoordinatorRequest.Builder) request.requestBuilder())
                .data()
                .coordinatorKeys();
    }

    /** Whether a FindCoordinator or InitProducerId asks for a partition's own producer id (not a replayed one's). */
    static boolean forPartitionIdentity(ClientRequest request) {
        String transactionalId = request.requestBuilder() instanceof FindCoordinatorRequest.Builder find
                ? find.data().coordinatorKeys().get(0)
                : ((InitProducerIdRequest.Builder) request.requestBuilder()).data.transactionalId();
        return transactionalId.split("/").length == 4; // cluster-mirror/<mirror>/<topic>/<partition>
    }

    static InitProducerIdResponse producerId(long id) {
        return new InitProducerIdResponse(
                new InitProducerIdResponseData().setProducerId(id).setProducerEpoch((short) 0));
    }

    static ProduceResponse appended(TopicPartition tp, long baseOffset) {
        return produceAnswer(tp, Errors.NONE, baseOffset);
    }

    static ProduceResponse produceAnswer(TopicPartition tp, Errors error, long baseOffset) {
        ProduceResponseData.TopicProduceResponseCollection topics =
                new ProduceResponseData.TopicProduceResponseCollection();
        topics.add(new ProduceResponseData.TopicProduceResponse()
                .setName(tp.topic())
                .setTopicId(DESTINATION_IDS.get(tp.topic()))
                .setPartitionResponses(new ArrayList<>(List.of(new ProduceResponseData.PartitionProduceResponse()
                        .setIndex(tp.partition())
                        .setErrorCode(error.code())
                        .setBaseOffset(baseOffset)))));
        return new ProduceResponse(new ProduceResponseData().setResponses(topics));
    }

    private final class Listener implements DataPlane.Listener {
        @Override
        public void onFailed(MirrorPartition partition, String error) {
            failures.put(partition, error);
        }

        @Override
        public void onEpochFenced(MirrorPartition partition, String reason, long epochEndOffset) {}

        @Override
        public void onAppended(MirrorPartition partition, int records, int bytes) {}

        @Override
        public void onSourceClusterChanged(String actualClusterId) {}

        @Override
        public void onRequest(String api, boolean failed) {}
    }
}
