package io.jdet.internal.protocol;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * A NIC's scratch memory for {@link FrameSeal}: heap arrays of one frame each (the JDK's ciphers are fastest on
 * arrays, and allocate per call on direct buffers), shared by every protected queue pair of the NIC, since the
 * engine lock serialises their use. Allocated once, when the NIC's first protected connection is made.
 */
public final class SealBuffers {
    final byte[] header = new byte[io.jdet.internal.wire.Frame.HEADER_LENGTH];
    /** Bytes of keystream skipped per cipher call. */
    static final int SKIP_CHUNK = 4096;
    /** Where skipped keystream goes (a payload's last partial block, or blocks of frames never received):
     *  {@link #SKIP_CHUNK} zeros, then as many bytes written. */
    final byte[] skip = new byte[2 * SKIP_CHUNK];
    /** Frames out: the payload gathered, plain. */
    final byte[] txPlain;
    final MemorySegment txPlainSegment;
    /** Frames out: what goes on the wire after the header (ciphertext or nothing, tag, packet number). */
    final byte[] txSealed;
    final MemorySegment txSealedSegment;
    final ByteBuffer txSealedView;
    /** Frames in: the payload as received (ciphertext or plain) and the trailer. */
    final byte[] rxIn;
    /** Frames in: the plaintext, as the cipher writes it (after room for the header). */
    final byte[] rxPlain;
    /** Frames in: header and plaintext, handed on to the engine: native memory, as every link's frames are, so
     *  the engine's accesses see one kind of segment (a heap one among native ones defeats the JIT's inlining
     *  and escape analysis there, and the frame path allocates). */
    final MemorySegment rxFrame;

    /**
     * Scratch for frames up to a size.
     *
     * @param mtu the largest frame, header included
     */
    public SealBuffers(final int mtu) {
        txPlain = new byte[mtu];
        txPlainSegment = MemorySegment.ofArray(txPlain);
        txSealed = new byte[mtu + FrameSeal.TRAILER_LENGTH];
        txSealedSegment = MemorySegment.ofArray(txSealed);
        txSealedView = ByteBuffer.wrap(txSealed);
        rxIn = new byte[mtu + FrameSeal.TRAILER_LENGTH];
        rxPlain = new byte[mtu];
        rxFrame = Arena.ofAuto().allocate(mtu, 8);
    }
}
