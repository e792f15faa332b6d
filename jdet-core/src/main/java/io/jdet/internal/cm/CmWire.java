package io.jdet.internal.cm;

import io.jdet.internal.protocol.Isn;
import io.jdet.internal.verbs.NicImpl;
import io.jdet.internal.wire.Frame;
import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;

/**
 * Builds and sends connection manager frames: unsequenced, to queue pair 0, with the private data as payload.
 * Field use per opcode is in {@code docs/PROTOCOL.md}. Engine lock held; control path, so its copies do not
 * matter.
 */
final class CmWire {
    private final NicImpl nic;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment header = arena.allocate(Frame.HEADER_LENGTH, 8);
    private final ByteBuffer headerView = header.asByteBuffer();
    private final MemorySegment data = arena.allocate(io.jdet.ConnectionManager.MAX_PRIVATE_DATA
        + CmHandshake.BLOCK_LENGTH + CmHandshake.MAC_LENGTH, 8);
    private final ByteBuffer dataView = data.asByteBuffer();
    private final FrameGather gather = new FrameGather(1);
    private final FrameCrc crc = new FrameCrc();
    /** The NIC closed: its buffers are freed and nothing is sent any more (engine lock held both ways). */
    private boolean closed;

    CmWire(final NicImpl nic) {
        this.nic = nic;
    }

    /**
     * Sends one frame; a frame the link refuses now is simply lost (the retransmission timer covers it).
     *
     * @param peer        the destination
     * @param opcode      an {@code OP_CM_*} opcode
     * @param srcQp       the sender's queue pair, or 0
     * @param id          the connection or disconnect id
     * @param key         the service id, or the queue pair a disconnect names
     * @param isns        request ISN in the low half, response ISN in the high half
     * @param limits      max_or in the low half, max_ir in the high half
     * @param reason      the reject reason, or 0
     * @param privateData the payload, possibly empty
     */
    void send(final long peer, final int opcode, final int srcQp, final int id, final int key, final long isns,
              final long limits, final int reason, final byte[] privateData) {
        send(peer, opcode, srcQp, id, key, isns, limits, reason, privateData, 0, 0);
    }

    /**
     * Sends one frame with a sequence number and a cookie (see the other {@code send} for the rest).
     *
     * @param seq    CM_DISCONNECT: the next request the sender would send, which the receiver must expect exactly
     * @param cookie CM_REQUEST and CM_COOKIE: the address-validation cookie (operand 2), 0 for none
     */
    void send(final long peer, final int opcode, final int srcQp, final int id, final int key, final long isns,
              final long limits, final int reason, final byte[] privateData, final int seq, final long cookie) {
        send(peer, opcode, srcQp, id, key, isns, limits, reason, privateData, seq, cookie, null);
    }

    /**
     * Sends one frame of a protected handshake (see the other {@code send} for the rest).
     *
     * @param block the key-exchange block and/or MAC after the private data, flagged {@code FLAG_PROTECTED}; null
     *              for none
     */
    void send(final long peer, final int opcode, final int srcQp, final int id, final int key, final long isns,
              final long limits, final int reason, final byte[] privateData, final int seq, final long cookie,
              final byte[] block) {
        if (closed) {
            return; // the NIC closed: a listener closed after it, say, has nobody left to answer
        }
        final int b = block == null ? 0 : block.length;
        final int n = privateData.length + b;
        Frame.writeBase(header, opcode, block == null ? 0 : Frame.FLAG_PROTECTED, n, 0, srcQp, seq, 0, 0, id);
        Frame.writeExtension(header, isns, limits, cookie, key, reason, 0, 0);
        gather.clear();
        if (n > 0) {
            MemorySegment.copy(privateData, 0, data, ValueLayout.JAVA_BYTE, 0, privateData.length);
            if (block != null) {
                MemorySegment.copy(block, 0, data, ValueLayout.JAVA_BYTE, privateData.length, b);
            }
            gather.add(data, dataView, 0, n);
        }
        crc.seal(header, headerView, Frame.HEADER_LENGTH, gather);
        if (nic.link.send(peer, header, Frame.HEADER_LENGTH, gather)) {
            nic.counters.framesSent++;
            nic.counters.cmSent++;
        } else {
            nic.counters.linkBusy++;
        }
    }

    /** Copies a frame's payload out as private data (without a protected handshake's block). */
    static byte[] privateData(final MemorySegment f) {
        final int n = Math.max(0, Math.min(Frame.payloadLength(f) - blockLength(f),
            io.jdet.ConnectionManager.MAX_PRIVATE_DATA));
        final byte[] bytes = new byte[n];
        MemorySegment.copy(f, ValueLayout.JAVA_BYTE, Frame.HEADER_LENGTH, bytes, 0, n);
        return bytes;
    }

    /**
     * The length of the protected-handshake block a CM frame ends with: REQUEST a key-exchange block, ACCEPT one
     * and a MAC, READY and DISCONNECT a MAC; 0 for an unprotected frame or another opcode.
     */
    static int blockLength(final MemorySegment f) {
        if ((Frame.flags(f) & Frame.FLAG_PROTECTED) == 0) {
            return 0;
        }
        return switch (Frame.opcode(f)) {
            case Frame.OP_CM_REQUEST -> CmHandshake.BLOCK_LENGTH;
            case Frame.OP_CM_ACCEPT -> CmHandshake.BLOCK_LENGTH + CmHandshake.MAC_LENGTH;
            case Frame.OP_CM_READY, Frame.OP_CM_DISCONNECT, Frame.OP_CM_REJECT -> CmHandshake.MAC_LENGTH;
            default -> 0;
        };
    }

    /**
     * Copies out a CM frame's protected-handshake block.
     *
     * @return the block, or null if the frame has none or is too short for it
     */
    static byte[] block(final MemorySegment f) {
        final int b = blockLength(f);
        final int n = Frame.payloadLength(f);
        if (b == 0 || n < b) {
            return null;
        }
        final byte[] bytes = new byte[b];
        MemorySegment.copy(f, ValueLayout.JAVA_BYTE, Frame.HEADER_LENGTH + n - b, bytes, 0, b);
        return bytes;
    }

    static long pack(final int low, final int high) {
        return Isn.pack(low, high);
    }

    static int low(final long packed) {
        return Isn.low(packed);
    }

    static int high(final long packed) {
        return Isn.high(packed);
    }

    void close() {
        closed = true;
        arena.close();
    }
}
