package io.jdet.internal.protocol;

import io.jdet.internal.wire.FrameGather;

import java.lang.foreign.MemorySegment;

/** What the protocol reads of a registered memory region: whether it may still be touched, and its memory. */
public interface Region {
    /**
     * Whether the engine may still read and write the region (not deregistered, its arena still open); raises
     * nothing.
     *
     * @return true if usable
     */
    boolean usable();

    /**
     * The region's current local key; raises nothing. {@code mr.modify} issues new keys, so a key read at post time
     * that no longer matches means the post was revoked.
     *
     * @return the l_key
     */
    int currentKey();

    /**
     * Lends {@code length} bytes at {@code offset} of the region to a frame's gather list
     * ({@link FrameGather#lend}): a link may read them until the frame is consumed or the link settles, or, named
     * by a receive into place ({@link Responder#placeable}), write them during that receive; raises nothing (the
     * caller has checked the range).
     *
     * @param gather the gather list
     * @param offset from the start of the region
     * @param length bytes
     */
    void addTo(FrameGather gather, long offset, int length);

    /**
     * The region's memory, for placement; raises nothing.
     *
     * @return the segment
     */
    MemorySegment segment();
}
