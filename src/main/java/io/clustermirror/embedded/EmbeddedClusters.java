package io.clustermirror.embedded;

import io.clustermirror.config.ControlPlaneMechanisms;
import io.clustermirror.coordinator.MirrorCoordinator;
import io.quarkus.arc.profile.IfBuildProfile;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * The embedded default of {@code ./mvnw quarkus:dev}: two local single-node Kafka clusters, "source"
 * (localhost:19092, with a small {@code demo.orders} topic) and "destination" (localhost:29092, where
 * this service keeps its state). They survive live reloads and exit with the dev-mode JVM.
 */
@ApplicationScoped
@IfBuildProfile("dev")
public class EmbeddedClusters {

    private static final Logger LOGGER = Logger.getLogger(EmbeddedClusters.class);
    public static final String DEMO_TOPIC = "demo.orders";

    @ConfigProperty(name = "quarkus.http.port", defaultValue = "8080")
    int httpPort;

    @Inject
    MirrorCoordinator coordinator;

    void onStart(@Observes StartupEvent event) {
        Thread starter = new Thread(this::startClusters, "embedded-clusters");
        starter.setDaemon(true);
        starter.start();
    }

    private void startClusters() {
        try {
            String classpath = KafkaBrokerProcess.classpathFrom(Path.of("target", "kafka-broker.classpath"));
            Path root = Path.of("target", "embedded-kafka");
            KafkaBrokerProcess source =
                    new KafkaBrokerProcess("source", root.resolve("source"), 19092, 19093, classpath, Map.of());
            KafkaBrokerProcess destination = new KafkaBrokerProcess(
                    "destination", root.resolve("destination"), 29092, 29093, classpath, Map.of());
            for (KafkaBrokerProcess broker : List.of(source, destination)) {
                if (!listening(broker)) {
                    broker.start(Duration.ofSeconds(90));
                }
            }
            createDemoTopic(source.bootstrapServers());
            awaitCoordinator();
            LOGGER.infof(
                    """

                    Embedded Kafka clusters are up and Cluster Mirror is ready:
                      source       %s   (topic %s)
                      destination  %s   (this service's cluster)
                    Swagger UI:    http://localhost:%d/q/swagger-ui
                    Control plane: %s
                    Create a mirror: POST /v1/mirrors {"name":"demo","config":{"bootstrap.servers":"%s"}}
                    """,
                    source.bootstrapServers(),
                    DEMO_TOPIC,
                    destination.bootstrapServers(),
                    httpPort,
                    controlPlane(),
                    source.bootstrapServers());
        } catch (Exception e) {
            LOGGER.errorf(e, "Could not start the embedded Kafka clusters: %s", e.getMessage());
        }
    }

    /** What the banner says of the control plane: open in dev mode unless a mechanism is configured. */
    private static String controlPlane() {
        List<String> mechanisms = ControlPlaneMechanisms.configured(ConfigProvider.getConfig());
        return mechanisms.isEmpty()
                ? "OPEN (dev mode: no authentication; the prod profile refuses to start like this, README \"Security\")"
                : "authentication by " + String.join(", ", mechanisms);
    }

    private void awaitCoordinator() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (!coordinator.status().isActive() && System.nanoTime() < deadline) {
            Thread.sleep(200);
        }
    }

    private static boolean listening(KafkaBrokerProcess broker) {
        try (Admin admin = Admin.create(Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrapServers(),
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
                1000,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG,
                1000))) {
            admin.describeCluster().clusterId().get(1500, TimeUnit.MILLISECONDS);
            return true;
        } catch (Exception e) {
            return false;
        }
    }

    private static void createDemoTopic(String bootstrap) throws InterruptedException, ExecutionException {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            if (admin.listTopics().names().get().contains(DEMO_TOPIC)) {
                return;
            }
            admin.createTopics(Set.of(new NewTopic(DEMO_TOPIC, 3, (short) 1)))
                    .all()
                    .get();
        }
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(
                Map.of(
                        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                        bootstrap,
                        ProducerConfig.COMPRESSION_TYPE_CONFIG,
                        "lz4"),
                new StringSerializer(),
                new StringSerializer())) {
            for (int i = 0; i < 1000; i++) {
                ProducerRecord<String, String> record = new ProducerRecord<>(
                        DEMO_TOPIC, "order-" + i, "{\"order\":" + i + ",\"amount\":" + (i % 97) + "}");
                record.headers().add("source", "demo".getBytes(StandardCharsets.UTF_8));
                producer.send(record);
            }
        }
    }
}
