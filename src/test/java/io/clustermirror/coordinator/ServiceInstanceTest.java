package io.clustermirror.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class ServiceInstanceTest {

    @Test
    void byDefaultTheInstanceIsReachedAtItsHostNameAndHttpPortAndNamedByThem() {
        ServiceInstance.Identity identity =
                ServiceInstance.Identity.resolve(Optional.empty(), Optional.empty(), "cluster-mirror-0", 8080);

        assertThat(identity.url()).isEqualTo("http://cluster-mirror-0:8080");
        assertThat(identity.id()).isEqualTo("cluster-mirror-0:8080");
    }

    @Test
    void anAdvertisedUrlNamesTheInstanceByItsHostAndPort() {
        assertThat(ServiceInstance.Identity.resolve(
                                Optional.empty(),
                                Optional.of("https://mirror-1.mirror.svc.cluster.local"),
                                "ignored",
                                8080)
                        .id())
                .isEqualTo("mirror-1.mirror.svc.cluster.local:443");
        assertThat(ServiceInstance.Identity.resolve(
                                Optional.empty(), Optional.of("http://10.0.0.7:8080/"), "ignored", 9999)
                        .id())
                .isEqualTo("10.0.0.7:8080");
    }

    @Test
    void aConfiguredIdIsKeptAsItIsAndBlankValuesCountAsUnset() {
        assertThat(ServiceInstance.Identity.resolve(Optional.of(" dr-a "), Optional.of(" "), "host", 8080))
                .isEqualTo(new ServiceInstance.Identity("dr-a", "http://host:8080"));
    }
}
