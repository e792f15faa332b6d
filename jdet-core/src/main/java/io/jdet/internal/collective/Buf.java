package io.jdet.internal.collective;

import io.jdet.internal.protocol.Region;

import java.lang.foreign.MemorySegment;

/**
 * A caller's data segment, resolved and checked at post time: the memory of the region it lies in, where in that
 * memory it starts, its address, length and local key. A request owns its bufs and refills them at each post, so
 * that posting allocates nothing. It keeps the region too, so that a collective can tell whether the region was
 * deregistered (or re-keyed) since the post.
 */
final class Buf {
    private Region owner;
    private MemorySegment region;
    private long offset;
    private long addr;
    private long length;
    private int key;

    Buf() {
    }

    /** A buf that is the whole of {@code seg} (for tests). */
    Buf(final MemorySegment seg, final long addr, final int key) {
        set(null, seg, 0, addr, seg.byteSize(), key);
    }

    /**
     * Refills this buf.
     *
     * @param mr           the region the segment lies in (null: memory no region can revoke, for tests)
     * @param regionMemory the memory of the region the segment lies in
     * @param at           where the segment starts in it
     * @param address      the segment's address
     * @param bytes        the segment's length
     * @param lKey         the segment's local key
     * @return this
     */
    Buf set(final Region mr, final MemorySegment regionMemory, final long at, final long address, final long bytes,
            final int lKey) {
        owner = mr;
        region = regionMemory;
        offset = at;
        addr = address;
        length = bytes;
        key = lKey;
        return this;
    }

    /**
     * Whether the collective may still touch this memory: its region is registered, its arena open and its key the
     * one the post named ({@code mr.modify} re-keys). Raises nothing.
     */
    boolean stillValid() {
        return owner == null || owner.usable() && owner.currentKey() == key;
    }

    /** The region the segment lies in (null for memory no region holds, in tests). */
    Region owner() {
        return owner;
    }

    MemorySegment region() {
        return region;
    }

    long offset() {
        return offset;
    }

    long addr() {
        return addr;
    }

    int key() {
        return key;
    }

    long length() {
        return length;
    }
}
