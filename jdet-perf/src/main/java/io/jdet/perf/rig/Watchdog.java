package io.jdet.perf.rig;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The deadline of blocking calls that have none of their own (a blocking channel read): a daemon thread that
 * closes the given resources when the guarded code makes no progress for the timeout, or the run is aborted, so
 * that the blocked call fails instead of hanging. The guarded loop calls {@link #pet()} after each step.
 */
public final class Watchdog implements AutoCloseable {
    private static final long CHECK_NS = TimeUnit.MILLISECONDS.toNanos(20);

    private final long timeoutNs;
    private final Abort abort;
    private final AutoCloseable[] victims;
    private final Thread thread;
    private volatile long lastPetNs;
    private volatile boolean closed;
    private volatile boolean fired;

    private Watchdog(final long timeoutNs, final Abort abort, final AutoCloseable[] victims) {
        this.timeoutNs = timeoutNs;
        this.abort = abort;
        this.victims = victims.clone();
        this.lastPetNs = System.nanoTime();
        this.thread = Thread.ofPlatform().daemon().name("jdet-perf-watchdog").start(this::watch);
    }

    /**
     * Starts guarding.
     *
     * @param timeoutNs the longest time without a {@link #pet()}
     * @param abort     the run's abort flag
     * @param victims   what to close when time runs out
     * @return the watchdog; close it when the guarded code is done
     */
    public static Watchdog guard(final long timeoutNs, final Abort abort, final AutoCloseable... victims) {
        return new Watchdog(timeoutNs, abort, victims);
    }

    /** The guarded code made progress. Allocation free: a clock read and a volatile write. */
    public void pet() {
        lastPetNs = System.nanoTime();
    }

    /**
     * Whether the watchdog closed the resources: a failure of the guarded code is then a timeout.
     *
     * @return true if it fired
     */
    public boolean fired() {
        return fired;
    }

    private void watch() {
        while (!closed) {
            LockSupport.parkNanos(this, CHECK_NS);
            if (!closed && (System.nanoTime() - lastPetNs > timeoutNs || abort.raised())) {
                fired = true;
                for (final AutoCloseable victim : victims) {
                    try {
                        victim.close();
                    } catch (final Exception e) {
                        // Closing is best effort: the blocked call fails either way.
                    }
                }
                return;
            }
        }
    }

    /** Stops guarding. */
    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(thread);
        try {
            thread.join(TimeUnit.NANOSECONDS.toMillis(CHECK_NS) * 10);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
