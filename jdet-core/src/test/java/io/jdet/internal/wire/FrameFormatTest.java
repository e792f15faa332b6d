package io.jdet.internal.wire;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The frame header as bytes on the wire (little-endian, at the documented offsets), its CRC and its gather list. */
class FrameFormatTest {
    private static MemorySegment header() {
        final MemorySegment h = MemorySegment.ofArray(new byte[Frame.HEADER_LENGTH]);
        h.fill((byte) 0x5A);
        Frame.writeBase(h, Frame.OP_FETCH_ADD, 0xC801, 0xFEDC, 0x8765_4321, 0x1234_5678, 0xF000_0001, 0x7000_0002,
            0x3000_0003, 0x9000_0004);
        Frame.writeExtension(h, 0x8877_6655_4433_2211L, 0xF1E2_D3C4_B5A6_9788L, 0x0102_0304_0506_0708L, 0xAABB_CCDD,
            0x8000_0000, 0x7FFF_FFFF, 0xCAFE_BABE);
        return h;
    }

    @Test
    void theHeaderIsLittleEndianAtItsOffsets() {
        final MemorySegment h = header();
        final ByteBuffer b = ByteBuffer.wrap(h.toArray(ValueLayout.JAVA_BYTE)).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(0x444A, b.getShort(0) & 0xFFFF, "magic");
        assertEquals(0x4A, b.get(0), "magic, low byte first");
        assertEquals(1, b.get(2), "version");
        assertEquals(Frame.OP_FETCH_ADD, b.get(3));
        assertEquals(0xC801, b.getShort(4) & 0xFFFF, "flags");
        assertEquals(0xFEDC, b.getShort(6) & 0xFFFF, "payload length");
        assertEquals(0x8765_4321, b.getInt(8));
        assertEquals(0x1234_5678, b.getInt(12));
        assertEquals(0xF000_0001, b.getInt(16));
        assertEquals(0x7000_0002, b.getInt(20));
        assertEquals(0x3000_0003, b.getInt(24));
        assertEquals(0x9000_0004, b.getInt(28));
        assertEquals(0, b.getInt(32), "no selective-ack bits yet");
        assertEquals(0, b.getInt(36), "the CRC field starts as 0");
        assertEquals(0x8877_6655_4433_2211L, b.getLong(40));
        assertEquals(0xF1E2_D3C4_B5A6_9788L, b.getLong(48));
        assertEquals(0x0102_0304_0506_0708L, b.getLong(56));
        assertEquals(0xAABB_CCDD, b.getInt(64));
        assertEquals(0x8000_0000, b.getInt(68));
        assertEquals(0x7FFF_FFFF, b.getInt(72));
        assertEquals(0xCAFE_BABE, b.getInt(76));
    }

    @Test
    void eachFieldReadsBackUnsignedWhereItIsNarrow() {
        final MemorySegment h = header();
        assertEquals(Frame.MAGIC, Frame.magic(h));
        assertEquals(Frame.VERSION, Frame.version(h));
        assertEquals(Frame.OP_FETCH_ADD, Frame.opcode(h));
        assertEquals(0xC801, Frame.flags(h));
        assertEquals(0xFEDC, Frame.payloadLength(h));
        assertEquals(0x8765_4321, Frame.dstQp(h));
        assertEquals(0x1234_5678, Frame.srcQp(h));
        assertEquals(0xF000_0001, Frame.seq(h));
        assertEquals(0x7000_0002, Frame.reqAck(h));
        assertEquals(0x3000_0003, Frame.rspAck(h));
        assertEquals(0x9000_0004, Frame.msgId(h));
        assertEquals(0x8877_6655_4433_2211L, Frame.address(h));
        assertEquals(0xF1E2_D3C4_B5A6_9788L, Frame.operand1(h));
        assertEquals(0x0102_0304_0506_0708L, Frame.operand2(h));
        assertEquals(0xAABB_CCDD, Frame.key(h));
        assertEquals(0x8000_0000, Frame.length(h));
        assertEquals(0x7FFF_FFFF, Frame.offset(h));
        assertEquals(0xCAFE_BABE, Frame.immediate(h));
        Frame.sack(h, 0x8000_0001);
        assertEquals(0x8000_0001, Frame.sack(h));
        h.set(ValueLayout.JAVA_BYTE, Frame.OPCODE_OFFSET, (byte) 0xFF);
        assertEquals(255, Frame.opcode(h), "an opcode byte is unsigned");
    }

    @Test
    void connectionManagerOpcodesAreExactlyTheirRange() {
        for (int op = 0; op < 256; op++) {
            assertEquals(op >= Frame.OP_CM_REQUEST && op <= Frame.OP_CM_COOKIE, Frame.isConnectionManager(op), "op " + op);
        }
        assertTrue(Frame.isConnectionManager(32));
        assertTrue(Frame.isConnectionManager(38));
        assertFalse(Frame.isConnectionManager(31));
        assertFalse(Frame.isConnectionManager(39));
    }

    @Test
    void sequenceNumbersCompareAcrossTheWrap() {
        assertTrue(Frame.after(1, 0));
        assertFalse(Frame.after(0, 0));
        assertFalse(Frame.after(0, 1));
        assertTrue(Frame.after(Integer.MIN_VALUE, Integer.MAX_VALUE), "just past the wrap");
        assertFalse(Frame.after(Integer.MAX_VALUE, Integer.MIN_VALUE));
        assertTrue(Frame.after(5, -5));
    }

    @Test
    void theCrcIsCrc32cOfTheFrameWithItsFieldZero() {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment frame = arena.allocate(Frame.HEADER_LENGTH + 30);
            MemorySegment.copy(header(), 0, frame, 0, Frame.HEADER_LENGTH);
            final MemorySegment payload = arena.allocate(40);
            for (int i = 0; i < 40; i++) {
                payload.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 3));
            }
            final FrameGather gather = new FrameGather(2);
            gather.add(payload, payload.asByteBuffer(), 5, 10);
            gather.add(payload, payload.asByteBuffer(), 20, 20);
            final MemorySegment h = frame.asSlice(0, Frame.HEADER_LENGTH);
            h.set(ValueLayout.JAVA_INT_UNALIGNED, Frame.CRC_OFFSET, 0x1111_1111);
            final FrameCrc crc = new FrameCrc();
            crc.seal(h, h.asByteBuffer(), Frame.HEADER_LENGTH, gather);
            gather.copyTo(frame, Frame.HEADER_LENGTH);
            final byte[] bytes = frame.toArray(ValueLayout.JAVA_BYTE);
            final int stored = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getInt(Frame.CRC_OFFSET);
            java.util.Arrays.fill(bytes, Frame.CRC_OFFSET, Frame.CRC_OFFSET + 4, (byte) 0);
            final CRC32C reference = new CRC32C();
            reference.update(bytes);
            assertEquals((int) reference.getValue(), stored);
            assertEquals(payload.get(ValueLayout.JAVA_BYTE, 5), frame.get(ValueLayout.JAVA_BYTE, Frame.HEADER_LENGTH));
            assertEquals(payload.get(ValueLayout.JAVA_BYTE, 20),
                frame.get(ValueLayout.JAVA_BYTE, Frame.HEADER_LENGTH + 10), "the pieces follow each other");
            assertTrue(crc.verify(frame, frame.asByteBuffer(), (int) frame.byteSize()));
            assertEquals(0, frame.get(ValueLayout.JAVA_INT_UNALIGNED, Frame.CRC_OFFSET), "verify zeroes the field");
            frame.set(ValueLayout.JAVA_INT_UNALIGNED, Frame.CRC_OFFSET, stored);
            frame.set(ValueLayout.JAVA_BYTE, frame.byteSize() - 1, (byte) 0x77);
            assertFalse(crc.verify(frame, frame.asByteBuffer(), (int) frame.byteSize()), "the last byte counts");
            assertFalse(crc.verify(frame, frame.asByteBuffer(), Frame.CRC_OFFSET + 3), "too short to hold a CRC");
            final MemorySegment empty = arena.allocate(Frame.CRC_OFFSET + 4);
            final CRC32C zeros = new CRC32C();
            zeros.update(new byte[Frame.CRC_OFFSET + 4]);
            empty.set(ValueLayout.JAVA_INT_UNALIGNED, Frame.CRC_OFFSET, (int) zeros.getValue());
            assertTrue(crc.verify(empty, empty.asByteBuffer(), Frame.CRC_OFFSET + 4), "just long enough");
        }
    }

    @Test
    void aGatherListCountsAndForgetsItsPieces() {
        final FrameGather g = new FrameGather(3);
        assertEquals(3, g.capacity());
        final MemorySegment a = MemorySegment.ofArray(new byte[8]);
        final ByteBuffer av = ByteBuffer.allocate(8);
        g.add(a, av, 2, 5);
        g.add(a, av, 0, 7);
        assertEquals(2, g.count());
        assertEquals(12, g.totalLength());
        assertEquals(2, g.offset(0));
        assertEquals(7, g.length(1));
        assertEquals(av, g.view(1));
        g.clear();
        assertEquals(0, g.count());
        assertEquals(0, g.totalLength());
        assertNull(g.segment(0), "a cleared list holds no memory alive");
        assertNull(g.view(1));
        g.add(a, av, 1, 1);
        assertEquals(1, g.totalLength());
        g.add(a, av, 0, 2);
        g.add(a, av, 0, 3);
        assertEquals(g.capacity(), g.count());
        g.clear();
        assertEquals(0, g.count(), "a full list clears too");
    }

    @Test
    void oneCrcSealsFrameAfterFrame() {
        final FrameCrc crc = new FrameCrc();
        final FrameGather none = new FrameGather(0);
        for (int i = 0; i < 3; i++) {
            final MemorySegment h = header();
            h.set(ValueLayout.JAVA_BYTE, 79, (byte) i);
            crc.seal(h, h.asByteBuffer(), Frame.HEADER_LENGTH, none);
            final byte[] bytes = h.toArray(ValueLayout.JAVA_BYTE);
            final int stored = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getInt(Frame.CRC_OFFSET);
            java.util.Arrays.fill(bytes, Frame.CRC_OFFSET, Frame.CRC_OFFSET + 4, (byte) 0);
            final CRC32C reference = new CRC32C();
            reference.update(bytes);
            assertEquals((int) reference.getValue(), stored, "frame " + i);
        }
    }
}
