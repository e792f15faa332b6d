package io.jdet.internal.link;

import io.jdet.internal.wire.Frame;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The Ethernet header around a jdet frame on the raw link, and the checks every received frame passes before its
 * CRC is even computed: long enough for an Ethernet and a jdet header, the link's EtherType, addressed to this
 * NIC's MAC (not broadcast, multicast or another station's, as a promiscuous interface delivers), not sent by
 * this NIC (an interface that loops frames back), from a unicast MAC, and no shorter than its own header says (a
 * frame is trimmed to that length, so Ethernet padding never reaches the CRC). Allocation free.
 *
 * <pre>
 * 0       6       12   14                         14 + 80 + payload length
 * | dst   | src   |type| jdet frame (header, payload) | padding, if any
 * </pre>
 */
final class EthFrame {
    /** The Ethernet header: destination, source, EtherType. */
    static final int HEADER = 14;
    static final int DST = 0;
    static final int SRC = 6;
    static final int TYPE = 12;

    /** Verdicts of {@link #check}: a jdet frame of that length, or a negative reason to drop. */
    static final int SHORT = -1;
    static final int WRONG_TYPE = -2;
    static final int OWN = -3;
    static final int NOT_FOR_US = -4;
    static final int BAD_SOURCE = -5;
    static final int TRUNCATED = -6;

    private EthFrame() {
    }

    /**
     * Writes the Ethernet header.
     *
     * @param buffer    where the frame starts
     * @param dst       the destination MAC
     * @param src       the source MAC
     * @param etherType the EtherType
     */
    static void writeHeader(final MemorySegment buffer, final long dst, final long src, final int etherType) {
        putMac(buffer, DST, dst);
        putMac(buffer, SRC, src);
        buffer.set(Posix.NET_SHORT, TYPE, (short) etherType);
    }

    /**
     * Checks a received Ethernet frame.
     *
     * @param buffer    the frame, from its Ethernet header
     * @param length    the bytes received
     * @param ownMac    this NIC's MAC
     * @param etherType the link's EtherType
     * @return the length of the jdet frame after the Ethernet header, or a negative verdict ({@link #SHORT} ...)
     */
    static int check(final MemorySegment buffer, final int length, final long ownMac, final int etherType) {
        if (length < HEADER + Frame.HEADER_LENGTH || length > buffer.byteSize()) {
            return SHORT;
        }
        if ((buffer.get(Posix.NET_SHORT, TYPE) & 0xFFFF) != etherType) {
            return WRONG_TYPE;
        }
        final long src = mac(buffer, SRC);
        if (src == ownMac) {
            return OWN;
        }
        if (mac(buffer, DST) != ownMac) {
            return NOT_FOR_US;
        }
        if (!EthAddress.unicast(src)) {
            return BAD_SOURCE;
        }
        final int declared = Frame.wireLength(buffer, HEADER); // a protected frame's trailer included
        return declared > length - HEADER ? TRUNCATED : declared;
    }

    /**
     * Reads a MAC.
     *
     * @param buffer the memory
     * @param offset where the six bytes start
     * @return the MAC, 48 bits
     */
    static long mac(final MemorySegment buffer, final long offset) {
        return (buffer.get(Posix.NET_SHORT, offset) & 0xFFFFL) << 32
            | buffer.get(Posix.NET_INT, offset + 2) & 0xFFFF_FFFFL;
    }

    private static void putMac(final MemorySegment buffer, final long offset, final long mac) {
        buffer.set(Posix.NET_SHORT, offset, (short) (mac >>> 32));
        buffer.set(Posix.NET_INT, offset + 2, (int) mac);
    }
}
