package io.clustermirror.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.clustermirror.testbed.ServiceProcess;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;

/**
 * Issue 12: a mirror's inline secrets in {@code __mirror_state}: written in clear without a key, sealed (AES-256-GCM)
 * once a key is given, unreadable without it (the service names the mirror and refuses to start), and moved to a new
 * key by a rotation.
 */
class StateEncryptionIT extends ServiceIT {

    private static final String STATE = "__mirror_state_enc";
    private static final String SECRET = "enc-s3cret-value";
    private static final String JAAS =
            "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"" + SECRET
                    + "\";";

    @Test
    void secretsShouldBeSealedUnreadableWithoutTheKeyAndMovedByARotation() throws Exception {
        byte[] k1 = key();
        byte[] k2 = key();
        String mirror = "enc-m";

        // Given a mirror created while no key was given: its secret is in the state topic in clear
        ServiceProcess clear = service("enc-clear", Map.of()).start();
        try {
            new AccessMatrix(HttpClient.newHttpClient(), clear.baseUri())
                    .createMirror(mirror, bed.source().bootstrapServers(), Map.of("sasl.jaas.config", JAAS), r -> r);
        } finally {
            clear.stop();
        }
        assertThat(stateRecord(mirror).toString()).contains(SECRET);

        // When the service starts with a key: the record is written again, sealed
        ServiceProcess sealing = service("enc-k1", Map.of("mirror.state.encryption.keys", "k1:" + b64(k1)))
                .start();
        sealing.stop();
        JsonNode sealed = stateRecord(mirror);
        assertThat(sealed.toString()).doesNotContain(SECRET);
        assertThat(sealed.path("v").asInt()).isEqualTo(2);
        assertThat(sealed.path("config").has("sasl.jaas.config")).isFalse();
        assertThat(sealed.path("sealed").path("sasl.jaas.config").path("keyId").asText())
                .isEqualTo("k1");
        assertThat(open(k1, mirror, sealed))
                .as("AES-GCM under k1, bound to the mirror and key")
                .isEqualTo(JAAS);
        assertThat(sealing.log()).contains("Sealed the secrets of 1 mirror(s) with state encryption key 'k1': [enc-m]");

        // Then without the key the service names the mirror and refuses to start
        ServiceProcess keyless = service("enc-none", Map.of()).launch();
        try {
            assertThat(keyless.waitFor(Duration.ofSeconds(90))).isEqualTo(1);
            assertThat(keyless.log().lines().filter(l -> l.contains(" ERROR ")))
                    .singleElement()
                    .asString()
                    .contains("enc-m")
                    .contains("[k1]")
                    .contains("mirror.state.encryption.keys");
        } finally {
            keyless.stop();
        }

        // and a rotation (the new key first, the old one kept) seals it again with the new key
        ServiceProcess rotating = service(
                        "enc-k2k1", Map.of("mirror.state.encryption.keys", "k2:" + b64(k2) + ",k1:" + b64(k1)))
                .start();
        rotating.stop();
        JsonNode rotated = stateRecord(mirror);
        assertThat(rotated.path("sealed").path("sasl.jaas.config").path("keyId").asText())
                .isEqualTo("k2");
        assertThat(open(k2, mirror, rotated)).isEqualTo(JAAS);

        // after which the new key alone, from a key file, reads it
        Path keyFile = Files.createTempFile("state-keys", ".txt");
        Files.writeString(keyFile, "k2:" + b64(k2) + "\n");
        ServiceProcess rotated2 = service("enc-k2", Map.of("mirror.state.encryption.key.file", keyFile.toString()))
                .start();
        try {
            assertThat(new AccessMatrix(HttpClient.newHttpClient(), rotated2.baseUri())
                            .call("GET", "/v1/mirrors/" + mirror, null, r -> r)
                            .body())
                    .contains("\"sasl.jaas.config\":\"[hidden]\"")
                    .doesNotContain(SECRET);
            assertThat(rotated2.log()).doesNotContain("Sealed the secrets").doesNotContain(SECRET);
        } finally {
            rotated2.stop();
        }
    }

    private static ServiceProcess service(String name, Map<String, String> extra) {
        Map<String, String> props = new HashMap<>(extra);
        props.put("mirror.state.topic.name", STATE);
        props.put("mirror.state.topic.num.partitions", "1");
        return bed.newService(name, props);
    }

    private static byte[] key() {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        return key;
    }

    private static String b64(byte[] bytes) {
        return Base64.getEncoder().encodeToString(bytes);
    }

    /** The value of the mirror's latest record in the state topic, as stored. */
    private static JsonNode stateRecord(String mirror) throws Exception {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bed.destination().bootstrapServers());
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        AtomicReference<JsonNode> latest = new AtomicReference<>();
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            Kafka.readToEnd(consumer, List.of(new TopicPartition(STATE, 0)), Duration.ofSeconds(30), record -> {
                JsonNode key = AccessMatrix.JSON.readTree(record.key());
                if ("mirror".equals(key.path("kind").asText())
                        && mirror.equals(key.path("mirror").asText())
                        && record.value() != null) {
                    latest.set(AccessMatrix.JSON.readTree(record.value()));
                }
            });
        }
        assertThat(latest.get()).as("record of " + mirror).isNotNull();
        return latest.get();
    }

    /** Opens a sealed value with the JDK, as the service does: IV, then ciphertext and tag; bound to mirror and key. */
    private static String open(byte[] key, String mirror, JsonNode record) throws Exception {
        byte[] bytes = Base64.getDecoder()
                .decode(record.path("sealed")
                        .path("sasl.jaas.config")
                        .path("data")
                        .asText());
        Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
        cipher.init(Cipher.DECRYPT_MODE, new SecretKeySpec(key, "AES"), new GCMParameterSpec(128, bytes, 0, 12));
        cipher.updateAAD(("cluster-mirror/" + mirror + "/sasl.jaas.config").getBytes(StandardCharsets.UTF_8));
        return new String(cipher.doFinal(bytes, 12, bytes.length - 12), StandardCharsets.UTF_8);
    }
}
