package io.jdet.internal.protocol;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A NIC's store for request frames that arrived beyond a gap: each is copied into a slot, acknowledged selectively,
 * and processed in order once the gap is filled. Shared by the NIC's queue pairs so that its memory is bounded
 * ({@link #SLOTS} frames) however many queue pairs there are; allocated on the first out-of-order frame, so a
 * loss-free NIC never pays for it. When every slot is taken, a frame is dropped unacknowledged and its sender
 * retransmits it later. Engine lock held; allocation free after the first use.
 */
public final class ReorderPool {
    /** Frames held at once, over all queue pairs of the NIC. */
    static final int SLOTS = 64;

    private final int frameBytes;
    private Arena arena;
    private MemorySegment[] slots;
    private final int[] lengths = new int[SLOTS];
    private final int[] free = new int[SLOTS];
    private int freeCount;

    public ReorderPool(final int frameBytes) {
        this.frameBytes = frameBytes;
    }

    /**
     * Copies a frame into a free slot.
     *
     * @return the slot, or -1 if none is free
     */
    int store(final MemorySegment frame, final int length) {
        if (slots == null) {
            arena = Arena.ofShared();
            final MemorySegment all = arena.allocate((long) SLOTS * frameBytes, 64);
            slots = new MemorySegment[SLOTS];
            for (int i = 0; i < SLOTS; i++) {
                slots[i] = all.asSlice((long) i * frameBytes, frameBytes);
                free[i] = SLOTS - 1 - i;
            }
            freeCount = SLOTS;
        }
        if (freeCount == 0 || length > frameBytes) {
            return -1;
        }
        final int slot = free[--freeCount];
        MemorySegment.copy(frame, 0, slots[slot], 0, length);
        lengths[slot] = length;
        return slot;
    }

    MemorySegment frame(final int slot) {
        return slots[slot];
    }

    int length(final int slot) {
        return lengths[slot];
    }

    void release(final int slot) {
        free[freeCount++] = slot;
    }

    public void close() {
        if (arena != null) {
            arena.close();
        }
    }
}
