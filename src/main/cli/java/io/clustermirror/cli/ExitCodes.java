package io.clustermirror.cli;

/** The exit codes of {@code kafka-cluster-mirrors} (README "Command-line tool"). */
final class ExitCodes {

    /** Done. */
    static final int OK = 0;

    /**
     * The service refused: a problem+json answer (its errorCode on stderr), another HTTP error, or a topic of a topic
     * verb that failed (the others may have succeeded).
     */
    static final int REFUSED = 1;

    /** The command line: an unknown option, a missing one, an option the action does not take, an unreadable file. */
    static final int USAGE = 2;

    /** The service could not be reached or did not answer: connection refused, unknown host, TLS, timeout. */
    static final int UNREACHABLE = 3;

    private ExitCodes() {}
}
