package io.jdet.internal.wire;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * The payload of a frame as a list of pieces of registered memory: the engine fills it, a link gathers it into a
 * datagram or a ring slot without an intermediate copy. Reused for every frame; allocation free.
 */
public final class FrameGather {
    private final MemorySegment[] segments;
    private final ByteBuffer[] views;
    private final long[] offsets;
    private final int[] lengths;
    /** Whether each piece came through {@link #lend}. */
    private final boolean[] lent;
    private int count;
    private int totalLength;
    /** Whether every piece so far came through {@link #lend}: memory a link may read after {@code send} returns. */
    private boolean lendable = true;

    /**
     * Creates a gather list.
     *
     * @param capacity the most pieces
     */
    public FrameGather(final int capacity) {
        segments = new MemorySegment[capacity];
        views = new ByteBuffer[capacity];
        offsets = new long[capacity];
        lengths = new int[capacity];
        lent = new boolean[capacity];
    }

    /** Empties the list. */
    public void clear() {
        for (int i = 0; i < count; i++) {
            segments[i] = null;
            views[i] = null;
        }
        count = 0;
        totalLength = 0;
        lendable = true;
    }

    /**
     * Appends a piece.
     *
     * @param segment the memory
     * @param view    a byte buffer over the same memory from its first byte (for CRC computation); its position
     *                and limit are changed by users of the gather
     * @param offset  the offset of the first byte in it
     * @param length  the byte count
     */
    public void add(final MemorySegment segment, final ByteBuffer view, final long offset, final int length) {
        lendable = false;
        append(segment, view, offset, length, false);
    }

    /**
     * Appends a piece of registered memory that a link may read later than {@code send}, up to the moment the
     * frame is consumed by its receiver: the verbs contract keeps it unchanged until the work request completes,
     * which needs the receiver's acknowledgement, and the engine calls {@code Link#settle} before anything else
     * lets the application reuse or free it (deregistration, a flush). Raises nothing.
     *
     * @param segment the memory
     * @param view    a byte buffer over the same memory from its first byte (see {@link #add})
     * @param offset  the offset of the first byte in it
     * @param length  the byte count
     */
    public void lend(final MemorySegment segment, final ByteBuffer view, final long offset, final int length) {
        append(segment, view, offset, length, true);
    }

    /**
     * Whether a link may carry a reference to the payload instead of its bytes: it has pieces, and all came
     * through {@link #lend}. Raises nothing.
     *
     * @return true if the payload is lent registered memory
     */
    public boolean lendable() {
        return lendable && count > 0;
    }

    private void append(final MemorySegment segment, final ByteBuffer view, final long offset, final int length,
                        final boolean isLent) {
        lent[count] = isLent;
        segments[count] = segment;
        views[count] = view;
        offsets[count] = offset;
        lengths[count] = length;
        count++;
        totalLength += length;
    }

    /**
     * Whether one piece is lent registered memory ({@link #lend}), which a link may read after {@code send} returns
     * (the UDP link points the kernel at it); a piece added by {@link #add} must be copied during {@code send}.
     *
     * @param i a piece index
     * @return true if the piece came through {@link #lend}
     */
    public boolean lent(final int i) {
        return lent[i];
    }

    /** @return the number of pieces */
    public int count() {
        return count;
    }

    /** @return the capacity in pieces */
    public int capacity() {
        return segments.length;
    }

    /** @return the payload length, all pieces together */
    public int totalLength() {
        return totalLength;
    }

    /**
     * @param i a piece index
     * @return its memory
     */
    public MemorySegment segment(final int i) {
        return segments[i];
    }

    /**
     * @param i a piece index
     * @return a byte buffer over its memory, from the memory's first byte
     */
    public ByteBuffer view(final int i) {
        return views[i];
    }

    /**
     * @param i a piece index
     * @return the offset of its first byte in its memory
     */
    public long offset(final int i) {
        return offsets[i];
    }

    /**
     * @param i a piece index
     * @return its length
     */
    public int length(final int i) {
        return lengths[i];
    }

    /**
     * Copies the whole payload into contiguous memory.
     *
     * @param target where to copy
     * @param offset the offset of the first byte in the target
     */
    public void copyTo(final MemorySegment target, final long offset) {
        long at = offset;
        for (int i = 0; i < count; i++) {
            MemorySegment.copy(segments[i], offsets[i], target, at, lengths[i]);
            at += lengths[i];
        }
    }
}
