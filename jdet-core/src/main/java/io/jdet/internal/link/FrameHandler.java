package io.jdet.internal.link;

import java.lang.foreign.MemorySegment;

/** Takes received frames from a {@link Link}. */
@FunctionalInterface
public interface FrameHandler {
    /**
     * Handles one frame whose CRC was right. The bytes are valid only during the call.
     *
     * @param frame  the frame's memory, from offset 0
     * @param length the frame length in bytes
     * @param peer   the sender's handle, comparable with {@link Link#resolve} results
     */
    void onFrame(MemorySegment frame, int length, long peer);
}
