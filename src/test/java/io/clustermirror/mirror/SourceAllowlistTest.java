package io.clustermirror.mirror;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.util.List;
import org.junit.jupiter.api.Test;

class SourceAllowlistTest {

    @Test
    void hostPatternsShouldMatchNameAndPort() {
        SourceAllowlist allowlist = new SourceAllowlist(List.of("kafka-*.prod.example.com:9093", "localhost"));

        assertThat(allowlist.matchesHost("kafka-1.prod.example.com", 9093)).isTrue();
        assertThat(allowlist.matchesHost("KAFKA-1.prod.example.com", 9093)).isTrue();
        assertThat(allowlist.matchesHost("kafka-1.prod.example.com", 9092))
                .as("other port")
                .isFalse();
        assertThat(allowlist.matchesHost("kafka-1.evil.prod.example.com", 9093))
                .as("* stays within one label")
                .isFalse();
        assertThat(allowlist.matchesHost("localhost", 1234)).as("no port: any").isTrue();
        assertThat(allowlist.hasBlocks()).isFalse();
    }

    @Test
    void v6AddressesShouldBeWrittenAsKafkaWritesThem() {
        SourceAllowlist allowlist = new SourceAllowlist(List.of("[::1]:9092", "fd00::5"));

        // Kafka's Utils.getHost("[::1]:9092") is "::1": the brackets are not part of the host compared
        assertThat(allowlist.matchesHost("::1", 9092)).isTrue();
        assertThat(allowlist.matchesHost("::1", 9093)).isFalse();
        assertThat(allowlist.matchesHost("fd00::5", 1234)).as("bare: any port").isTrue();
    }

    @Test
    void cidrBlocksShouldHoldEveryResolvedAddress() throws Exception {
        SourceAllowlist allowlist = new SourceAllowlist(List.of("10.0.0.0/8", "192.168.1.0/24", "fd00::/8"));

        assertThat(allowlist.inBlocks(List.of(InetAddress.getByName("10.1.2.3"))))
                .isTrue();
        assertThat(allowlist.inBlocks(List.of(InetAddress.getByName("192.168.1.77"))))
                .isTrue();
        assertThat(allowlist.inBlocks(List.of(InetAddress.getByName("192.168.2.1"))))
                .isFalse();
        assertThat(allowlist.inBlocks(List.of(InetAddress.getByName("fd12::1"))))
                .isTrue();
        assertThat(allowlist.inBlocks(List.of(InetAddress.getByName("10.1.2.3"), InetAddress.getByName("8.8.8.8"))))
                .as("every address")
                .isFalse();
        assertThat(allowlist.inBlocks(List.of())).isFalse();
    }

    @Test
    void malformedEntriesShouldBeNamed() {
        assertThatThrownBy(() -> new SourceAllowlist(List.of("10.0.0.0/33"))).hasMessageContaining("10.0.0.0/33");
        assertThatThrownBy(() -> new SourceAllowlist(List.of("host:port"))).hasMessageContaining("host:port");
        assertThatThrownBy(() -> new SourceAllowlist(List.of("a b:1"))).hasMessageContaining("a b:1");
        assertThatThrownBy(() -> new SourceAllowlist(List.of("dead.beef/16")))
                .as("a name, not an address: no DNS lookup for a block")
                .hasMessageContaining("dead.beef/16");
    }
}
