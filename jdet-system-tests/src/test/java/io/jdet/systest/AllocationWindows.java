package io.jdet.systest;

import java.lang.management.ManagementFactory;

/**
 * The bytes the calling thread allocates in steady state: after {@code warmup} rounds, {@code windows} windows of
 * {@code measured} rounds each, of which the quietest counts. A JIT recompilation (a deoptimisation runs the path
 * interpreted, where nothing is scalar-replaced, for a while) can land in one window on a busy machine, while a
 * path that allocates per round allocates in every window. Call {@link #beforeRound} at the top of each round
 * (rounds 0 to {@link #rounds()} - 1) on the measured thread, then {@link #quietest} on it.
 */
final class AllocationWindows {
    private final com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private final long self = Thread.currentThread().threadId();
    private final int warmup;
    private final int measured;
    private final int windows;
    private long start;
    private long quietest = Long.MAX_VALUE;

    AllocationWindows(final int warmup, final int measured, final int windows) {
        this.warmup = warmup;
        this.measured = measured;
        this.windows = windows;
    }

    /** @return every round: the warm-up and the windows */
    int rounds() {
        return warmup + windows * measured;
    }

    /** Samples the thread's counter where a window starts. */
    void beforeRound(final int round) {
        if (round >= warmup && (round - warmup) % measured == 0) {
            final long now = threads.getThreadAllocatedBytes(self);
            if (round > warmup) {
                quietest = Math.min(quietest, now - start);
            }
            start = now;
        }
    }

    /** @return the bytes allocated in the quietest window, the last one closed now */
    long quietest() {
        return Math.min(quietest, threads.getThreadAllocatedBytes(self) - start);
    }
}
