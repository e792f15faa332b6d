package io.jdet.internal.cm;

import io.jdet.ConnectionManager;
import io.jdet.internal.wire.Frame;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * How a received connection-manager frame is split into private data and handshake block: by its opcode and
 * protected flag, whatever length the peer claims.
 */
class CmWireTest {
    /** A CM frame whose payload bytes count up from 1; {@code claimed} goes in the header. */
    private static MemorySegment frame(final int opcode, final boolean protectedFlag, final int claimed,
                                       final int actual) {
        final MemorySegment f = MemorySegment.ofArray(new byte[Frame.HEADER_LENGTH + actual]);
        Frame.writeBase(f, opcode, protectedFlag ? Frame.FLAG_PROTECTED : 0, claimed, 0, 1, 0, 0, 0, 7);
        for (int i = 0; i < actual; i++) {
            f.set(ValueLayout.JAVA_BYTE, Frame.HEADER_LENGTH + i, (byte) (i + 1));
        }
        return f;
    }

    private static byte[] counting(final int from, final int n) {
        final byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (from + i + 1);
        }
        return b;
    }

    @Test
    void eachProtectedOpcodeCarriesItsBlockAtTheEnd() {
        final int block = CmHandshake.BLOCK_LENGTH;
        final int mac = CmHandshake.MAC_LENGTH;
        final int[][] cases = {
            {Frame.OP_CM_REQUEST, block}, {Frame.OP_CM_ACCEPT, block + mac}, {Frame.OP_CM_READY, mac},
            {Frame.OP_CM_DISCONNECT, mac}, {Frame.OP_CM_REJECT, mac}, {Frame.OP_CM_DISCONNECT_REPLY, 0},
            {Frame.OP_CM_COOKIE, 0},
        };
        for (final int[] c : cases) {
            final int n = 10 + c[1];
            final MemorySegment f = frame(c[0], true, n, n);
            assertEquals(c[1], CmWire.blockLength(f), "opcode " + c[0]);
            assertArrayEquals(counting(0, 10), CmWire.privateData(f), "opcode " + c[0]);
            if (c[1] == 0) {
                assertNull(CmWire.block(f), "opcode " + c[0] + " has no block");
            } else {
                assertArrayEquals(counting(10, c[1]), CmWire.block(f), "opcode " + c[0]);
            }
            final MemorySegment plain = frame(c[0], false, n, n);
            assertEquals(0, CmWire.blockLength(plain), "unprotected opcode " + c[0]);
            assertNull(CmWire.block(plain));
            assertArrayEquals(counting(0, n), CmWire.privateData(plain));
        }
    }

    @Test
    void aPayloadShorterThanItsBlockHasNoBlockAndNoPrivateData() {
        final int mac = CmHandshake.MAC_LENGTH;
        final MemorySegment exact = frame(Frame.OP_CM_READY, true, mac, mac);
        assertArrayEquals(counting(0, mac), CmWire.block(exact), "a payload of exactly the block");
        assertEquals(0, CmWire.privateData(exact).length);
        final MemorySegment shorter = frame(Frame.OP_CM_READY, true, mac - 1, mac - 1);
        assertNull(CmWire.block(shorter));
        assertEquals(0, CmWire.privateData(shorter).length, "never a negative length");
    }

    @Test
    void privateDataIsCutAtItsMaximum() {
        final int max = ConnectionManager.MAX_PRIVATE_DATA;
        final MemorySegment f = frame(Frame.OP_CM_REJECT, false, max + 1, max + 1);
        assertArrayEquals(Arrays.copyOf(counting(0, max + 1), max), CmWire.privateData(f));
        final MemorySegment atMax = frame(Frame.OP_CM_REJECT, false, max, max);
        assertEquals(max, CmWire.privateData(atMax).length);
    }

    @Test
    void twoIntsPackIntoOneLong() {
        final long packed = CmWire.pack(0x8000_0001, 0x7FFF_FFFE);
        assertEquals(0x8000_0001, CmWire.low(packed));
        assertEquals(0x7FFF_FFFE, CmWire.high(packed));
        assertEquals(-1, CmWire.low(CmWire.pack(-1, 0)));
        assertEquals(0, CmWire.high(CmWire.pack(-1, 0)), "a negative low half does not spill into the high half");
    }
}
