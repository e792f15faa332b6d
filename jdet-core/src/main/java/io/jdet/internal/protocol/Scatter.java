package io.jdet.internal.protocol;

import io.jdet.internal.wire.FrameGather;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * The data segments of a work request, resolved to regions at post time (by the verbs layer, which checks them): the scatter list of a receive, read or
 * atomic, or the gather list of a send or write. Placement copies with the last byte of each piece written last,
 * so a receiver may poll on the last byte of an RDMA-written buffer.
 */
public final class Scatter {
    public final Region[] regions;
    public final long[] offsets;
    public final int[] lengths;
    /** Each region's l_key at post time: {@code mr.modify} issues new keys, which revokes the post at once. */
    public final int[] keys;
    public int count;
    public long total;

    public Scatter(final int capacity) {
        regions = new Region[capacity];
        offsets = new long[capacity];
        lengths = new int[capacity];
        keys = new int[capacity];
    }

    /**
     * Ends a load: the verbs layer has filled the first {@code n} entries of {@link #regions}, {@link #offsets} and
     * {@link #lengths}, each checked against its region. Raises nothing.
     *
     * @param n   how many segments
     * @param sum their total length
     */
    public void finish(final int n, final long sum) {
        for (int i = n; i < count; i++) {
            regions[i] = null;
        }
        count = n;
        total = sum;
    }

    /**
     * Whether the engine may still touch every region: one may have been deregistered (or its arena closed) since
     * the post, or modified (moved to another protection domain or re-keyed: {@code mr.modify} revokes the old
     * keys and domain at once, for work already posted too).
     */
    public boolean stillValid() {
        for (int i = 0; i < count; i++) {
            if (!regions[i].usable() || regions[i].currentKey() != keys[i]) {
                return false;
            }
        }
        return true;
    }

    /** Adds the pieces covering [from, from + length) of the message to a gather list. */
    public void gather(final FrameGather gather, final long from, final int length) {
        long skip = from;
        int left = length;
        for (int i = 0; i < count && left > 0; i++) {
            if (skip >= lengths[i]) {
                skip -= lengths[i];
                continue;
            }
            final int n = (int) Math.min(lengths[i] - skip, left);
            regions[i].addTo(gather, offsets[i] + skip, n);
            left -= n;
            skip = 0;
        }
    }

    /** Copies {@code length} bytes of a frame into the message at offset {@code at}. */
    public void place(final MemorySegment src, final long srcOffset, final long at, final int length) {
        long skip = at;
        long from = srcOffset;
        int left = length;
        for (int i = 0; i < count && left > 0; i++) {
            if (skip >= lengths[i]) {
                skip -= lengths[i];
                continue;
            }
            final int n = (int) Math.min(lengths[i] - skip, left);
            copyLastByteLast(src, from, regions[i].segment(), offsets[i] + skip, n);
            from += n;
            left -= n;
            skip = 0;
        }
    }

    /**
     * Whether one piece holds all of bytes [at, at + length) of the message, as {@link #lendPlace} needs. Raises
     * nothing.
     *
     * @param at     the first byte, from the message's start
     * @param length the bytes
     * @return true if one piece holds them
     */
    public boolean holds(final long at, final int length) {
        long skip = at;
        for (int i = 0; i < count; i++) {
            if (skip < lengths[i]) {
                return lengths[i] - skip >= length;
            }
            skip -= lengths[i];
        }
        return false;
    }

    /**
     * Lends the memory of bytes [at, at + length) of the message to a gather list, for a receive straight into place,
     * if one piece holds them all. Raises nothing.
     *
     * @return whether one piece holds them (and was lent)
     */
    public boolean lendPlace(final FrameGather target, final long at, final int length) {
        long skip = at;
        for (int i = 0; i < count; i++) {
            if (skip >= lengths[i]) {
                skip -= lengths[i];
                continue;
            }
            if (lengths[i] - skip < length) {
                return false;
            }
            regions[i].addTo(target, offsets[i] + skip, length);
            return true;
        }
        return false;
    }

    public static void copyLastByteLast(final MemorySegment src, final long srcOffset, final MemorySegment dst,
                                 final long dstOffset, final int n) {
        if (n <= 0) {
            return;
        }
        if (n > 1) {
            MemorySegment.copy(src, srcOffset, dst, dstOffset, n - 1);
        }
        VarHandle.releaseFence(); // every earlier byte is visible before the last one
        dst.set(ValueLayout.JAVA_BYTE, dstOffset + n - 1, src.get(ValueLayout.JAVA_BYTE, srcOffset + n - 1));
    }
}
