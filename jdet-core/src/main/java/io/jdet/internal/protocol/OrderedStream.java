package io.jdet.internal.protocol;

import java.lang.foreign.MemorySegment;

/** The receiving end of one sequenced stream (requests at the responder, responses at the requester). */
public interface OrderedStream {
    /**
     * The next in-order sequence number.
     *
     * @return it
     */
    int expected();

    /**
     * Runs the in-order frame {@code seq}.
     *
     * @param f      the frame
     * @param opcode its opcode
     * @param seq    its sequence number, {@link #expected()}
     * @param now    the current time
     * @return true if it was accepted ({@link #expected()} advanced) and the queue pair is still connected
     */
    boolean process(MemorySegment f, int opcode, int seq, long now);
}
