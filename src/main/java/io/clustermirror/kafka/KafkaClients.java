package io.clustermirror.kafka;

import io.clustermirror.config.MirrorServiceConfig;
import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.MirrorConfigRules;
import io.clustermirror.mirror.SourceAllowlist;
import io.smallrye.common.annotation.Identifier;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** The only place that builds Kafka clients: destination clients from {@code kafka.*}, source clients from a mirror's config. */
@ApplicationScoped
public class KafkaClients {

    /** The destination Admins' first retry back-off, unless {@code kafka.retry.backoff.ms} sets one. */
    static final int DESTINATION_ADMIN_RETRY_BACKOFF_MS = 10;

    private final Map<String, Object> destination;
    private final MirrorServiceConfig config;
    private final SourceConfigProviders configProviders;
    private final SourceAllowlist allowlist;
    private final MirrorMetrics metrics;
    /** The long-lived Admins built here, watched for a dead network thread (readiness reads their failures). */
    private final Set<SelfHealingAdmin> admins = ConcurrentHashMap.newKeySet();
    /** The mirrors' source Admins, one per distinct source connection. */
    private final SourceAdmins sourceAdmins = new SourceAdmins(this::longLivedSourceAdmin, Duration.ofSeconds(2));

    @Inject
    public KafkaClients(
            @Identifier("default-kafka-broker") Map<String, Object> destination,
            MirrorServiceConfig config,
            SourceConfigProviders configProviders,
            MirrorMetrics metrics) {
        this.metrics = metrics;
        this.destination = Map.copyOf(destination);
        this.config = config;
        this.configProviders = configProviders;
        this.allowlist = config.source().allowlist().map(SourceAllowlist::new).orElse(null);
    }

    /**
     * How a mirror reaches its source: its client settings with config-provider references resolved (INVALID_CONFIG
     * when one cannot be, when a resolved value is one the Kafka client would refuse, or when {@code bootstrap.servers}
     * is outside {@code mirror.source.allowlist}). The only way source settings
     * become a client.
     */
    public Map<String, String> sourceConnection(MirrorConfig mirrorConfig) {
        Map<String, String> resolved = configProviders.resolve(mirrorConfig.sourceClientProperties());
        SourceSettingsCheck.check(resolved, config.source().allowedClasses().orElse(Set.of()));
        if (allowlist != null) {
            SourceSettingsCheck.checkAllowed(allowlist, resolved.get(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG));
        }
        return resolved;
    }

    /** A short-lived destination Admin (closed by its caller), with a client id of its own. */
    public Admin destinationAdmin() {
        return Admin.create(destinationAdminProps("state-loader"));
    }

    /**
     * A long-lived destination Admin that replaces its client when the client's network thread dies
     * ({@link SelfHealingAdmin}); {@code role} names it (its client id is {@code cluster-mirror-<role>}).
     */
    public Admin longLivedDestinationAdmin(String role) {
        Map<String, Object> props = destinationAdminProps(role);
        return watched((String) props.get(AdminClientConfig.CLIENT_ID_CONFIG), () -> Admin.create(props));
    }

    private Map<String, Object> destinationAdminProps(String role) {
        return destinationAdminProps(
                destinationProps(role), config.destination().requestTimeoutMs());
    }

    /**
     * A destination Admin's settings: the request timeout as its call deadline too, and a first retry back-off of
     * {@value #DESTINATION_ADMIN_RETRY_BACKOFF_MS} ms unless {@code kafka.retry.backoff.ms} sets one. This service reads
     * the topics it has just created: CreateTopics is answered once the controller committed them, and the leaders
     * serve them tens of milliseconds later (the Admin retries what it is answered meanwhile). kafka-clients' default
     * first back-off (100 ms) made every topic start wait at least that long in LOG_TRUNCATION's look-up of the
     * destination's offsets (traced: 125-145 ms; 19-54 ms with this back-off). The back-off still doubles up to
     * {@code retry.backoff.max.ms} (1 s), so a lasting failure is asked about a few times more in its first second,
     * no more often after it. Pure.
     */
    static Map<String, Object> destinationAdminProps(Map<String, Object> props, int requestTimeoutMs) {
        Map<String, Object> admin = new HashMap<>(props);
        admin.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, requestTimeoutMs);
        admin.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, requestTimeoutMs);
        admin.putIfAbsent(AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, DESTINATION_ADMIN_RETRY_BACKOFF_MS);
        return admin;
    }

    private Admin watched(String clientId, Supplier<Admin> factory) {
        Admin admin = SelfHealingAdmin.create(clientId, factory, (client, reason) -> metrics.clientReplaced(client));
        SelfHealingAdmin handler = SelfHealingAdmin.of(admin);
        admins.add(handler);
        handler.onClose(() -> admins.remove(handler));
        return admin;
    }

    /** Long-lived clients whose network thread died and that could not be built again, each with the reason. */
    public List<String> clientFailures() {
        return admins.stream()
                .map(SelfHealingAdmin::failure)
                .filter(Objects::nonNull)
                .sorted()
                .toList();
    }

    /** A state partition's writer: transactional, so the instance that takes the partition over fences this one. */
    public KafkaProducer<byte[], byte[]> stateProducer(String transactionalId) {
        Map<String, Object> props = destinationProps("state-writer");
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        // a write gives up after the write timeout (waiting for metadata, a commit): see MirrorStateStore.write
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, config.state().writeTimeoutMs());
        props.put(
                ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, config.destination().requestTimeoutMs());
        props.put(
                ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG,
                Math.min(config.destination().requestTimeoutMs(), 30000));
        props.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    /**
     * A member of the state group: a consumer of the state topic that joins the group for its assignment only (it
     * fetches nothing). {@code group} carries the group id, the assignor and its settings.
     */
    public KafkaConsumer<byte[], byte[]> stateGroupMember(Map<String, Object> group) {
        Map<String, Object> props = destinationProps("state-group");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(
                ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
                config.destination().requestTimeoutMs());
        props.putAll(group);
        return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    /** A group-less consumer that reads committed state records only. */
    public KafkaConsumer<byte[], byte[]> stateReader() {
        return committedReader("state-reader");
    }

    private KafkaConsumer<byte[], byte[]> committedReader(String role) {
        Map<String, Object> props = destinationProps(role);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(
                ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
                config.destination().requestTimeoutMs());
        return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    /** A group-less consumer of the destination that reads committed records only (to preserve a divergent tail). */
    public KafkaConsumer<byte[], byte[]> destinationReader() {
        return committedReader("preservation-reader");
    }

    /**
     * A group-less consumer of the destination that reads a few records of a topic, uncommitted ones too, in small
     * fetches (to recognise another instance's state topic by its records).
     */
    public KafkaConsumer<byte[], byte[]> destinationSampler() {
        Map<String, Object> props = destinationProps("state-topic-check");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 64 * 1024);
        props.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, 1024 * 1024);
        props.put(
                ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
                config.destination().requestTimeoutMs());
        return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    /** An idempotent producer to the destination (to preserve a divergent tail). */
    public KafkaProducer<byte[], byte[]> destinationProducer() {
        Map<String, Object> props = destinationProps("preservation");
        int requestTimeoutMs = Math.min(config.destination().requestTimeoutMs(), 30000);
        int lingerMs = 5;
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, lingerMs);
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, config.destination().requestTimeoutMs());
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, requestTimeoutMs);
        // the producer refuses a delivery timeout below linger.ms + request.timeout.ms
        props.put(
                ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG,
                Math.max(config.destination().requestTimeoutMs(), requestTimeoutMs + lingerMs));
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    /** The destination's connection settings (bootstrap and security), for raw protocol clients. */
    public Map<String, Object> destinationConnection() {
        Map<String, Object> props = new HashMap<>(destination);
        props.keySet().retainAll(AdminClientConfig.configNames());
        return props;
    }

    /**
     * A mirror's share of the long-lived source Admin for its connection ({@link #sourceConnection}): mirrors whose
     * connections are equal share one, replaced when its network thread dies. Closing the share gives it back; the
     * Admin closes with the last share.
     */
    public SourceAdmins.Share sourceAdmin(String mirrorName, Map<String, String> connection) {
        return sourceAdmins.acquire(mirrorName, connection);
    }

    private Admin longLivedSourceAdmin(String clientId, Map<String, String> connection) {
        Map<String, Object> props = new HashMap<>(connection);
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, clientId);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, config.source().requestTimeoutMs());
        props.put(
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, config.source().requestTimeoutMs());
        return watched(clientId, () -> Admin.create(props));
    }

    /** An Admin client for a mirror's source cluster, with the mirror's security settings. */
    public Admin sourceAdmin(String mirrorName, MirrorConfig mirrorConfig) {
        Map<String, Object> props = new HashMap<>(sourceConnection(mirrorConfig));
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, "cluster-mirror-" + mirrorName + "-source-admin");
        int timeout = config.source().requestTimeoutMs();
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, timeout);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, timeout);
        props.put(AdminClientConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, Math.min(timeout, 10000));
        props.put(AdminClientConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, timeout);
        return Admin.create(props);
    }

    private Map<String, Object> destinationProps(String role) {
        Map<String, Object> props = new HashMap<>(destination);
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, "cluster-mirror-" + role);
        props.keySet().retainAll(clientKeys());
        return props;
    }

    private static Set<String> clientKeys() {
        Set<String> keys = new HashSet<>(AdminClientConfig.configNames());
        keys.addAll(ProducerConfig.configNames());
        keys.addAll(ConsumerConfig.configNames());
        return keys;
    }

    /** The mirror-config rules, fed with the Kafka client's own list of security settings. */
    @Produces
    @Singleton
    static MirrorConfigRules mirrorConfigRules() {
        Map<String, ConfigDef.ConfigKey> keys = AdminClientConfig.configDef().configKeys();
        Set<String> security = keys.keySet().stream()
                .filter(k -> k.startsWith("sasl.") || k.startsWith("ssl."))
                .collect(Collectors.toSet());
        Set<String> passwords = keys.values().stream()
                .filter(k -> k.type == ConfigDef.Type.PASSWORD)
                .map(k -> k.name)
                .collect(Collectors.toSet());
        return new MirrorConfigRules(security, passwords);
    }
}
