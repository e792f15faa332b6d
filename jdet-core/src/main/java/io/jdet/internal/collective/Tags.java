package io.jdet.internal.collective;

import io.jdet.DetException;
import io.jdet.Errno;

import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;

/** The tags joined by groups of this process, for EEXIST: a tag has one size, and each rank one group. */
final class Tags {
    private static final Map<Long, Entry> JOINED = new HashMap<>();

    private record Entry(int size, BitSet ranks) {
    }

    private Tags() {
    }

    static synchronized void claim(final long tag, final int size, final int rank) {
        final Entry e = JOINED.get(tag);
        if (e == null) {
            final BitSet ranks = new BitSet(size);
            ranks.set(rank);
            JOINED.put(tag, new Entry(size, ranks));
            return;
        }
        if (e.size != size) {
            throw new DetException(Errno.EEXIST, "tag 0x" + Long.toHexString(tag) + " was joined with size " + e.size);
        }
        if (e.ranks.get(rank)) {
            throw new DetException(Errno.EEXIST, "rank " + rank + " of tag 0x" + Long.toHexString(tag)
                + " is taken in this process");
        }
        e.ranks.set(rank);
    }

    static synchronized void release(final long tag, final int rank) {
        final Entry e = JOINED.get(tag);
        if (e != null) {
            e.ranks.clear(rank);
            if (e.ranks.isEmpty()) {
                JOINED.remove(tag);
            }
        }
    }
}
