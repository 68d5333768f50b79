package io.clustermirror.testbed;

import io.clustermirror.embedded.KafkaBrokerProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;

/**
 * A KRaft cluster of several nodes, each broker and controller in one process, with a {@link CuttingProxy} in front of
 * each node's client listener: clients reach the nodes only through the proxies (each node advertises its proxy's
 * port), while replication and the controller quorum use listeners of their own that no proxy sees. Topics default
 * to a replication factor of the node count and one fewer in-sync replicas ({@link KafkaBrokerProcess.Quorum}).
 */
public final class ReplicatedCluster implements AutoCloseable {

    private final String name;
    private final List<KafkaBrokerProcess> nodes;
    private final List<CuttingProxy> proxies;

    ReplicatedCluster(String name, Path dir, int size, String classpath) {
        this.name = name;
        List<CuttingProxy> proxies = new ArrayList<>();
        List<int[]> ports = new ArrayList<>(); // client, internal, controller
        try {
            for (int i = 0; i < size; i++) {
                proxies.add(new CuttingProxy());
                ports.add(new int[] {Ports.free(), Ports.free(), Ports.free()});
            }
        } catch (IOException e) {
            proxies.forEach(ReplicatedCluster::closeQuietly);
            throw new UncheckedIOException(e);
        }
        String clusterId = KafkaBrokerProcess.randomClusterId();
        StringBuilder voters = new StringBuilder();
        for (int i = 0; i < size; i++) {
            voters.append(i == 0 ? "" : ",").append(i + 1).append("@localhost:").append(ports.get(i)[2]);
        }
        List<KafkaBrokerProcess> nodes = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            int[] p = ports.get(i);
            proxies.get(i).forwardTo(p[0]);
            nodes.add(new KafkaBrokerProcess(
                    name + "-" + (i + 1),
                    dir.resolve("node-" + (i + 1)),
                    p[0],
                    p[2],
                    classpath,
                    Map.of(),
                    KafkaBrokerProcess.QUICK_START,
                    new KafkaBrokerProcess.Quorum(
                            clusterId,
                            i + 1,
                            voters.toString(),
                            p[1],
                            proxies.get(i).port())));
        }
        this.nodes = List.copyOf(nodes);
        this.proxies = List.copyOf(proxies);
    }

    /** Starts every node at once (the quorum forms only when a majority is up) and waits for their client listeners. */
    public ReplicatedCluster start(Duration timeout) {
        CompletableFuture.allOf(nodes.stream()
                        .map(node -> CompletableFuture.runAsync(() -> node.start(timeout)))
                        .toArray(CompletableFuture[]::new))
                .join();
        return this;
    }

    /** Through the proxies: what clients use. */
    public String bootstrapServers() {
        return proxies.stream().map(p -> "localhost:" + p.port()).collect(Collectors.joining(","));
    }

    public List<CuttingProxy> proxies() {
        return proxies;
    }

    public List<KafkaBrokerProcess> nodes() {
        return nodes;
    }

    public String name() {
        return name;
    }

    /**
     * Kills every node: the cluster's data is not read again, and a graceful stop one node after another would wait
     * out a minute on the last, whose controlled shutdown needs a quorum that its peers took down with them.
     */
    @Override
    public void close() {
        proxies.forEach(ReplicatedCluster::closeQuietly);
        nodes.forEach(KafkaBrokerProcess::kill);
    }

    private static void closeQuietly(CuttingProxy proxy) {
        try {
            proxy.close();
        } catch (IOException e) {
            // closing
        }
    }
}
