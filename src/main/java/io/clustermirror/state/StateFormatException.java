package io.clustermirror.state;

/** A {@code __mirror_state} record or the topic itself is not what this version of the service can use. */
public class StateFormatException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public StateFormatException(String message) {
        super(message);
    }

    public StateFormatException(String message, Throwable cause) {
        super(message, cause);
    }
}
