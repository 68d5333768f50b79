package io.clustermirror.embedded;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * Entry point of a child JVM (a local Kafka broker) that must not outlive the process that started
 * it: when its stdin pipe closes (the parent exited, even by kill -9) it exits too, running its
 * shutdown hooks. Usage: {@code ParentWatchdog <main class> [args...]}.
 */
public final class ParentWatchdog {

    private ParentWatchdog() {}

    public static void main(String[] args) throws Exception {
        Thread watchdog = new Thread(
                () -> {
                    try {
                        InputStream in = System.in;
                        while (in.read() != -1) {
                            // the parent writes nothing; EOF means it is gone
                        }
                    } catch (IOException ignored) {
                        // a broken pipe means the same as EOF
                    }
                    System.exit(0);
                },
                "parent-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        Class.forName(args[0]).getMethod("main", String[].class).invoke(null, (Object)
                Arrays.copyOfRange(args, 1, args.length));
    }
}
