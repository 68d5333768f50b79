package io.clustermirror.coordinator;

import io.clustermirror.config.MirrorServiceConfig;
import io.quarkus.runtime.LaunchMode;
import jakarta.enterprise.context.ApplicationScoped;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * This service instance: its id ({@code mirror.instance.id}) and advertised URL ({@code mirror.instance.advertised.url}),
 * and the members of its group as {@code GET /v1/instances} lists them. One instance serves a destination today
 * (README, "State, start-up and fencing"): it is the only member, owns every partition of the state topic and runs every
 * mirror. Several instances sharing the mirrors through Kafka's group protocol (issue 19) will list every member here.
 */
@ApplicationScoped
public class ServiceInstance {

    /** A member of the group: who it is, where it is reached, what it owns. */
    public record Member(String id, String url, List<Integer> statePartitions, int mirrors) {}

    /** How an instance is named and reached. */
    record Identity(String id, String url) {

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

        private static String hostAndPort(String url) {
            URI uri = URI.create(url);
            if (uri.getHost() == null) {
                return url;
            }
            int port = uri.getPort() >= 0 ? uri.getPort() : "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
            return uri.getHost() + ":" + port;
        }
    }

    private final Identity identity;
    private final MirrorCoordinator coordinator;

    public ServiceInstance(MirrorServiceConfig config, MirrorCoordinator coordinator) {
        this.coordinator = coordinator;
        this.identity =
                Identity.resolve(config.instance().id(), config.instance().advertisedUrl(), hostName(), httpPort());
    }

    /** This instance's id: what describe's {@code runningOn} names (this instance runs every mirror today). */
    public String id() {
        return identity.id();
    }

    /** The members of the group, this instance among them. */
    public List<Member> members() {
        List<Integer> owned = IntStream.range(0, coordinator.keeper().statePartitions())
                .boxed()
                .toList();
        return List.of(new Member(identity.id(), identity.url(), owned, coordinator.mirrorCount()));
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
}
