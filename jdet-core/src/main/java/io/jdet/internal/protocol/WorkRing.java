package io.jdet.internal.protocol;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.IntFunction;

/**
 * The slots of a work queue (a send or a receive queue): a ring of work requests, reused, addressed by positions
 * that only grow. {@link #head} is the oldest slot not yet freed by polling its completion, {@link #tail} the next
 * to post into; their difference is the queue's depth. A slot is created the first time it is used (or when it
 * needs more scatter/gather elements), so the data path allocates nothing once every slot exists. Engine lock
 * held, except for {@link #retire}: a poll frees slots without the engine lock, through a counter the engine folds
 * into {@link #head} before it looks at the depth (written by one poller at a time, so without atomic updates).
 *
 * @param <T> the work request type
 */
public final class WorkRing<T extends WorkRequest> {
    private static final VarHandle RETIRED;

    static {
        try {
            RETIRED = MethodHandles.lookup().findVarHandle(WorkRing.class, "retired", long.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final IntFunction<T> factory;
    /** Slots, a power of two at least {@link #capacity}, so a position maps to its slot with a mask. */
    private WorkRequest[] slots;
    private int mask;
    /** The queue's depth limit, as created or resized. */
    public int capacity;
    public long head;
    public long tail;
    /**
     * Slots freed by polls since the ring was made, a count that only grows. Its writers are polls of one completion
     * queue (a queue pair's send queue retires through its send CQ, its receive queue through its receive CQ), each
     * holding that queue's ring lock, so one writes at a time and a plain add published with a release store does;
     * the engine reads it with acquire. No read-modify-write: on many cores each was a fence per completion.
     */
    @SuppressWarnings("unused") // through RETIRED
    private long retired;
    /** How much of {@link #retired} {@link #head} includes already. Engine lock. */
    private long folded;

    public WorkRing(final int capacity, final IntFunction<T> factory) {
        this.factory = factory;
        this.capacity = capacity;
        this.slots = new WorkRequest[slotCount(capacity)];
        this.mask = slots.length - 1;
    }

    private static int slotCount(final int capacity) {
        return Math.max(1, Integer.highestOneBit(Math.max(1, capacity) * 2 - 1));
    }

    public boolean full() {
        fold();
        return tail - head >= capacity;
    }

    public int depth() {
        fold();
        return (int) (tail - head);
    }

    /** Moves {@link #head} past the slots polls freed since the last look. Engine lock held. */
    private void fold() {
        final long now = (long) RETIRED.getAcquire(this);
        if (now != folded) {
            head = Math.min(tail, head + (now - folded));
            folded = now;
        }
    }

    @SuppressWarnings("unchecked")
    public T at(final long position) {
        return (T) slots[(int) position & mask];
    }

    /** The slot at the tail, for a work request of up to {@code sges} elements; not yet posted. */
    public T next(final int sges) {
        final int i = (int) tail & mask;
        @SuppressWarnings("unchecked")
        T w = (T) slots[i];
        if (w == null || w.segments.regions.length < sges) {
            w = factory.apply(sges);
            slots[i] = w;
        }
        return w;
    }

    /**
     * Frees slots when a completion covering {@code reap} of them is polled; safe without the engine lock. The
     * caller holds the ring lock of the one completion queue this work queue completes on: it orders this queue's
     * retirers, and the queue pair's epoch changes under it, so slots of a cleared queue are never freed.
     */
    public void retire(final int reap) {
        RETIRED.setRelease(this, (long) RETIRED.get(this) + reap);
    }

    /**
     * Empties the queue, forgetting slots freed by polls and not yet folded (after the queue pair's epoch changed:
     * no poll retires a slot of this queue until new work is posted).
     */
    public void clear() {
        folded = (long) RETIRED.getAcquire(this);
        head = tail = 0;
    }

    /**
     * Changes the capacity, keeping the outstanding work requests in order; positions move down so that the head
     * is 0.
     *
     * @return how far positions moved: the caller subtracts it from its own positions into this ring
     */
    public long resize(final int size) {
        fold();
        final WorkRequest[] grown = new WorkRequest[slotCount(size)];
        for (long i = head; i < tail; i++) {
            grown[(int) (i - head)] = at(i);
        }
        final long shift = head;
        head -= shift;
        tail -= shift;
        slots = grown;
        mask = grown.length - 1;
        capacity = size;
        return shift;
    }
}
