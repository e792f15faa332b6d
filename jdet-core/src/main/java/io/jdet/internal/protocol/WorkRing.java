package io.jdet.internal.protocol;

import java.util.function.IntFunction;

/**
 * The slots of a work queue (a send or a receive queue): a ring of work requests, reused, addressed by positions
 * that only grow. {@link #head} is the oldest slot not yet freed by polling its completion, {@link #tail} the next
 * to post into; their difference is the queue's depth. A slot is created the first time it is used (or when it
 * needs more scatter/gather elements), so the data path allocates nothing once every slot exists. Engine lock
 * held.
 *
 * @param <T> the work request type
 */
public final class WorkRing<T extends WorkRequest> {
    private final IntFunction<T> factory;
    /** Slots, a power of two at least {@link #capacity}, so a position maps to its slot with a mask. */
    private WorkRequest[] slots;
    private int mask;
    /** The queue's depth limit, as created or resized. */
    public int capacity;
    public long head;
    public long tail;

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
        return tail - head >= capacity;
    }

    public int depth() {
        return (int) (tail - head);
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

    /** Frees slots when a completion covering {@code reap} of them is polled. */
    public void retire(final int reap) {
        head = Math.min(tail, head + reap);
    }

    public void clear() {
        head = tail = 0;
    }

    /**
     * Changes the capacity, keeping the outstanding work requests in order; positions move down so that the head
     * is 0.
     *
     * @return how far positions moved: the caller subtracts it from its own positions into this ring
     */
    public long resize(final int size) {
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
