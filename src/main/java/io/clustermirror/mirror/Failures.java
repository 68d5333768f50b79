package io.clustermirror.mirror;

import java.util.concurrent.CompletionException;

/** What a failure of a future is about. */
public final class Failures {

    private Failures() {}

    /** The cause a {@link CompletionException} wraps (what a dependent stage of a failed future completes with), else e. */
    public static Throwable unwrap(Throwable e) {
        return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    }
}
