package io.clustermirror.coordinator;

import io.clustermirror.mirror.MirrorException;
import io.clustermirror.state.MirrorStateStore.Changes;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.jboss.logging.Logger;

/**
 * Group commit of the coordinator's state (decisions §37): the changes of one coordinator tick go to {@code
 * __mirror_state} in one transaction. A change is applied at once to the working state, which the coordinator thread
 * decides on, and queued; the first change of a tick queues a flush behind the tasks already waiting, so every task of
 * the tick adds its changes first, then one transaction commits them all, and only then the committed state, which the
 * other threads read, is swapped in and what waited for the commit runs, in the order it was queued. A request's
 * change is flushed at once ({@link #flush}), taking the tick's other changes with it, so the request is answered only
 * after its change committed. A flush that fails leaves the working state equal to the committed one, runs nothing
 * that waited, and answers what {@link Failures} makes of the failure: the same for every change in it.
 *
 * <p>Coordinator thread only, except {@link #state()}, which any thread may call.
 */
final class GroupCommit {

    private static final Logger LOGGER = Logger.getLogger(GroupCommit.class);

    /** Writes the changes in one transaction; throws when they are not confirmed. */
    @FunctionalInterface
    interface Store {
        void write(Changes changes);
    }

    /** What a failed write means (a re-read, a fenced instance), handled once per flush: the answer to its writers. */
    @FunctionalInterface
    interface Failures {
        MirrorException failed(RuntimeException cause);

        /** A flush that succeeded. */
        default void committed() {}
    }

    private final CoordinatorThread thread;
    private final Store store;
    private final Failures failures;

    private volatile CoordinatorState committed = CoordinatorState.EMPTY;
    /** Committed plus the changes not yet flushed. */
    private CoordinatorState working = CoordinatorState.EMPTY;

    private Changes pending = new Changes();
    private List<Waiter> waiting = new ArrayList<>();
    private boolean flushQueued;

    private record Waiter(String what, Runnable action) {}

    GroupCommit(CoordinatorThread thread, Store store, Failures failures) {
        this.thread = thread;
        this.store = store;
        this.failures = failures;
    }

    /**
     * On the coordinator thread the working state (its own changes seen at once, as each task expects); on any other
     * thread the committed state (never what the topic may not hold).
     */
    CoordinatorState state() {
        return thread.isCurrent() ? working : committed;
    }

    /** The state as loaded or re-read: nothing is pending. */
    void reset(CoordinatorState state) {
        pending = new Changes();
        waiting = new ArrayList<>();
        committed = state;
        working = state;
    }

    /**
     * Adopts what another instance wrote (nothing for this one to write): in the committed state and the working one
     * alike, pending changes kept.
     */
    void adopt(UnaryOperator<CoordinatorState> written) {
        committed = written.apply(committed);
        working = written.apply(working);
    }

    /**
     * Applies the change to the working state and queues its records for this tick's transaction; {@code then} runs
     * on the coordinator thread once they committed (never, if they did not).
     */
    void change(Consumer<Changes> records, UnaryOperator<CoordinatorState> applied, String what, Runnable then) {
        records.accept(pending);
        working = applied.apply(working);
        if (then != null) {
            waiting.add(new Waiter(what, then));
        }
        if (!flushQueued) {
            flushQueued = true;
            thread.run("state flush", this::flushQueued);
        }
    }

    private void flushQueued() {
        flushQueued = false;
        try {
            flush();
        } catch (MirrorException e) {
            // the failure was handled and logged once, in Failures; nothing here has a caller to answer
        }
    }

    /**
     * Writes what is pending in one transaction, then runs what waited for it.
     *
     * @throws MirrorException the answer to every change in it when the write failed
     */
    void flush() {
        Changes changes = pending;
        List<Waiter> after = waiting;
        pending = new Changes();
        waiting = new ArrayList<>();
        if (!changes.isEmpty()) {
            try {
                store.write(changes);
            } catch (RuntimeException e) {
                working = committed;
                throw failures.failed(e);
            }
            failures.committed();
            committed = working;
        }
        for (Waiter waiter : after) {
            try {
                waiter.action().run();
            } catch (RuntimeException e) {
                LOGGER.errorf(e, "Coordinator task failed after its state write: %s", waiter.what());
            }
        }
    }

    /** Changes written but not yet flushed (tests). */
    int pending() {
        return pending.size();
    }
}
