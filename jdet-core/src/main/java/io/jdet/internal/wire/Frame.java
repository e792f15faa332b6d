package io.jdet.internal.wire;

import io.jdet.internal.wire.FrameCrc;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The jdet frame header: 80 bytes, little-endian throughout, the same layout for every opcode (fields an opcode
 * does not use are 0). The payload follows it. See {@code docs/PROTOCOL.md}.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-------------------------------+---------------+---------------+
 * |        magic 0x4A44           |   version     |    opcode     |  0
 * +-------------------------------+---------------+---------------+
 * |            flags              |        payload length         |  4
 * +-------------------------------+-------------------------------+
 * |                    destination queue pair                     |  8
 * |                      source queue pair                        | 12
 * |          sequence number (0 for unsequenced frames)           | 16
 * |     request-stream ack (last in-order request received)       | 20
 * |    response-stream ack (last in-order response received)      | 24
 * |                          message id                           | 28
 * |   selective ack bits (request stream: bit i = reqAck + 2 + i)  | 32
 * |                 CRC32C (of the frame, this field 0)           | 36
 * |                      address (64 bits)                        | 40
 * |                      operand 1 (64 bits)                      | 48
 * |                      operand 2 (64 bits)                      | 56
 * |               key (r_key, NAK status, disconnect code)        | 64
 * |                 length (whole message or request)             | 68
 * |                  offset (of this fragment)                    | 72
 * |                        immediate data                         | 76
 * +---------------------------------------------------------------+
 * </pre>
 * Allocation free: every accessor reads or writes the segment it is given.
 */
public final class Frame {
    /** Header size in bytes. */
    public static final int HEADER_LENGTH = 80;
    /** The magic value, "JD" in little-endian. */
    public static final short MAGIC = 0x444A;
    /** The protocol version this build speaks. */
    public static final byte VERSION = 1;

    /** Offset of the magic value. */
    public static final int MAGIC_OFFSET = 0;
    /** Offset of the version. */
    public static final int VERSION_OFFSET = 2;
    /** Offset of the opcode. */
    public static final int OPCODE_OFFSET = 3;
    /** Offset of the flags. */
    public static final int FLAGS_OFFSET = 4;
    /** Offset of the payload length. */
    public static final int PAYLOAD_LENGTH_OFFSET = 6;
    /** Offset of the destination queue pair number. */
    public static final int DST_QP_OFFSET = 8;
    /** Offset of the source queue pair number. */
    public static final int SRC_QP_OFFSET = 12;
    /** Offset of the sequence number. */
    public static final int SEQ_OFFSET = 16;
    /** Offset of the request-stream acknowledgement. */
    public static final int REQ_ACK_OFFSET = 20;
    /** Offset of the response-stream acknowledgement. */
    public static final int RSP_ACK_OFFSET = 24;
    /** Offset of the message id. */
    public static final int MSG_ID_OFFSET = 28;
    /** Offset of the selective-ack bits. */
    public static final int SACK_OFFSET = 32;
    /** Offset of the CRC. */
    public static final int CRC_OFFSET = FrameCrc.CRC_OFFSET;
    /** Offset of the 64-bit address. */
    public static final int ADDRESS_OFFSET = 40;
    /** Offset of the first 64-bit operand. */
    public static final int OPERAND1_OFFSET = 48;
    /** Offset of the second 64-bit operand. */
    public static final int OPERAND2_OFFSET = 56;
    /** Offset of the key. */
    public static final int KEY_OFFSET = 64;
    /** Offset of the message length. */
    public static final int LENGTH_OFFSET = 68;
    /** Offset of the fragment offset. */
    public static final int FRAGMENT_OFFSET = 72;
    /** Offset of the immediate data. */
    public static final int IMMEDIATE_OFFSET = 76;

    /** Request stream: a send fragment. */
    public static final int OP_SEND = 0;
    /** Request stream: an RDMA write fragment. */
    public static final int OP_WRITE = 1;
    /** Request stream: an RDMA read request. */
    public static final int OP_READ = 2;
    /** Request stream: a compare-and-swap request. */
    public static final int OP_COMP_EXCH = 3;
    /** Request stream: a fetch-and-add request. */
    public static final int OP_FETCH_ADD = 4;
    /** Unsequenced: acknowledgements only. */
    public static final int OP_ACK = 6;
    /** Unsequenced: the sender's queue pair disconnects; key holds the event code. */
    public static final int OP_DISCONNECT = 7;
    /** Response stream: an RDMA read response fragment. */
    public static final int OP_READ_RESP = 16;
    /** Response stream: an atomic response; operand 1 holds the original value. */
    public static final int OP_ATOMIC_RESP = 17;
    /** Unsequenced: a negative acknowledgement of request {@code seq}; key holds the status, length the event. */
    public static final int OP_NAK = 18;

    /** Connection manager, unsequenced, to queue pair 0: a connection request. */
    public static final int OP_CM_REQUEST = 32;
    /** Connection manager, unsequenced, to queue pair 0: the request was accepted. */
    public static final int OP_CM_ACCEPT = 33;
    /** Connection manager, unsequenced, to queue pair 0: the request was rejected; length holds the reason. */
    public static final int OP_CM_REJECT = 34;
    /** Connection manager, unsequenced, to queue pair 0: the acceptance arrived; the connection is ready to use. */
    public static final int OP_CM_READY = 35;
    /** Connection manager, unsequenced, to queue pair 0: disconnect the queue pair named by key. */
    public static final int OP_CM_DISCONNECT = 36;
    /** Connection manager, unsequenced, to queue pair 0: the disconnect was done. */
    public static final int OP_CM_DISCONNECT_REPLY = 37;
    /**
     * Connection manager, unsequenced, to queue pair 0: the request's address is not validated yet; operand 2
     * holds a cookie the requester repeats in its request.
     */
    public static final int OP_CM_COOKIE = 38;

    /** Flag: the last fragment of a message. */
    public static final int FLAG_LAST = 0x4000;
    /** Flag: the immediate field is valid. */
    public static final int FLAG_IMMEDIATE = 0x2000;
    /** Flag: solicited event. */
    public static final int FLAG_SOLICITED = 0x1000;
    /** Flag: acknowledge promptly. */
    public static final int FLAG_FORCE_ACK = 0x0800;
    /** Flag, on an ACK only: the SACK field describes the response stream (bit i = rspAck + 2 + i). */
    public static final int FLAG_RESPONSE_SACK = 0x0100;
    /** Flag: the key field names a remote key to invalidate (send with invalidate). */
    public static final int FLAG_INVALIDATE = 0x0200;

    /**
     * Flag: a protected frame. On a queue pair's frame, a 24-byte trailer (tag, packet number) follows the payload
     * and the payload length excludes it; on a connection manager frame, the payload ends with a key-exchange block.
     * See {@code docs/PROTOCOL.md}.
     */
    public static final int FLAG_PROTECTED = 0x0400;
    /**
     * Bytes a {@link #FLAG_PROTECTED} frame carries after its payload (tag, packet number and stream block), not counted in its
     * payload length: a link that splits a datagram into frames adds them.
     */
    public static final int PROTECTED_TRAILER_LENGTH = 32;

    /** Every flag this version defines; a frame with any other bit set is malformed. */
    public static final int ALL_FLAGS = FLAG_LAST | FLAG_IMMEDIATE | FLAG_SOLICITED | FLAG_FORCE_ACK
        | FLAG_RESPONSE_SACK | FLAG_INVALIDATE | FLAG_PROTECTED;

    /** NAK status: the receiver was not ready (no receive posted); retry later. */
    public static final int NAK_RNR = 0xFFFF;

    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private Frame() {
    }

    /**
     * Writes a header with every field; fields an opcode does not use must be given as 0.
     *
     * @param h             the header memory, at least {@link #HEADER_LENGTH} bytes
     * @param opcode        the opcode
     * @param flags         the flags
     * @param payloadLength the payload length in this frame
     * @param dstQp         destination queue pair
     * @param srcQp         source queue pair
     * @param seq           sequence number, 0 when unsequenced
     * @param reqAck        last in-order request received
     * @param rspAck        last in-order response received
     * @param msgId         message id
     */
    public static void writeBase(final MemorySegment h, final int opcode, final int flags, final int payloadLength,
                                 final int dstQp, final int srcQp, final int seq, final int reqAck,
                                 final int rspAck, final int msgId) {
        h.set(U16, MAGIC_OFFSET, MAGIC);
        h.set(ValueLayout.JAVA_BYTE, VERSION_OFFSET, VERSION);
        h.set(ValueLayout.JAVA_BYTE, OPCODE_OFFSET, (byte) opcode);
        h.set(U16, FLAGS_OFFSET, (short) flags);
        h.set(U16, PAYLOAD_LENGTH_OFFSET, (short) payloadLength);
        h.set(U32, DST_QP_OFFSET, dstQp);
        h.set(U32, SRC_QP_OFFSET, srcQp);
        h.set(U32, SEQ_OFFSET, seq);
        h.set(U32, REQ_ACK_OFFSET, reqAck);
        h.set(U32, RSP_ACK_OFFSET, rspAck);
        h.set(U32, MSG_ID_OFFSET, msgId);
        h.set(U32, SACK_OFFSET, 0);
        h.set(U32, CRC_OFFSET, 0);
    }

    /**
     * Writes the extension fields.
     *
     * @param h         the header memory
     * @param address   the address
     * @param operand1  operand 1
     * @param operand2  operand 2
     * @param key       the key
     * @param length    the message length
     * @param offset    the fragment offset
     * @param immediate the immediate data
     */
    public static void writeExtension(final MemorySegment h, final long address, final long operand1,
                                      final long operand2, final int key, final int length, final int offset,
                                      final int immediate) {
        h.set(U64, ADDRESS_OFFSET, address);
        h.set(U64, OPERAND1_OFFSET, operand1);
        h.set(U64, OPERAND2_OFFSET, operand2);
        h.set(U32, KEY_OFFSET, key);
        h.set(U32, LENGTH_OFFSET, length);
        h.set(U32, FRAGMENT_OFFSET, offset);
        h.set(U32, IMMEDIATE_OFFSET, immediate);
    }

    /** @param f a frame @return its magic value */
    public static short magic(final MemorySegment f) {
        return f.get(U16, MAGIC_OFFSET);
    }

    /** @param f a frame @return its version */
    public static byte version(final MemorySegment f) {
        return f.get(ValueLayout.JAVA_BYTE, VERSION_OFFSET);
    }

    /** @param f a frame @return its opcode */
    public static int opcode(final MemorySegment f) {
        return f.get(ValueLayout.JAVA_BYTE, OPCODE_OFFSET) & 0xFF;
    }

    /** @param f a frame @return its flags */
    public static int flags(final MemorySegment f) {
        return f.get(U16, FLAGS_OFFSET) & 0xFFFF;
    }

    /** @param f a frame @return its payload length */
    public static int payloadLength(final MemorySegment f) {
        return f.get(U16, PAYLOAD_LENGTH_OFFSET) & 0xFFFF;
    }

    /** @param f a frame @return its destination queue pair */
    public static int dstQp(final MemorySegment f) {
        return f.get(U32, DST_QP_OFFSET);
    }

    /** @param f a frame @return its source queue pair */
    public static int srcQp(final MemorySegment f) {
        return f.get(U32, SRC_QP_OFFSET);
    }

    /** @param f a frame @return its sequence number */
    public static int seq(final MemorySegment f) {
        return f.get(U32, SEQ_OFFSET);
    }

    /** @param f a frame @return its request-stream acknowledgement */
    public static int reqAck(final MemorySegment f) {
        return f.get(U32, REQ_ACK_OFFSET);
    }

    /** @param f a frame @return its response-stream acknowledgement */
    public static int rspAck(final MemorySegment f) {
        return f.get(U32, RSP_ACK_OFFSET);
    }

    /** @param f a frame @return its message id */
    public static int msgId(final MemorySegment f) {
        return f.get(U32, MSG_ID_OFFSET);
    }

    /** @param f a frame @return its selective-ack bits */
    public static int sack(final MemorySegment f) {
        return f.get(U32, SACK_OFFSET);
    }

    /**
     * Sets the selective-ack bits of a header written by {@link #writeBase}.
     *
     * @param h    the header memory
     * @param bits bit i set: request {@code reqAck + 2 + i} was received
     */
    public static void sack(final MemorySegment h, final int bits) {
        h.set(U32, SACK_OFFSET, bits);
    }

    /**
     * Whether an opcode belongs to the connection manager.
     *
     * @param opcode an opcode
     * @return true for the {@code OP_CM_*} opcodes
     */
    public static boolean isConnectionManager(final int opcode) {
        return opcode >= OP_CM_REQUEST && opcode <= OP_CM_COOKIE;
    }

    /**
     * The bytes a frame carries after its payload: the seal's trailer ({@link #PROTECTED_TRAILER_LENGTH}) for a
     * protected frame of a queue pair, none for a connection manager frame (protected or not: its MAC is in its
     * payload) or a plain one.
     *
     * @param flags  the frame's flags
     * @param opcode the frame's opcode
     * @return the trailer's length
     */
    public static int trailerLength(final int flags, final int opcode) {
        return (flags & FLAG_PROTECTED) != 0 && !isConnectionManager(opcode) ? PROTECTED_TRAILER_LENGTH : 0;
    }

    /**
     * The bytes a frame says it occupies (header, payload, trailer), from the header at {@code at} of {@code buf}:
     * what a link that carries several frames in one datagram, or frames in padded Ethernet frames, splits by. The
     * caller has checked that a whole header lies there; the result is a claim to check against what arrived.
     *
     * @param buf the memory holding the frame
     * @param at  where its header starts
     * @return header + payload + trailer bytes, at most 65615
     */
    public static int wireLength(final MemorySegment buf, final long at) {
        final int flags = buf.get(U16, at + FLAGS_OFFSET) & 0xFFFF;
        final int opcode = buf.get(ValueLayout.JAVA_BYTE, at + OPCODE_OFFSET) & 0xFF;
        return HEADER_LENGTH + (buf.get(U16, at + PAYLOAD_LENGTH_OFFSET) & 0xFFFF) + trailerLength(flags, opcode);
    }

    /** @param f a frame @return its address */
    public static long address(final MemorySegment f) {
        return f.get(U64, ADDRESS_OFFSET);
    }

    /** @param f a frame @return its operand 1 */
    public static long operand1(final MemorySegment f) {
        return f.get(U64, OPERAND1_OFFSET);
    }

    /** @param f a frame @return its operand 2 */
    public static long operand2(final MemorySegment f) {
        return f.get(U64, OPERAND2_OFFSET);
    }

    /** @param f a frame @return its key */
    public static int key(final MemorySegment f) {
        return f.get(U32, KEY_OFFSET);
    }

    /** @param f a frame @return its message length */
    public static int length(final MemorySegment f) {
        return f.get(U32, LENGTH_OFFSET);
    }

    /** @param f a frame @return its fragment offset */
    public static int offset(final MemorySegment f) {
        return f.get(U32, FRAGMENT_OFFSET);
    }

    /** @param f a frame @return its immediate data */
    public static int immediate(final MemorySegment f) {
        return f.get(U32, IMMEDIATE_OFFSET);
    }

    /**
     * Wraparound-safe sequence comparison.
     *
     * @param a a sequence number
     * @param b another
     * @return true if a comes after b
     */
    public static boolean after(final int a, final int b) {
        return a - b > 0;
    }
}
