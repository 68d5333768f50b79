package io.clustermirror.coordinator;

import io.clustermirror.config.MirrorServiceConfig;
import io.quarkus.runtime.LaunchMode;
import jakarta.enterprise.context.ApplicationScoped;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * This service instance: its id ({@code mirror.instance.id}) and advertised URL ({@code mirror.instance.advertised.url}),
 * the members of the state group as {@code GET /v1/instances} lists them, and which of them owns a mirror: the
 * instance that owns the mirror's state partition runs it and applies its requests (decisions §48).
 */
@ApplicationScoped
public class ServiceInstance {

    /** A member of the group: who it is, where it is reached, what it owns. */
    public record Member(String id, String url, List<Integer> statePartitions, int mirrors) {}

    /** How an instance is named and reached. */
    record Identity(String id, String url) {

        /** This instance's, from {@code mirror.instance.*}, the host name and the HTTP port. */
        static Identity of(MirrorServiceConfig config) {
            return resolve(config.instance().id(), config.instance().advertisedUrl(), hostName(), httpPort());
        }

        /**
         * The configured id and URL, else the URL from the host name and HTTP port, and the id from the URL's
         * {@code host:port}. Pure.
         */
        static Identity resolve(Optional<String> id, Optional<String> url, String hostName, int port) {
            String advertised =
                    url.map(String::strip).filter(u -> !u.isEmpty()).orElse("http://" + hostName + ":" + port);
            String named = id.map(String::strip).filter(i -> !i.isEmpty()).orElseGet(() -> hostAndPort(advertised));
            return new Identity(named, advertised);
        }

        private static String hostName() {
            try {
                return InetAddress.getLocalHost().getHostName();
            } catch (UnknownHostException e) {
                return "localhost";
            }
        }

        private static int httpPort() {
            String key = LaunchMode.current() == LaunchMode.TEST ? "quarkus.http.test-port" : "quarkus.http.port";
            return ConfigProvider.getConfig()
                    .getOptionalValue(key, Integer.class)
                    .orElse(LaunchMode.current() == LaunchMode.TEST ? 8081 : 8080);
        }

        private static String hostAndPort(String url) {
            URI uri = URI.create(url);
            if (uri.getHost() == null) {
                return url;
            }
            int port = uri.getPort() >= 0 ? uri.getPort() : "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
            return uri.getHost() + ":" + port;
        }
    }

    private final MirrorCoordinator coordinator;

    public ServiceInstance(MirrorCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    /** This instance's id: what describe's {@code runningOn} names. */
    public String id() {
        return coordinator.held().identity().id();
    }

    /** This instance's advertised URL. */
    public String url() {
        return coordinator.held().identity().url();
    }

    /**
     * The members of the state group as last assigned, this instance among them (alone before its first assignment):
     * each with its state partitions and mirrors, this instance's counted now, the others' as they last reported them.
     */
    public List<Member> members() {
        StateOwnership ownership = coordinator.held().ownership();
        List<Member> members = new ArrayList<>();
        boolean self = false;
        for (StateOwnership.Owner owner : ownership.members()) {
            List<Integer> partitions = owner.partitions().stream().sorted().toList();
            if (owner.id().equals(id())) {
                self = true;
                members.add(new Member(owner.id(), owner.url(), partitions, coordinator.mirrorCount()));
            } else {
                int mirrors = partitions.stream()
                        .mapToInt(p -> ownership.weights().getOrDefault(p, 0))
                        .sum();
                members.add(new Member(owner.id(), owner.url(), partitions, mirrors));
            }
        }
        if (!self) {
            members.add(0, new Member(id(), url(), List.of(), coordinator.mirrorCount()));
        }
        return members;
    }

    /** Where a mirror's requests are applied: the owner of its state partition, if any owns it now. */
    public Optional<StateOwnership.Owner> ownerOf(String mirror) {
        int partition = coordinator.held().statePartitionOf(mirror);
        return partition < 0 ? Optional.empty() : coordinator.held().ownership().ownerOf(partition);
    }

    /** Where service settings changed at runtime are written: the owner of their state partition. */
    public Optional<StateOwnership.Owner> ownerOfServiceConfigs() {
        return ownerOf("");
    }

    /** Whether this instance applies the mirror's requests. */
    public boolean owns(String mirror) {
        return ownerOf(mirror).map(o -> o.id().equals(id())).orElse(false);
    }
}
