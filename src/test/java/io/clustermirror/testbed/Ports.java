package io.clustermirror.testbed;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

public final class Ports {

    private Ports() {}

    private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();

    /**
     * A free port below the kernel's ephemeral range (32768+), so that no outgoing connection can take it in
     * the seconds before the child process binds it, and never the same one twice in a run.
     */
    public static int free() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 1000; attempt++) {
            int port = random.nextInt(20000, 32000);
            if (!HANDED_OUT.add(port)) {
                continue;
            }
            try (ServerSocket socket = new ServerSocket(port)) {
                return socket.getLocalPort();
            } catch (IOException taken) {
                // try another
            }
        }
        throw new UncheckedIOException(new IOException("no free port found in 20000-32000"));
    }
}
