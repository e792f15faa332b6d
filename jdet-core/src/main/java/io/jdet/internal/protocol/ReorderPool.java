package io.jdet.internal.protocol;

import io.jdet.internal.wire.Frame;

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
    /** Where a received frame's payload lies: apart from its header for the fabric's lent payloads. */
    private final ProtocolNic nic;
    private Arena arena;
    private MemorySegment[] slots;
    private final int[] lengths = new int[SLOTS];
    private final int[] free = new int[SLOTS];
    private int freeCount;

    /**
     * Creates an empty pool for frames whose payload follows the header; raises nothing.
     *
     * @param frameBytes the largest frame
     */
    public ReorderPool(final int frameBytes) {
        this(frameBytes, null);
    }

    /**
     * Creates an empty pool for frames whose payload may lie apart from the header; raises nothing.
     *
     * @param frameBytes the largest frame
     * @param nic        the NIC whose frames it holds, which says where each one's payload lies (null: always right
     *                   after the header)
     */
    public ReorderPool(final int frameBytes, final ProtocolNic nic) {
        this.frameBytes = frameBytes;
        this.nic = nic;
    }

    /**
     * Copies a frame, header and payload (wherever that lies: {@link ProtocolNic#payload}), into a free slot.
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
        if (freeCount == 0 || length > frameBytes || nic != null && nic.placed(frame) > 0) {
            return -1; // (a placed frame is only ever the next one expected, never held: refused all the same)
        }
        final int slot = free[--freeCount];
        final int header = Math.min(length, Frame.HEADER_LENGTH);
        MemorySegment.copy(frame, 0, slots[slot], 0, header);
        if (nic == null) {
            MemorySegment.copy(frame, header, slots[slot], header, length - header);
        } else {
            MemorySegment.copy(nic.payload(frame), nic.payloadOffset(frame), slots[slot], header, length - header);
        }
        lengths[slot] = length;
        return slot;
    }

    /** Slots free now ({@link #SLOTS} before the first use); raises nothing. */
    int free() {
        return slots == null ? SLOTS : freeCount;
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
