package io.jdet.internal.engine;

import java.lang.foreign.MemorySegment;

/**
 * The receiving side of selective acknowledgement for one stream: frames that arrived beyond a gap, held in the
 * NIC's {@link ReorderPool} until the gap fills, and the bits that tell the sender which ones are held (bit i: the
 * frame {@code expected + 1 + i}). The owner processes frames strictly in sequence order: after each in-order frame
 * it calls {@link #advance} and processes the frame returned, if any, as if it had just arrived. Engine lock held;
 * allocation free.
 */
final class HeldFrames {
    /** How far beyond the gap a frame may be held: the width of the selective-ack field. */
    static final int RANGE = 32;
    static final int HELD = 0;
    static final int DUPLICATE = 1;
    static final int DROPPED = 2;

    private final ReorderPool pool;
    private final int[] slots = new int[RANGE];
    /** Bit i set: frame {@code expected + 1 + i} is held. */
    int bits;
    /** Bit k set: {@code slots[k]} holds a frame (k = sequence number modulo {@link #RANGE}). */
    private int occupied;

    HeldFrames(final ReorderPool pool) {
        this.pool = pool;
    }

    /**
     * Holds a frame that arrived beyond the gap.
     *
     * @param f        the frame
     * @param seq      its sequence number, after {@code expected}
     * @param expected the next in-order sequence number
     * @return {@link #HELD}, {@link #DUPLICATE} if it is held already, or {@link #DROPPED} if it lies beyond the
     *         range or the pool is full
     */
    int hold(final MemorySegment f, final int seq, final int expected) {
        final int d = seq - expected - 1;
        if (d < 0 || d >= RANGE) {
            return DROPPED;
        }
        if ((bits & 1 << d) != 0) {
            return DUPLICATE;
        }
        final int slot = pool.store(f, io.jdet.internal.wire.Frame.HEADER_LENGTH
            + io.jdet.internal.wire.Frame.payloadLength(f));
        if (slot < 0) {
            return DROPPED;
        }
        slots[seq & (RANGE - 1)] = slot;
        occupied |= 1 << (seq & (RANGE - 1));
        bits |= 1 << d;
        return HELD;
    }

    /**
     * The expected sequence number just advanced by one: shifts the bits and hands over the new expected frame if
     * it is held. The caller processes it, then {@link #release}s the slot.
     *
     * @param expected the new expected sequence number
     * @return the pool slot holding that frame, or -1
     */
    int advance(final int expected) {
        final boolean held = (bits & 1) != 0;
        bits >>>= 1;
        if (!held) {
            return -1;
        }
        occupied &= ~(1 << (expected & (RANGE - 1)));
        return slots[expected & (RANGE - 1)];
    }

    MemorySegment frame(final int slot) {
        return pool.frame(slot);
    }

    void release(final int slot) {
        pool.release(slot);
    }

    /** Drops every held frame (reset, flush, failure). */
    void drop() {
        for (int k = 0; k < RANGE; k++) {
            if ((occupied & 1 << k) != 0) {
                pool.release(slots[k]);
            }
        }
        occupied = 0;
        bits = 0;
    }
}
