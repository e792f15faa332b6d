package io.jdet.perf;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Progress lines on stderr, so that a long run shows it is alive: silent for the first two seconds (a short run
 * prints nothing), then one line per step.
 */
final class Progress {
    private static final long QUIET_NS = TimeUnit.SECONDS.toNanos(2);

    private final PrintWriter err;
    private final boolean quiet;
    private final long startNs;
    private final int steps;
    private int done;

    Progress(final PrintWriter err, final boolean quiet, final long startNs, final int steps) {
        this.err = err;
        this.quiet = quiet;
        this.startNs = startNs;
        this.steps = steps;
    }

    /**
     * A step starts.
     *
     * @param step the step
     */
    void step(final Step step) {
        done++;
        final long elapsed = System.nanoTime() - startNs;
        if (!quiet && elapsed > QUIET_NS) {
            err.printf(Locale.ROOT, "[%6.1f s] %d/%d %s at %s bytes%n", elapsed / 1e9, done, steps,
                step.kind().label(), Sizes.format(step.size()));
            err.flush();
        }
    }
}
