package io.jdet.internal.verbs;

import io.jdet.ConnectionManager;

import java.lang.foreign.MemorySegment;

/**
 * What a NIC needs of its connection manager: the CM registers itself here (through the device's factory), so that
 * verbs hand CM frames, timer ticks and shutdown to the layer above without importing it. Every method runs with
 * the NIC's engine lock held and raises nothing.
 */
public interface CmHandler extends ConnectionManager {
    /**
     * A connection-manager frame arrived (header checked, destination queue pair 0).
     *
     * @param f      the frame, valid only during the call
     * @param opcode its CM opcode
     * @param peer   the link's handle of the sender
     */
    void onFrame(MemorySegment f, int opcode, long peer);

    /**
     * The NIC's timer tick: retransmit what is due.
     *
     * @param now the current {@link System#nanoTime()}
     */
    void onTimer(long now);

    /**
     * When {@link #onTimer} next has work (a retransmission due), as the last timer walk and the exchanges added
     * since planned it, so that the NIC's tick comes no later; {@link Long#MAX_VALUE} for none.
     *
     * @return the deadline on the {@link System#nanoTime()} clock
     */
    long nextDeadline();

    /** The NIC failed fatally: wake every caller waiting for a peer, so that it fails at once. */
    void nicFailed();

    /** The NIC closes: release what the CM holds. */
    void close();
}
