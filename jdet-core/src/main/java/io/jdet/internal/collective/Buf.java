package io.jdet.internal.collective;

import java.lang.foreign.MemorySegment;

/**
 * A caller's data segment, resolved and checked at post time: the memory of the region it lies in, where in that
 * memory it starts, its address, length and local key. A request owns its bufs and refills them at each post, so
 * that posting allocates nothing.
 */
final class Buf {
    private MemorySegment region;
    private long offset;
    private long addr;
    private long length;
    private int key;

    Buf() {
    }

    /** A buf that is the whole of {@code seg} (for tests). */
    Buf(final MemorySegment seg, final long addr, final int key) {
        set(seg, 0, addr, seg.byteSize(), key);
    }

    /**
     * Refills this buf.
     *
     * @param regionMemory the memory of the region the segment lies in
     * @param at           where the segment starts in it
     * @param address      the segment's address
     * @param bytes        the segment's length
     * @param lKey         the segment's local key
     * @return this
     */
    Buf set(final MemorySegment regionMemory, final long at, final long address, final long bytes, final int lKey) {
        region = regionMemory;
        offset = at;
        addr = address;
        length = bytes;
        key = lKey;
        return this;
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
