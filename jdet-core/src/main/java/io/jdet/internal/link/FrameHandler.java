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

    /**
     * Whether this handler takes frames whose payload lies apart from the header ({@link #onFrame(MemorySegment,
     * int, long, MemorySegment, long)}): the in-process fabric then hands over the sender's own memory, so that
     * the payload is copied once, straight into its target. A handler that answers false gets every frame whole.
     *
     * @return true if the five-argument {@code onFrame} is implemented
     */
    default boolean takesPayloadApart() {
        return false;
    }

    /**
     * Handles one frame whose payload lies apart from its header: the header is the first bytes of {@code frame},
     * the payload ({@code length} minus the header length bytes) starts at {@code payloadOffset} of
     * {@code payload}, which is the sender's registered memory. Both are valid only during the call, and the
     * handler must copy what it keeps before it returns. Called only when {@link #takesPayloadApart()} is true.
     *
     * @param frame         the frame's header, from offset 0
     * @param length        the frame length in bytes, payload included
     * @param peer          the sender's handle
     * @param payload       the memory holding the payload
     * @param payloadOffset where the payload starts in it
     * @throws UnsupportedOperationException if this handler takes only whole frames
     */
    default void onFrame(final MemorySegment frame, final int length, final long peer, final MemorySegment payload,
                         final long payloadOffset) {
        throw new UnsupportedOperationException("this handler takes whole frames only");
    }
}
