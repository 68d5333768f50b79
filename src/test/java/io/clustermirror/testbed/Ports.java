package io.clustermirror.testbed;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;

final class Ports {

    private Ports() {
    }

    static int free() {
        try (ServerSocket socket = new ServerSocket(0)) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
