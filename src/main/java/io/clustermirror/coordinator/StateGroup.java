package io.clustermirror.coordinator;

import io.clustermirror.config.MirrorServiceConfig;
import io.clustermirror.kafka.KafkaClients;
import io.clustermirror.metrics.MirrorMetrics;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.jboss.logging.Logger;

/**
 * This instance's membership of the state group (decisions §48): a consumer of {@code __mirror_state} in the group of
 * every instance that shares the destination, on a thread of its own. It fetches nothing; the group protocol is its
 * job. Kafka assigns the state partitions ({@link MirrorStateAssignor}, cooperative), and the {@link StateKeeper} takes
 * over the partitions it gains (fence their writers, replay them, start their mirrors) and gives up the ones it loses (stop
 * their mirrors) before the consumer goes on, so a partition's mirrors have stopped here before another member is
 * handed the partition. A graceful close leaves the group at once, also as a static member, so its partitions move in
 * seconds, not after the session timeout.
 */
final class StateGroup implements MirrorStateAssignor.Member {

    private static final Logger LOGGER = Logger.getLogger(StateGroup.class);
    private static final long REBALANCE_DELAY_S = 3;

    /** At most this long for the mirrors of state partitions given up to stop before the group goes on. */
    private static final long GIVE_UP_TIMEOUT_MS = 30_000;

    private final KafkaClients clients;
    private final String topic;
    private final String groupId;
    private final Optional<String> staticId;
    private final int sessionTimeoutMs;
    private final ServiceInstance.Identity identity;
    private final StateKeeper keeper;
    private final CoordinatorThread coordinator;
    private final MirrorMetrics metrics;
    private volatile StateOwnership ownership = StateOwnership.NONE;
    /** When to ask for a rebalance (nanoTime), 0 for never: a burst of creates asks once. */
    private volatile long rebalanceAt;

    /**
     * Until when (nanoTime) this instance may append: half a session timeout after it sent an offset commit that the
     * group coordinator accepted from this member and generation (decisions §48). 0: not yet.
     */
    private volatile long leaseUntil;
    /** When the lease was last renewed (nanoTime), for the log line after a lapse. */
    private long renewedAt;
    /**
     * Whether the lapse under way was logged (once, when a renewal failed a session timeout past the lease's end, or
     * past this member's creation when no commit was ever accepted). Membership thread.
     */
    private boolean lapseLogged;

    private final long createdAt = System.nanoTime();

    private volatile boolean closing;
    private volatile KafkaConsumer<byte[], byte[]> consumer;
    private Thread thread;

    StateGroup(
            KafkaClients clients,
            MirrorServiceConfig config,
            ServiceInstance.Identity identity,
            StateKeeper keeper,
            CoordinatorThread thread,
            MirrorMetrics metrics) {
        this.clients = clients;
        this.topic = config.state().topic().name();
        this.groupId = config.state().group().id().orElse("cluster-mirror-" + topic);
        // static membership when the instance is named (the Helm chart names it by its pod)
        this.staticId = config.instance().id().map(String::strip).filter(id -> !id.isEmpty());
        this.sessionTimeoutMs = config.state().group().sessionTimeoutMs();
        this.identity = identity;
        this.keeper = keeper;
        this.coordinator = thread;
        this.metrics = metrics;
        metrics.registerAppendLease(() -> leaseValid() ? 1 : 0);
    }

    synchronized void start() {
        if (thread == null) {
            thread = new Thread(this::run, "mirror-state-group");
            thread.setDaemon(true);
            thread.start();
        }
    }

    /** Who owns what, as last assigned. */
    StateOwnership ownership() {
        return ownership;
    }

    /**
     * Asks for a rebalance a few seconds from now, when other members share the group (the mirrors on this instance's
     * partitions changed, so their spread may have): the leader then weighs the partitions again.
     */
    void rebalanceSoon() {
        if (ownership.members().size() > 1) {
            rebalanceAt = System.nanoTime() + TimeUnit.SECONDS.toNanos(REBALANCE_DELAY_S);
        }
    }

    /** Leaves the group (its partitions given up first), waiting up to the timeout. */
    void close(Duration timeout) {
        Thread t;
        synchronized (this) {
            closing = true;
            t = thread;
        }
        KafkaConsumer<byte[], byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
        if (t != null) {
            try {
                t.join(timeout.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void run() {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        props.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, MirrorStateAssignor.class.getName());
        props.put(MirrorStateAssignor.MEMBER_CONFIG, this);
        props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, sessionTimeoutMs);
        // a member learns of a rebalance with its next heartbeat: often, so that a handover waits little for it
        props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, heartbeatIntervalMs());
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");
        staticId.ifPresent(id -> props.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, id));
        while (!closing) {
            try (KafkaConsumer<byte[], byte[]> c = clients.stateGroupMember(props)) {
                consumer = c;
                member(c);
            } catch (RuntimeException e) {
                if (!closing) {
                    LOGGER.warnf("State group member failed (%s); joining again in 1 s", e.toString());
                    sleep(1000);
                }
            }
        }
        LOGGER.infof("Left the state group %s", groupId);
    }

    private void member(KafkaConsumer<byte[], byte[]> c) {
        c.subscribe(List.of(topic), new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                c.pause(partitions); // membership only: the records are read by the state store
                taken(numbers(partitions)); // also with none: the instance is a member now
            }

            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                if (!partitions.isEmpty()) {
                    givenUp(numbers(partitions), false);
                }
            }

            @Override
            public void onPartitionsLost(Collection<TopicPartition> partitions) {
                if (!partitions.isEmpty()) {
                    givenUp(numbers(partitions), true);
                }
            }
        });
        try {
            while (!closing) {
                c.poll(Duration.ofMillis(200));
                renewLease(c);
                long at = rebalanceAt;
                if (at != 0 && System.nanoTime() - at >= 0 && !closing) {
                    rebalanceAt = 0;
                    c.enforceRebalance("the mirrors on this instance's state partitions changed");
                }
            }
        } catch (WakeupException e) {
            // closing
        }
        // a static member too leaves at once: its partitions move now, not after the session timeout
        c.close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
                .withTimeout(Duration.ofSeconds(10)));
    }

    /**
     * Whether this instance may append now ({@link io.clustermirror.fetch.AppendLease}): a commit of this member and
     * generation was accepted less than half a session timeout ago. A classic group coordinator takes an accepted
     * offset commit as a heartbeat (it restarts the member's session), so the group cannot have handed this instance's
     * partitions to another member before the lease ends; an instance that was paused past it, or cut off from the
     * coordinator, appends nothing until a commit is accepted again, and a member the group dropped learns so from the
     * commit's refusal and gives its partitions up before it joins again. Any thread.
     */
    boolean leaseValid() {
        long until = leaseUntil;
        return until != 0 && System.nanoTime() - until < 0;
    }

    /** Renews the lease once a heartbeat interval, and at once when it lapsed. Membership thread. */
    private void renewLease(KafkaConsumer<byte[], byte[]> c) {
        long now = System.nanoTime();
        boolean lapsed = !leaseValid();
        if (!lapsed && now - renewedAt < TimeUnit.MILLISECONDS.toNanos(heartbeatIntervalMs())) {
            return;
        }
        Set<TopicPartition> owned = c.assignment();
        TopicPartition any = owned.isEmpty()
                ? new TopicPartition(topic, 0)
                : owned.iterator().next();
        try {
            c.commitSync(Map.of(any, new OffsetAndMetadata(0)), Duration.ofMillis(sessionTimeoutMs / 2));
        } catch (WakeupException e) {
            throw e;
        } catch (RuntimeException e) {
            // not a member of the current generation (dropped, or a rebalance is completing), or no answer: the lease
            // runs out, and the next poll rejoins (and gives the partitions up when they were lost); a lapse that lasts
            // (the group's offsets partition cannot take commits) stops every append of this instance, so it is told
            long lapsedSince = leaseUntil != 0 ? leaseUntil : createdAt;
            if (!leaseValid() && !lapseLogged && now - lapsedSince > TimeUnit.MILLISECONDS.toNanos(sessionTimeoutMs)) {
                lapseLogged = true;
                LOGGER.warnf(
                        "State group %s: the append lease lapsed: this instance appends nothing until a commit to the "
                                + "group is accepted again (cluster_mirror_state_group_lease_valid 0); the commit failed: %s",
                        groupId, e.toString());
            } else {
                LOGGER.debugf("State group %s: the append lease was not renewed: %s", groupId, e.toString());
            }
            return;
        }
        lapseLogged = false;
        if (lapsed && renewedAt != 0) {
            metrics.appendLeaseLapsed();
            LOGGER.warnf(
                    "State group %s: the append lease had lapsed (renewed %d ms ago); this instance appended nothing"
                            + " meanwhile and appends again",
                    groupId, TimeUnit.NANOSECONDS.toMillis(now - renewedAt));
        }
        renewedAt = now;
        leaseUntil = now + TimeUnit.MILLISECONDS.toNanos(sessionTimeoutMs / 2);
    }

    private int heartbeatIntervalMs() {
        return Math.max(500, sessionTimeoutMs / 10);
    }

    /** Takes the partitions over on the coordinator thread (fence, replay, start), and returns once it did. */
    private void taken(Set<Integer> partitions) {
        long started = System.nanoTime();
        coordinator
                .call(() -> {
                    keeper.take(partitions);
                    return null;
                })
                .await()
                .indefinitely();
        if (!partitions.isEmpty()) {
            metrics.statePartitionsMoved("taken", partitions.size(), msSince(started));
        }
    }

    /** Gives the partitions up on the coordinator thread, and returns once their mirrors stopped appending. */
    private void givenUp(Set<Integer> partitions, boolean lost) {
        long started = System.nanoTime();
        CompletableFuture<Void> stopped =
                coordinator.call(() -> keeper.giveUp(partitions)).await().indefinitely();
        try {
            stopped.get(GIVE_UP_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOGGER.errorf(
                    "The mirrors of state partitions %s did not stop within %d ms: %s",
                    partitions, GIVE_UP_TIMEOUT_MS, e);
        }
        metrics.statePartitionsMoved(lost ? "lost" : "given-up", partitions.size(), msSince(started));
    }

    private static long msSince(long startedNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNanos);
    }

    private static Set<Integer> numbers(Collection<TopicPartition> partitions) {
        Set<Integer> numbers = new TreeSet<>();
        partitions.forEach(tp -> numbers.add(tp.partition()));
        return numbers;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String id() {
        return identity.id();
    }

    @Override
    public String url() {
        return identity.url();
    }

    @Override
    public Map<Integer, Integer> weights() {
        Map<Integer, Integer> weights = new HashMap<>(ownership.weights());
        weights.putAll(keeper.mirrorsPerPartition());
        return weights;
    }

    @Override
    public void assigned(StateOwnership ownership) {
        this.ownership = ownership;
        LOGGER.infof(
                "State group %s: %s",
                groupId,
                ownership.members().stream()
                        .map(m -> m.id() + " owns " + m.partitions().size() + " partition(s)")
                        .toList());
    }
}
