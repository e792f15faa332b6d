package io.jdet.perf.rig;

import io.jdet.perf.PerfException;

/**
 * The deadline of a busy-poll loop. The loop calls {@link #idle()} after every poll that found nothing and
 * {@link #reset()} after progress; the clock is read only every 1024 idle polls, so the fast path costs a counter
 * increment. After {@code timeoutNs} without progress, or when the run is aborted, {@link #idle()} throws.
 * Allocation free until it throws.
 */
public final class Spinner {
    private static final int CHECK_MASK = 1023;

    private final long timeoutNs;
    private final Abort abort;
    private String waitingFor;
    private StopSignal peer;
    private long spins;
    private long deadlineNs;

    /**
     * Creates a spinner.
     *
     * @param timeoutNs the longest time without progress
     * @param abort     the run's abort flag
     */
    public Spinner(final long timeoutNs, final Abort abort) {
        this.timeoutNs = timeoutNs;
        this.abort = abort;
        this.waitingFor = "progress";
    }

    /**
     * Names what is awaited, for the timeout message. Call it outside the measured loop (or with a constant).
     *
     * @param what for example {@code "the echo"}
     * @return this
     */
    public Spinner waitingFor(final String what) {
        this.waitingFor = what;
        return this;
    }

    /**
     * Also gives up when the peer signals in the middle of a wait (it only does so to report a failure).
     *
     * @param signal the peer's side channel
     * @return this
     */
    public Spinner watching(final StopSignal signal) {
        this.peer = signal;
        return this;
    }

    /** Progress was made: the next idle poll starts a new deadline. */
    public void reset() {
        spins = 0;
    }

    /**
     * One poll found nothing.
     *
     * @throws PerfException if the deadline passed or the run was aborted
     */
    public void idle() {
        final long n = ++spins;
        if ((n & CHECK_MASK) != 0) {
            return;
        }
        // A thousand empty polls in a row: something else (the JIT compiler, the peer's thread, the NIC's progress
        // thread) probably needs this core; on 2 cores two spinning ends would otherwise starve the compiler and
        // leave the first test running interpreted code.
        Thread.yield();
        final long now = System.nanoTime();
        if (n == CHECK_MASK + 1) {
            deadlineNs = now + timeoutNs;
        } else if (now - deadlineNs > 0) {
            throw new PerfException("timed out after " + timeoutNs / 1_000_000 + " ms waiting for " + waitingFor);
        }
        if (abort.raised()) {
            throw new PerfException("aborted while waiting for " + waitingFor);
        }
        if (peer != null && peer.stopRequested()) {
            throw new PerfException("the peer stopped while this end waited for " + waitingFor);
        }
    }

    /**
     * Whether this idle call is one of the periodic checks (every 1024th): for rare extra checks in the loop.
     *
     * @return true every 1024 idle polls
     */
    public boolean periodic() {
        return (spins & CHECK_MASK) == 0 && spins != 0;
    }

    /**
     * The longest time without progress.
     *
     * @return nanoseconds
     */
    public long timeoutNs() {
        return timeoutNs;
    }

    /**
     * The run's abort flag.
     *
     * @return the flag
     */
    public Abort abort() {
        return abort;
    }
}
