package io.clustermirror.testbed;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

public final class Ports {

    private Ports() {}

    private static final int LOWEST = 20000;
    private static final int HIGHEST = 32000;

    private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();

    /**
     * This JVM's slice of {@code [LOWEST, HIGHEST)}: the integration tests run in several forks side by side
     * ({@code testbed.fork} of {@code testbed.forks}, numbered from 1), and a port one fork checked and handed to a
     * child process that has not bound it yet must not look free to another.
     */
    private static final int[] SLICE = slice(
            number("testbed.fork", System.getProperty("testbed.fork")),
            number("testbed.forks", System.getProperty("testbed.forks")));

    /** The property's number, 1 when it is not set (one JVM alone); anything else fails the run rather than share ports. */
    static int number(String name, String value) {
        if (value == null) {
            return 1;
        }
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a number, not '" + value + "'", e);
        }
    }

    static int[] slice(int fork, int forks) {
        if (forks < 1 || fork < 1 || fork > forks) {
            throw new IllegalArgumentException("fork " + fork + " of " + forks);
        }
        int width = (HIGHEST - LOWEST) / forks;
        return new int[] {LOWEST + (fork - 1) * width, LOWEST + fork * width};
    }

    /**
     * A free port below the kernel's ephemeral range (32768+), so that no outgoing connection can take it in
     * the seconds before the child process binds it, never the same one twice in a run, and in this fork's slice.
     */
    public static int free() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 1000; attempt++) {
            int port = random.nextInt(SLICE[0], SLICE[1]);
            if (!HANDED_OUT.add(port)) {
                continue;
            }
            try (ServerSocket socket = new ServerSocket(port)) {
                return socket.getLocalPort();
            } catch (IOException taken) {
                // try another
            }
        }
        throw new UncheckedIOException(new IOException("no free port found in " + SLICE[0] + "-" + (SLICE[1] - 1)));
    }
}
