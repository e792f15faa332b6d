package io.jdet.internal.link;

import java.util.Arrays;

/**
 * The rings a shared-memory NIC sends into, by peer id: an open-addressing table (linear probing) from a positive
 * {@code long} to a ring, so that sending looks a peer up without boxing or allocating. A peer known to be
 * unreachable is kept with a null ring, so it is not looked for again. Bounded: past {@link #MAX_PEERS} entries, a
 * new reachable peer makes the table forget the unreachable ones, and a new unreachable one is not remembered. Used
 * under the engine lock only.
 */
final class ShmPeers {
    /** The most peers remembered; a hostile writer inventing sender ids cannot grow the table past it. */
    static final int MAX_PEERS = 4096;

    private long[] ids = new long[16];
    private ShmRing[] rings = new ShmRing[16];
    private boolean[] known = new boolean[16];
    private int size;

    /**
     * Whether a peer is in the table (reachable or not).
     *
     * @param id the peer id
     * @return true if {@link #put} recorded it
     */
    boolean contains(final long id) {
        return known[find(id)];
    }

    /**
     * The ring of a peer.
     *
     * @param id the peer id
     * @return its ring, or null if unknown or unreachable
     */
    ShmRing get(final long id) {
        return rings[find(id)];
    }

    /**
     * Records a peer.
     *
     * @param id   the peer id
     * @param ring its ring, or null if it cannot be reached
     * @return false if the table is full and the peer was not recorded
     */
    boolean put(final long id, final ShmRing ring) {
        int i = find(id);
        if (!known[i]) {
            if (size >= MAX_PEERS) {
                // Full: a reachable peer takes the room of the unreachable ones (ids a hostile writer may have
                // invented, which the engine answered), which are forgotten; an unreachable one is not remembered.
                if (ring == null || !forgetUnreachable()) {
                    return false;
                }
                i = find(id);
            }
            if ((size + 1) * 2 > ids.length) {
                grow();
                i = find(id);
            }
            size++;
        }
        ids[i] = id;
        rings[i] = ring;
        known[i] = true;
        return true;
    }

    /**
     * Every ring recorded, for closing.
     *
     * @return the rings, nulls left out
     */
    ShmRing[] rings() {
        return Arrays.stream(rings).filter(r -> r != null).toArray(ShmRing[]::new);
    }

    /** Drops every peer recorded as unreachable; @return whether that made room */
    private boolean forgetUnreachable() {
        final long[] oldIds = ids;
        final ShmRing[] oldRings = rings;
        final boolean[] oldKnown = known;
        ids = new long[oldIds.length];
        rings = new ShmRing[oldIds.length];
        known = new boolean[oldIds.length];
        size = 0;
        for (int i = 0; i < oldIds.length; i++) {
            if (oldKnown[i] && oldRings[i] != null) {
                final int j = find(oldIds[i]);
                ids[j] = oldIds[i];
                rings[j] = oldRings[i];
                known[j] = true;
                size++;
            }
        }
        return size < MAX_PEERS;
    }

    private int find(final long id) {
        final int mask = ids.length - 1;
        int i = (int) (mix(id) & mask);
        while (known[i] && ids[i] != id) {
            i = (i + 1) & mask;
        }
        return i;
    }

    private static long mix(final long id) {
        final long h = id * 0x9E3779B97F4A7C15L;
        return h ^ (h >>> 32);
    }

    private void grow() {
        final long[] oldIds = ids;
        final ShmRing[] oldRings = rings;
        final boolean[] oldKnown = known;
        ids = new long[oldIds.length * 2];
        rings = new ShmRing[oldIds.length * 2];
        known = new boolean[oldIds.length * 2];
        for (int i = 0; i < oldIds.length; i++) {
            if (oldKnown[i]) {
                final int j = find(oldIds[i]);
                ids[j] = oldIds[i];
                rings[j] = oldRings[i];
                known[j] = true;
            }
        }
    }
}
