package io.clustermirror.testbed;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A broken peer for fault tests: a TCP proxy in front of a Kafka broker that passes requests on as they are and, while
 * {@link #corrupt(boolean)} is on, answers with a wrong correlation id (the response's first four bytes after its
 * length), which kafka-clients' network client does not survive. Give the broker this proxy's port as its advertised
 * listener, so that every client connection goes through it.
 */
public final class CorruptingProxy implements AutoCloseable {

    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicBoolean corrupting = new AtomicBoolean();
    private final AtomicInteger corrupted = new AtomicInteger();
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
                    }
                },
                "corrupting-proxy-" + what);
        thread.setDaemon(true);
        thread.start();
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
