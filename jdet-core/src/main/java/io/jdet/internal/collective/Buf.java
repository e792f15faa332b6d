package io.jdet.internal.collective;

import java.lang.foreign.MemorySegment;

/** A caller's data segment, resolved and checked at post time: its memory, address and local key. */
record Buf(MemorySegment seg, long addr, int key) {
    long length() {
        return seg.byteSize();
    }
}
