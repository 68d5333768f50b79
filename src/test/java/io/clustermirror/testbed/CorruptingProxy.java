package io.clustermirror.testbed;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A broken peer for fault tests: a TCP proxy in front of a Kafka broker that passes requests on as they are and, while
 * {@link #corrupt(boolean)} is on, answers with a wrong correlation id (the response's first four bytes after its
 * length), which kafka-clients' network client does not survive. Give the broker this proxy's port as its advertised
 * listener, so that every client connection goes through it. It also tells which clients hold connections through it
 * (the client id of each connection's first request after ApiVersions), for counting a client's connections to the
 * broker.
 */
public final class CorruptingProxy implements AutoCloseable {

    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicBoolean corrupting = new AtomicBoolean();
    private final AtomicInteger corrupted = new AtomicInteger();
    /** The client id of each open client connection, once its first request has passed. */
    private final Map<Socket, String> clientIds = new ConcurrentHashMap<>();

    private volatile int upstreamPort = -1;

    public CorruptingProxy() throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "corrupting-proxy-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public int port() {
        return server.getLocalPort();
    }

    /** Where connections go (set before the first client connects). */
    public void forwardTo(int port) {
        upstreamPort = port;
    }

    public void corrupt(boolean on) {
        corrupting.set(on);
    }

    /** How many connections through this proxy are open now whose client id is {@code clientId}. */
    public long openConnections(String clientId) {
        return clientIds.entrySet().stream()
                .filter(e -> !e.getKey().isClosed() && e.getValue().equals(clientId))
                .count();
    }

    /** Responses answered with a wrong correlation id so far. */
    public int corrupted() {
        return corrupted.get();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket(InetAddress.getLoopbackAddress(), upstreamPort);
                sockets.add(client);
                sockets.add(upstream);
                pump("requests", client.getInputStream(), upstream.getOutputStream(), false, client, upstream);
                pump("responses", upstream.getInputStream(), client.getOutputStream(), true, client, upstream);
            } catch (IOException e) {
                // closed, or the broker is not up: the client sees a disconnect
            }
        }
    }

    private void pump(String what, InputStream from, OutputStream to, boolean responses, Socket a, Socket b) {
        Thread thread = new Thread(
                () -> {
                    try (DataInputStream in = new DataInputStream(from);
                            DataOutputStream out = new DataOutputStream(to)) {
                        while (true) {
                            int size = in.readInt();
                            byte[] frame = new byte[size];
                            in.readFully(frame);
                            if (!responses && !clientIds.containsKey(a) && apiKey(frame) != API_VERSIONS) {
                                clientIds.put(a, clientId(frame));
                            }
                            if (responses && size >= 4 && corrupting.get()) {
                                frame[0] ^= 0x40; // another correlation id than the request's
                                corrupted.incrementAndGet();
                            }
                            out.writeInt(size);
                            out.write(frame);
                            out.flush();
                        }
                    } catch (IOException e) {
                        closeQuietly(a);
                        closeQuietly(b);
                        clientIds.remove(a);
                    }
                },
                "corrupting-proxy-" + what);
        thread.setDaemon(true);
        thread.start();
    }

    /** ApiVersions, which a network client sends first on each connection under its own client id. */
    private static final int API_VERSIONS = 18;

    private static int apiKey(byte[] request) {
        return request.length < 2 ? -1 : ((request[0] & 0xff) << 8) | (request[1] & 0xff);
    }

    /** A request header: api key (2 bytes), api version (2), correlation id (4), client id (2 bytes of length, then UTF-8). */
    private static String clientId(byte[] request) {
        if (request.length < 10) {
            return "";
        }
        int length = ((request[8] & 0xff) << 8) | (request[9] & 0xff);
        if (length == 0xffff || 10 + length > request.length) {
            return "";
        }
        return new String(request, 10, length, StandardCharsets.UTF_8);
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // closing
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        sockets.forEach(CorruptingProxy::closeQuietly);
    }
}
