package io.clustermirror.coordinator;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Configurable;
import org.apache.kafka.common.TopicPartition;

/**
 * The state group's assignor (classic group protocol, cooperative): the leader plans with {@link OwnershipPlan} from
 * what each member reports in its subscription (its instance id and URL, and how many mirrors each partition holds),
 * and hands every member the whole {@link StateOwnership}, so that any instance knows where to forward a request.
 * Kafka builds the assignor by class name; its {@link Member} (the instance's side) comes in the consumer's configs
 * under {@link #MEMBER_CONFIG}.
 */
public final class MirrorStateAssignor implements ConsumerPartitionAssignor, Configurable {

    /** The consumer config key that carries the {@link Member}. */
    public static final String MEMBER_CONFIG = "cluster.mirror.state.group.member";

    static final String NAME = "cluster-mirror-state";

    private static final ObjectMapper JSON = new ObjectMapper();

    /** What the instance tells the leader and learns from it. */
    interface Member {
        String id();

        String url();

        /** Mirrors per state partition, as far as this member knows (its own partitions counted now). */
        Map<Integer, Integer> weights();

        /** The ownership the leader decided, with this member's own partitions in it. */
        void assigned(StateOwnership ownership);
    }

    /** The subscription's user data. */
    public record Report(String id, String url, Map<Integer, Integer> weights) {}

    private Member member;

    @Override
    public void configure(Map<String, ?> configs) {
        Object given = configs.get(MEMBER_CONFIG);
        if (!(given instanceof Member m)) {
            throw new IllegalArgumentException(MEMBER_CONFIG + " must carry the instance's state group member");
        }
        this.member = m;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<RebalanceProtocol> supportedProtocols() {
        return List.of(RebalanceProtocol.COOPERATIVE);
    }

    @Override
    public ByteBuffer subscriptionUserData(Set<String> topics) {
        return encode(new Report(member.id(), member.url(), member.weights()));
    }

    @Override
    public GroupAssignment assign(Cluster metadata, GroupSubscription group) {
        Map<String, Subscription> subscriptions = group.groupSubscription();
        String topic = subscriptions.values().stream()
                .flatMap(s -> s.topics().stream())
                .findFirst()
                .orElseThrow();
        Integer count = metadata.partitionCountForTopic(topic);
        int partitions = count == null ? 0 : count;
        Map<String, Report> reports = new TreeMap<>();
        Map<String, Set<Integer>> owned = new TreeMap<>();
        Map<Integer, Integer> weights = new HashMap<>();
        subscriptions.forEach((memberId, s) -> {
            Report report = decode(s.userData(), Report.class);
            reports.put(memberId, report);
            report.weights().forEach(weights::putIfAbsent); // what anyone last knew ...
            Set<Integer> mine = new TreeSet<>();
            s.ownedPartitions().forEach(tp -> mine.add(tp.partition()));
            owned.put(memberId, mine);
        });
        owned.forEach(
                (memberId, mine) -> // ... its owner's count now wins
                mine.forEach(p -> weights.put(p, reports.get(memberId).weights().getOrDefault(p, 0))));
        Map<String, Set<Integer>> plan = OwnershipPlan.assign(partitions, owned, weights);
        List<StateOwnership.Owner> owners = new ArrayList<>();
        plan.forEach((memberId, ps) -> {
            Report r = reports.get(memberId);
            owners.add(new StateOwnership.Owner(r.id(), r.url(), ps));
        });
        ByteBuffer ownership = encode(new StateOwnership(owners, weights));
        Map<String, Assignment> assignments = new HashMap<>();
        plan.forEach((memberId, ps) -> assignments.put(
                memberId,
                new Assignment(
                        ps.stream().map(p -> new TopicPartition(topic, p)).toList(), ownership.duplicate())));
        return new GroupAssignment(assignments);
    }

    @Override
    public void onAssignment(Assignment assignment, ConsumerGroupMetadata metadata) {
        if (assignment.userData() != null && assignment.userData().hasRemaining()) {
            member.assigned(decode(assignment.userData(), StateOwnership.class));
        }
    }

    private static ByteBuffer encode(Object value) {
        try {
            return ByteBuffer.wrap(JSON.writeValueAsBytes(value));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static <T> T decode(ByteBuffer buffer, Class<T> type) {
        ByteBuffer copy = buffer.duplicate();
        byte[] bytes = new byte[copy.remaining()];
        copy.get(bytes);
        try {
            return JSON.readValue(bytes, type);
        } catch (IOException e) {
            throw new IllegalArgumentException("not a Cluster Mirror state group message: " + e.getMessage(), e);
        }
    }
}
