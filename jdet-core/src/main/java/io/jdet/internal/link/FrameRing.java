package io.jdet.internal.link;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * A bounded ring of frame slots with many producers and one consumer (Vyukov's sequence-per-slot design): the
 * inbound queue of one in-process NIC. Producers claim a slot with a CAS on the tail, copy the frame in and
 * publish it with a release store of the slot's sequence; the consumer reads with an acquire load. Allocation
 * free.
 */
final class FrameRing implements AutoCloseable {
    private final int mask;
    private final int slotSize;
    private final MemorySegment[] slots;
    private final ByteBuffer[] views;
    private final int[] lengths;
    private final long[] peers;
    /** Slot i is free for producer index t when sequence == t, full for consumer index h when sequence == h+1. */
    private final AtomicLongArray sequence;
    private final AtomicLong tail = new AtomicLong();
    /** Consumer index; only the consumer (holder of the NIC lock) touches it. */
    private long head;
    /** The thread parked in {@link #await}, or null; producers unpark it after publishing. */
    private volatile Thread waiter;

    FrameRing(final int capacity, final int slotSize) {
        this.mask = capacity - 1;
        this.slotSize = slotSize;
        this.slots = new MemorySegment[capacity];
        this.views = new ByteBuffer[capacity];
        this.lengths = new int[capacity];
        this.peers = new long[capacity];
        this.sequence = new AtomicLongArray(capacity);
        // Direct buffers rather than an arena: their memory has no session, so neither the producers' copies
        // nor the consumer's CRC pay a shared-session acquire (a contended CAS) per frame. The GC frees them.
        final ByteBuffer all = ByteBuffer.allocateDirect(capacity * slotSize);
        for (int i = 0; i < capacity; i++) {
            views[i] = all.slice(i * slotSize, slotSize);
            slots[i] = MemorySegment.ofBuffer(views[i]);
            sequence.set(i, i);
        }
    }

    /**
     * Copies a frame into the ring.
     *
     * @return false if the ring is full
     */
    boolean offer(final long peer, final MemorySegment header, final int headerLength, final FrameGather payload) {
        final int length = headerLength + payload.totalLength();
        if (length > slotSize) {
            throw new IllegalArgumentException("frame of " + length + " bytes exceeds the slot size " + slotSize);
        }
        long t;
        int i;
        while (true) {
            t = tail.get();
            i = (int) (t & mask);
            final long s = sequence.get(i); // acquire: pairs with the consumer's release of this slot
            if (s == t) {
                if (tail.compareAndSet(t, t + 1)) {
                    break;
                }
            } else if (s < t) {
                return false;
            }
        }
        final MemorySegment slot = slots[i];
        MemorySegment.copy(header, 0, slot, 0, headerLength);
        payload.copyTo(slot, headerLength);
        lengths[i] = length;
        peers[i] = peer;
        sequence.lazySet(i, t + 1); // release: publishes the slot contents to the consumer
        final Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
        return true;
    }

    /** Hands up to max frames to the handler; verifies each CRC first. */
    int drain(final FrameHandler handler, final int max, final FrameCrc crc, final long[] badCrc) {
        int n = 0;
        while (n < max) {
            final int i = (int) (head & mask);
            if (sequence.get(i) != head + 1) { // acquire: pairs with the producer's release
                break;
            }
            try {
                if (crc.verify(slots[i], views[i], lengths[i])) {
                    handler.onFrame(slots[i], lengths[i], peers[i]);
                } else {
                    badCrc[0]++;
                }
            } finally {
                sequence.lazySet(i, head + mask + 1); // release: the slot may be reused by producers
                head++;
            }
            n++;
        }
        return n;
    }

    boolean isEmpty() {
        return sequence.get((int) (head & mask)) != head + 1;
    }

    void await(final long timeoutNs) {
        waiter = Thread.currentThread();
        try {
            if (isEmpty()) {
                LockSupport.parkNanos(this, timeoutNs);
            }
        } finally {
            waiter = null;
        }
    }

    void wakeup() {
        final Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    @Override
    public void close() {
        waiter = null;
    }
}
