package io.clustermirror.fetch;

/**
 * Whether this instance may append to the destination now: it is a member of its state group and has recently heard so
 * from the group coordinator. The data plane sends no Produce, InitProducerId or transaction request while it is not
 * valid, so an instance that was paused past its session timeout (a long GC pause, SIGSTOP, a frozen VM) sends nothing
 * when it runs again until it knows it still owns its mirrors; it learns that it does not, and gives them up, through
 * its state group (decisions §48). Read on the fetchers' threads: must be cheap and never block.
 */
@FunctionalInterface
public interface AppendLease {

    /** A lease that always holds (unit tests of the data plane). */
    AppendLease ALWAYS = () -> true;

    boolean valid();
}
