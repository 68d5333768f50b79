package io.clustermirror.testbed;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy in front of one Kafka broker's client listener that cuts connections on demand, for fault tests of lost
 * answers: {@link #cut(Random)} closes one client connection abruptly (a reset, both directions), either at once or
 * when it carries the next Produce request. That request is then held back and handed to the broker later, on a
 * connection of its own, as a request still queued on a busy broker is handled after its client has gone: the batch
 * lands, its answer is lost, and it lands after whatever the client did meanwhile. Requests are read frame by frame (to
 * see their API key); answers are copied as they come. Give the broker this proxy's port as its advertised client
 * listener, so that every client connection goes through it. It also counts the requests it passes on, by API key.
 */
public final class CuttingProxy implements AutoCloseable {

    private static final short PRODUCE = 0;
    /** How late a held-back Produce reaches the broker, at most. */
    private static final int MAX_LATE_MS = 500;

    /** One client connection and its connection to the broker. */
    private record Link(Socket client, Socket upstream, AtomicBoolean gone) {}

    private final ServerSocket server;
    private final List<Link> links = new CopyOnWriteArrayList<>();
    private final AtomicBoolean cutAfterNextProduce = new AtomicBoolean();
    private final AtomicInteger cuts = new AtomicInteger();
    private final AtomicInteger cutsAfterProduce = new AtomicInteger();
    private final AtomicInteger lateProduces = new AtomicInteger();
    /** Requests passed on so far, by API key. */
    private final Map<Short, AtomicInteger> requests = new ConcurrentHashMap<>();
    /** Where held-back Produce requests wait for their late delivery. */
    private final ScheduledExecutorService late = Executors.newScheduledThreadPool(4, r -> {
        Thread thread = new Thread(r, "cutting-proxy-late");
        thread.setDaemon(true);
        return thread;
    });

    private volatile int upstreamPort = -1;

    public CuttingProxy() throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "cutting-proxy-" + server.getLocalPort());
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

    /**
     * Cuts one connection: half the time a random open one at once, else the one that passes on the next Produce
     * request, just after it has (the broker appends a batch whose answer is lost).
     */
    public void cut(Random random) {
        if (random.nextBoolean()) {
            cutAfterNextProduce.set(true);
            return;
        }
        List<Link> open = links.stream().filter(l -> !l.gone().get()).toList();
        if (!open.isEmpty()) {
            reset(open.get(random.nextInt(open.size())));
            cuts.incrementAndGet();
        }
    }

    /** Connections cut so far, at a random moment and at a Produce. */
    public int cuts() {
        return cuts.get() + cutsAfterProduce.get();
    }

    /** Connections cut at a Produce, whose request was held back. */
    public int cutsAfterProduce() {
        return cutsAfterProduce.get();
    }

    /** Held-back Produce requests the broker has answered (the answers are dropped). */
    public int lateProduces() {
        return lateProduces.get();
    }

    /** Requests of the given API key (kafka-clients' {@code ApiKeys.id}) that passed through so far, on any connection. */
    public int requests(short apiKey) {
        AtomicInteger count = requests.get(apiKey);
        return count == null ? 0 : count.get();
    }

    /** No cut is waiting for a Produce any more. */
    public void stopCutting() {
        cutAfterNextProduce.set(false);
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket(InetAddress.getLoopbackAddress(), upstreamPort);
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                Link link = new Link(client, upstream, new AtomicBoolean());
                links.removeIf(l -> l.gone().get());
                links.add(link);
                start("requests", () -> requests(link));
                start("answers", () -> answers(link));
            } catch (IOException e) {
                // closed, or the broker is not up: the client sees a disconnect
            }
        }
    }

    private static void start(String what, Runnable pump) {
        Thread thread = new Thread(pump, "cutting-proxy-" + what);
        thread.setDaemon(true);
        thread.start();
    }

    /** Passes requests on frame by frame; a Produce while a cut waits for one is followed by the cut. */
    private void requests(Link link) {
        try {
            DataInputStream in = new DataInputStream(link.client().getInputStream());
            OutputStream out = link.upstream().getOutputStream();
            while (true) {
                int size = in.readInt();
                byte[] frame = new byte[4 + size];
                ByteBuffer.wrap(frame).putInt(size);
                in.readFully(frame, 4, size);
                short apiKey = ByteBuffer.wrap(frame).getShort(4); // the request header's first field
                requests.computeIfAbsent(apiKey, k -> new AtomicInteger()).incrementAndGet();
                if (apiKey == PRODUCE && cutAfterNextProduce.compareAndSet(true, false)) {
                    reset(link);
                    cutsAfterProduce.incrementAndGet();
                    deliverLate(frame, ThreadLocalRandom.current().nextInt(MAX_LATE_MS + 1));
                    return;
                }
                out.write(frame);
                out.flush();
            }
        } catch (IOException | RuntimeException e) {
            close(link);
        }
    }

    /** Hands a request to the broker on a connection of its own after {@code delayMs}, and waits for its answer. */
    private void deliverLate(byte[] frame, int delayMs) {
        late.schedule(() -> deliver(frame), delayMs, TimeUnit.MILLISECONDS);
    }

    private void deliver(byte[] frame) {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), upstreamPort)) {
            socket.setSoTimeout(30_000);
            socket.getOutputStream().write(frame);
            socket.getOutputStream().flush();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            in.readFully(new byte[in.readInt()]);
            lateProduces.incrementAndGet();
        } catch (IOException e) {
            // the broker is gone or did not answer: the request may or may not have been handled
        }
    }

    private void answers(Link link) {
        byte[] buffer = new byte[64 * 1024];
        try {
            InputStream in = link.upstream().getInputStream();
            OutputStream out = link.client().getOutputStream();
            int read;
            while ((read = in.read(buffer)) >= 0) {
                out.write(buffer, 0, read);
                out.flush();
            }
        } catch (IOException e) {
            // cut, or closed by either end
        }
        close(link);
    }

    /** An abrupt close: a TCP reset to both ends, nothing in flight delivered any more. */
    private static void reset(Link link) {
        abort(link.client());
        abort(link.upstream());
        close(link);
    }

    /** Makes the socket's close a reset. */
    private static void abort(Socket socket) {
        try {
            socket.setSoLinger(true, 0);
        } catch (IOException e) {
            // already closed
        }
    }

    private static void close(Link link) {
        link.gone().set(true);
        closeQuietly(link.client());
        closeQuietly(link.upstream());
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
        late.shutdownNow();
        server.close();
        links.forEach(CuttingProxy::close);
    }
}
