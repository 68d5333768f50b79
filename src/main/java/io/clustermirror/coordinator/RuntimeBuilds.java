package io.clustermirror.coordinator;

import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Builds of the mirrors' runtimes, off the coordinator thread (decisions §37): a mirror's clients (config providers, the
 * allowlist's DNS look-ups, SASL logins, Admins) are built on a worker, and the result is posted back to the coordinator
 * thread, where it is installed and what waited for it continues; one slow source holds up its own mirror only. One
 * build per mirror at a time (whoever asks meanwhile joins it), and not before the mirror's last runtime finished
 * closing (its data plane must have left the pool before a new one takes its partitions). A close that overtakes a build
 * tells what waits ({@link ClosedMeanwhile}) and discards what the build brings.
 *
 * <p>Coordinator thread, except {@link #closing}, which any thread may call.
 */
final class RuntimeBuilds<R> {

    /** What waits for a runtime whose build was overtaken by a close (a reload, a delete): it runs no further. */
    static final class ClosedMeanwhile extends MirrorException {
        private static final long serialVersionUID = 1L;

        ClosedMeanwhile(String mirror) {
            super(
                    MirrorError.COORDINATOR_NOT_AVAILABLE,
                    "the running parts of mirror '" + mirror + "' were closed while its clients were built; try again");
        }
    }

    private final CoordinatorThread thread;
    private final Map<String, CompletableFuture<R>> building = new HashMap<>();
    private final Map<String, CompletableFuture<Void>> closing = new ConcurrentHashMap<>();

    RuntimeBuilds(CoordinatorThread thread) {
        this.thread = thread;
    }

    /**
     * The mirror's runtime, built by {@code build} on {@code worker}; completed on the coordinator thread after {@code
     * install} ran there, or with why it could not be built. Joins a build under way.
     *
     * @param discard closes a runtime whose build was overtaken by a close
     */
    CompletableFuture<R> build(
            String mirror, Executor worker, Supplier<R> build, Consumer<R> install, Consumer<R> discard) {
        CompletableFuture<R> inFlight = building.get(mirror);
        if (inFlight != null) {
            return inFlight;
        }
        CompletableFuture<R> result = new CompletableFuture<>();
        building.put(mirror, result);
        Runnable task = () -> {
            R built = null;
            RuntimeException error = null;
            try {
                built = build.get();
            } catch (RuntimeException e) {
                error = e;
            } catch (Error e) { // a login module's class that cannot load: answered, or every later build would join
                // this
                error = new IllegalStateException("building the mirror's clients failed: " + e, e);
            }
            R runtime = built;
            RuntimeException failure = error;
            thread.run("clients of mirror " + mirror + " built", () -> {
                if (building.get(mirror) != result) { // overtaken by a close: what waited was told so
                    if (runtime != null) {
                        discard.accept(runtime);
                    }
                    return;
                }
                building.remove(mirror);
                if (failure != null) {
                    result.completeExceptionally(failure);
                    return;
                }
                install.accept(runtime);
                result.complete(runtime);
            });
        };
        closing.getOrDefault(mirror, CompletableFuture.completedFuture(null)).whenComplete((closed, e) -> {
            try {
                worker.execute(task);
            } catch (RejectedExecutionException refused) { // the pool is shut down: the service is stopping
                thread.run("clients of mirror " + mirror + " not built", () -> {
                    if (building.remove(mirror, result)) {
                        result.completeExceptionally(refused);
                    }
                });
            }
        });
        return result;
    }

    /** A runtime of the mirror closing: its next build starts once this completes. Any thread. */
    void closing(String mirror, CompletableFuture<Void> closed) {
        CompletableFuture<Void> all = closing.merge(mirror, closed, CompletableFuture::allOf);
        all.whenComplete((done, e) -> closing.remove(mirror, all));
    }

    /** The mirror's build under way, if any, is overtaken: what waits for it is told. */
    void overtake(String mirror) {
        CompletableFuture<R> inFlight = building.remove(mirror);
        if (inFlight != null) {
            inFlight.completeExceptionally(new ClosedMeanwhile(mirror));
        }
    }

    void overtakeAll() {
        List<String> mirrors = new ArrayList<>(building.keySet());
        mirrors.forEach(this::overtake);
    }
}
