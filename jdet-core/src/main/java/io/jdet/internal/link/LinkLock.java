package io.jdet.internal.link;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * A NIC's engine lock: a reentrant lock that calls {@link Link#flush} as its outermost holder lets go, so a link
 * that batches frames hands everything the holder sent to the kernel in one call, and nothing waits in a batch once
 * the lock is free. It has one condition ({@link #awaitNanos}, {@link #signalAll}) for the connection manager.
 *
 * <p>Why not a {@link java.util.concurrent.locks.ReentrantLock}: every post and every engine pass takes and releases
 * this lock, and a {@code ReentrantLock} releases with a volatile store, which on x86 is a full fence: the
 * releasing thread waits until every store of its critical section (frames written into rings, completions, ring
 * indices, often to cache lines another core holds) has reached the cache, on each release. Here a release is a
 * plain store with release semantics, which orders those stores before it without waiting for them; taking the lock
 * is a compare-and-set with acquire semantics. That is the whole contract the engine needs: what one holder wrote,
 * the next holder sees.
 *
 * <p>Nothing queues on this lock. The data path only ever {@linkplain #tryLock tries} it (and spins, then yields,
 * between tries); {@link #lock} does the same and then parks in slices of at most {@link #MAX_PARK_NS}, since a
 * release that is only a store cannot see whom to wake without the fence it avoids. The holders on the data path
 * keep it for microseconds, so a control call ({@code reg_mr}, a connect) waits about as long as behind a queued
 * lock, and allocates nothing on the way. One that has waited {@link #STARVE_NS} (the data path's free moments are
 * nanoseconds long, and rarely the ones a parked thread wakes in) makes {@link #tryLock} fail for everyone else
 * until it has the lock, and the next release unparks it.
 */
public final class LinkLock {
    private static final VarHandle OWNER;
    private static final VarHandle STARVING;

    static {
        try {
            OWNER = MethodHandles.lookup().findVarHandle(LinkLock.class, "owner", Thread.class);
            STARVING = MethodHandles.lookup().findVarHandle(LinkLock.class, "starving", int.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Tries of {@link #lock} that spin before it yields, and that yield before it parks. */
    private static final int SPINS = 64;
    private static final int YIELDS = 64;
    /** The first and the longest park of {@link #lock} between tries. */
    private static final long MIN_PARK_NS = 10_000;
    private static final long MAX_PARK_NS = 100_000;
    /**
     * How long {@link #lock} waits before {@link #tryLock} stops letting others in ahead of it: threads on the data
     * path try the lock in a loop, and a free moment of a few nanoseconds is rarely the one a parked thread wakes
     * in, so without this a control call could wait for a second behind a busy-polling application.
     */
    private static final long STARVE_NS = 1_000_000;

    /** The link whose batches this lock flushes. */
    private final Link link;
    /** The holder, or null; taken with an acquiring compare-and-set, cleared with a release store. */
    @SuppressWarnings("unused") // through OWNER
    private Thread owner;
    /** How many times the holder holds it; read and written by the holder only. */
    private int holds;
    /** Threads in {@link #awaitNanos}, added and removed by holders of this lock. */
    private final List<Thread> waiters = new ArrayList<>();
    /** Threads in {@link #lock} that have waited {@link #STARVE_NS}: while any does, {@link #tryLock} fails. */
    @SuppressWarnings("unused") // through STARVING
    private int starving;
    /** The thread {@link #release} unparks while one starves (the first to; others wake by their slices). */
    private volatile Thread heir;

    /**
     * Creates the lock of a NIC.
     *
     * @param link the NIC's link
     */
    public LinkLock(final Link link) {
        this.link = link;
    }

    /**
     * Takes the lock if it is free or held by this thread already, and no thread has waited in {@link #lock} for
     * longer than {@link #STARVE_NS}. Raises nothing; allocates nothing.
     *
     * @return whether this thread holds it now
     */
    public boolean tryLock() {
        return tryLock(false);
    }

    /** Takes the lock; one that {@link #lock} waits for too long is left to it ({@link #STARVE_NS}) unless first. */
    private boolean tryLock(final boolean first) {
        final Thread me = Thread.currentThread();
        final Object owner = OWNER.getOpaque(this);
        if (owner == me) {
            holds++;
            return true;
        }
        // Test before the compare-and-set: a failing one still takes the cache line from the holder.
        if (owner != null || !first && (int) STARVING.getOpaque(this) != 0) {
            return false;
        }
        if (OWNER.compareAndExchangeAcquire(this, (Thread) null, me) == null) {
            holds = 1;
            return true;
        }
        return false;
    }

    /**
     * Takes the lock, waiting for as long as it takes: spins, then yields, then parks in growing slices between
     * tries. An interrupt does not end the wait; the thread's interrupt status is kept. Raises nothing.
     */
    public void lock() {
        if (tryLock()) {
            return;
        }
        boolean interrupted = false;
        boolean first = false;
        long parkNs = MIN_PARK_NS;
        final long since = System.nanoTime();
        try {
            for (int attempt = 0; !tryLock(first); attempt++) {
                if (attempt < SPINS) {
                    Thread.onSpinWait();
                    continue;
                }
                // Yields, too, can take that long: each may hand the processor to a spinning thread for a slice.
                if (!first && System.nanoTime() - since > STARVE_NS) {
                    first = true;
                    if (heir == null) {
                        heir = Thread.currentThread();
                    }
                    STARVING.getAndAdd(this, 1); // a full fence: heir is set before a release can see this
                }
                if (attempt < SPINS + YIELDS) {
                    Thread.yield();
                } else {
                    LockSupport.parkNanos(this, parkNs);
                    parkNs = Math.min(MAX_PARK_NS, parkNs * 2);
                    interrupted |= Thread.interrupted(); // else every later park would return at once
                }
            }
        } finally {
            if (first) {
                if (heir == Thread.currentThread()) {
                    heir = null;
                }
                STARVING.getAndAdd(this, -1);
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Flushes the link's batch if this is the outermost hold, then releases the lock (also when the flush fails).
     *
     * @throws IllegalMonitorStateException if the current thread does not hold this lock
     * @throws RuntimeException             what the flush threw, after the lock is released
     */
    public void unlock() {
        checkHeld();
        if (holds > 1) {
            holds--;
            return;
        }
        try {
            link.flush();
        } finally {
            release();
        }
    }

    private void release() {
        holds = 0;
        OWNER.setRelease(this, (Thread) null);
        // A plain load, no fence: read before the release store is seen, it misses a thread that began to starve
        // just now, which then takes the lock after its current park slice (MAX_PARK_NS at most).
        if ((int) STARVING.getOpaque(this) != 0) {
            final Thread next = heir;
            if (next != null) {
                LockSupport.unpark(next);
            }
        }
    }

    private void checkHeld() {
        if (OWNER.getOpaque(this) != Thread.currentThread()) {
            throw new IllegalMonitorStateException("the engine lock is not held by " + Thread.currentThread());
        }
    }

    /**
     * How many times the current thread holds the lock. Raises nothing.
     *
     * @return the holds, 0 if another thread holds it or none does
     */
    public int getHoldCount() {
        return OWNER.getOpaque(this) == Thread.currentThread() ? holds : 0;
    }

    /**
     * Whether the current thread holds the lock. Raises nothing.
     *
     * @return true if it does
     */
    public boolean isHeldByCurrentThread() {
        return OWNER.getOpaque(this) == Thread.currentThread();
    }

    /**
     * Whether any thread holds the lock (a snapshot, for tests and monitoring). Raises nothing.
     *
     * @return true if held
     */
    public boolean isLocked() {
        return OWNER.getAcquire(this) != null;
    }

    /**
     * Releases the lock (all holds, after flushing the link's batch), waits until {@link #signalAll}, the time runs
     * out or the thread is interrupted, and takes the lock again with the same holds, as
     * {@link java.util.concurrent.locks.Condition#awaitNanos} does. It may also return early for no reason; callers
     * look at what they wait for again.
     *
     * @param nanos the longest wait
     * @return an estimate of the time left, {@code nanos} less the time waited; 0 or less if it ran out
     * @throws IllegalMonitorStateException if the current thread does not hold this lock
     * @throws InterruptedException         if the thread was interrupted before or while waiting (the lock is held
     *                                      again when it is thrown)
     * @throws RuntimeException             what the flush threw, with the lock still held and nothing released
     */
    public long awaitNanos(final long nanos) throws InterruptedException {
        checkHeld();
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        final Thread me = Thread.currentThread();
        final int saved = holds;
        final long start = System.nanoTime();
        // As before a Condition's wait: a failed flush is thrown with the lock still held (the caller's finally
        // unlocks it), and this thread is no waiter then.
        link.flush();
        waiters.add(me); // before letting go: a signal from the next holder finds it
        release();
        if (nanos > 0) {
            LockSupport.parkNanos(this, nanos);
        }
        final boolean interrupted = Thread.interrupted();
        lock();
        holds = saved;
        waiters.remove(me);
        if (interrupted) {
            throw new InterruptedException();
        }
        return nanos - (System.nanoTime() - start);
    }

    /**
     * Wakes every thread in {@link #awaitNanos}; each takes the lock again before it returns.
     *
     * @throws IllegalMonitorStateException if the current thread does not hold this lock
     */
    public void signalAll() {
        checkHeld();
        for (int i = 0; i < waiters.size(); i++) {
            LockSupport.unpark(waiters.get(i));
        }
        waiters.clear();
    }
}
