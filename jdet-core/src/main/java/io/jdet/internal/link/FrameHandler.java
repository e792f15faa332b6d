package io.jdet.internal.link;

import io.jdet.internal.wire.FrameGather;

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

    /**
     * Whether the link should look at each datagram's header before it receives it, and ask {@link #placement}
     * where its payload goes: true while a long send, RDMA write or read response is arriving whose next fragment can
     * be placed, so that only such traffic pays for the look (one more system call per datagram). Raises nothing.
     *
     * @return true to look
     */
    default boolean placing() {
        return false;
    }

    /**
     * Where the payload of a datagram that holds one frame may be received straight into its target, so that it is
     * copied once (by the kernel) instead of twice. The header is not checked by its CRC yet: the handler names a
     * target only where the true frame's bytes go whatever the header says (the next fragment of a write whose whole
     * range was checked, the receive a send consumes, a read's own memory), so that a corrupted header can only place
     * bytes into a message not yet complete, and the CRC, checked after, decides whether the frame counts. Changes no
     * state. Raises nothing.
     *
     * @param header the datagram's first {@link io.jdet.internal.wire.Frame#HEADER_LENGTH} bytes
     * @param length the datagram's length
     * @param peer   the sender's handle
     * @param target where to name the memory: one piece lent by the target region, cleared by the caller
     * @return how many bytes from the payload's first go into {@code target} (the rest of the frame is received
     *         after the header, as usual), or 0 to receive the datagram as usual
     */
    default int placement(final MemorySegment header, final int length, final long peer, final FrameGather target) {
        return 0;
    }

    /**
     * Handles a frame, CRC checked, whose payload's first {@code placed} bytes were received where {@link #placement}
     * named: {@code frame} holds the header, then the rest of the payload. Valid only during the call.
     *
     * @param frame  the header, then the payload from byte {@code placed} on
     * @param length the frame length in bytes, the placed payload included
     * @param peer   the sender's handle
     * @param placed how many payload bytes already lie in their target
     * @throws UnsupportedOperationException if this handler names no placement
     */
    default void onPlacedFrame(final MemorySegment frame, final int length, final long peer, final int placed) {
        throw new UnsupportedOperationException("this handler names no placement");
    }
}
