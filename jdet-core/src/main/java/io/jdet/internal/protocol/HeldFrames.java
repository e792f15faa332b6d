package io.jdet.internal.protocol;

import io.jdet.internal.wire.Frame;

import java.lang.foreign.MemorySegment;

import static io.jdet.internal.wire.Frame.after;

/**
 * The receiving side of selective acknowledgement for one stream: frames that arrived beyond a gap, held in the
 * NIC's {@link ReorderPool} until the gap fills, and the bits that tell the sender which ones are held (bit i: the
 * frame {@code expected + 1 + i}). The owner processes frames strictly in sequence order: after each in-order frame
 * it calls {@link #advance} and processes the frame returned, if any, as if it had just arrived. Engine lock held;
 * allocation free.
 */
public final class HeldFrames {
    /** How far beyond the gap a frame may be held: the width of the selective-ack field. */
    static final int RANGE = 32;
    /**
     * Frames a stream may always hold while the pool has a slot free; beyond that it holds fewer frames than the
     * pool has free, so one stream takes at most half of what is left and the NIC's other streams keep some room:
     * a peer that leaves gaps on purpose cannot take the whole pool from every other connection.
     */
    static final int FAIR_SHARE_MIN = 8;
    static final int HELD = 0;
    static final int DUPLICATE = 1;
    static final int DROPPED = 2;
    public static final int PROCESSED = 3;

    private final ReorderPool pool;
    private final int[] slots = new int[RANGE];
    /** Bit i set: frame {@code expected + 1 + i} is held. */
    public int bits;
    /** Bit k set: {@code slots[k]} holds a frame (k = sequence number modulo {@link #RANGE}). */
    private int occupied;

    public HeldFrames(final ReorderPool pool) {
        this.pool = pool;
    }

    /**
     * Delivers a frame of the stream in order: runs it if it is the next one expected, and then every held frame
     * that now follows it, as if each had just arrived; holds it if it lies beyond a gap.
     *
     * @param stream the stream's receiving end
     * @param qp     its queue pair: held frames run only while it stays connected
     * @param f      the frame
     * @param opcode its opcode
     * @param now    the current time
     * @return {@link #PROCESSED}, or for a frame that was not the next one {@link #HELD}, {@link #DUPLICATE} or
     *         {@link #DROPPED}: the caller counts it and acknowledges at once, so the sender repairs the gap
     */
    public int deliver(final OrderedStream stream, final Connection qp, final MemorySegment f, final int opcode,
                final long now) {
        final int seq = Frame.seq(f);
        final int expected = stream.expected();
        if (seq != expected) {
            return after(expected, seq) ? DUPLICATE : hold(f, seq, expected);
        }
        if (!stream.process(f, opcode, seq, now)) {
            return PROCESSED;
        }
        for (int slot = advance(stream.expected()); slot >= 0; slot = advance(stream.expected())) {
            if (!qp.connected()) {
                release(slot);
                return PROCESSED;
            }
            final MemorySegment next = frame(slot);
            final boolean ok;
            try {
                ok = stream.process(next, Frame.opcode(next), stream.expected(), now);
            } finally {
                release(slot); // advance() handed it over: nothing else frees it
            }
            if (!ok) {
                return PROCESSED; // not ready (or failed): it is the gap now, and the sender resends it
            }
        }
        return PROCESSED;
    }

    /**
     * Counts a frame {@link #deliver} did not process.
     *
     * @param outcome  what {@link #deliver} returned
     * @param counters the NIC's counters
     */
    public static void count(final int outcome, final Counters counters) {
        switch (outcome) {
            case HELD -> counters.stashed++;
            case DUPLICATE -> counters.duplicates++;
            default -> counters.outOfOrder++;
        }
    }

    /**
     * Holds a frame that arrived beyond the gap.
     *
     * @param f        the frame
     * @param seq      its sequence number, after {@code expected}
     * @param expected the next in-order sequence number
     * @return {@link #HELD}, {@link #DUPLICATE} if it is held already, or {@link #DROPPED} if it lies beyond the
     *         range, the pool is full or this stream has its share of it ({@link #FAIR_SHARE_MIN})
     */
    int hold(final MemorySegment f, final int seq, final int expected) {
        final int d = seq - expected - 1;
        if (d < 0 || d >= RANGE) {
            return DROPPED;
        }
        if ((bits & 1 << d) != 0) {
            return DUPLICATE;
        }
        final int held = Integer.bitCount(occupied);
        if (held >= FAIR_SHARE_MIN && held >= pool.free()) {
            return DROPPED;
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
    public void drop() {
        for (int k = 0; k < RANGE; k++) {
            if ((occupied & 1 << k) != 0) {
                pool.release(slots[k]);
            }
        }
        occupied = 0;
        bits = 0;
    }
}
