package io.clustermirror.mirror;

import java.util.concurrent.CompletionException;

/** What a failure of a future is about. */
public final class Failures {

    private Failures() {}

    /** The cause a {@link CompletionException} wraps (what a dependent stage of a failed future completes with), else e. */
    public static Throwable unwrap(Throwable e) {
        return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    }

    /** Whether the failure or one of its causes (however deeply wrapped) is of one of these kinds. */
    @SafeVarargs
    public static boolean causedBy(Throwable failure, Class<? extends Throwable>... kinds) {
        for (Throwable e = failure; e != null; e = e.getCause() == e ? null : e.getCause()) {
            for (Class<? extends Throwable> kind : kinds) {
                if (kind.isInstance(e)) {
                    return true;
                }
            }
        }
        return false;
    }
}
