package io.clustermirror.cli;

/** Input the CLI refuses before calling the service (exit code 2): a wrong combination of options, a bad file. */
final class UsageException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    UsageException(String message) {
        super(message);
    }
}
