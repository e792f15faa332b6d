package io.jdet.internal.protocol;

import io.jdet.Security;
import io.jdet.internal.wire.Frame;
import io.jdet.internal.wire.FrameGather;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * Frame protection end to end, without a network: frames sealed by one side open at the other with their exact
 * payload, in order, with gaps (frames lost or never sent: the receiver's keystream skips forward) and out of
 * order (it re-initialises); a bit flipped anywhere fails the tag.
 */
class FrameSealTest {
    private static final int MTU = 8192;

    private final Random random = new Random(14);
    private final Counters counters = new Counters();
    private FrameSeal sender;
    private FrameSeal receiver;

    private void keys(final Security.Mode mode) {
        final byte[] c2s = new byte[FrameSeal.KEY_LENGTH];
        final byte[] s2c = new byte[FrameSeal.KEY_LENGTH];
        final byte[] control = new byte[32];
        random.nextBytes(c2s);
        random.nextBytes(s2c);
        sender = new FrameSeal(mode, c2s, s2c, true, control, new SealBuffers(MTU), counters);
        receiver = new FrameSeal(mode, s2c, c2s, false, control, new SealBuffers(MTU), counters);
    }

    /** A frame as it goes on the wire: header, sealed payload, trailer. */
    private byte[] seal(final byte[] payload) {
        final MemorySegment header = MemorySegment.ofArray(new byte[Frame.HEADER_LENGTH]);
        Frame.writeBase(header, Frame.OP_WRITE, 0, payload.length, 7, 9, random.nextInt(), 0, 0, 0);
        final FrameGather gather = new FrameGather(4);
        // two pieces, as a scatter/gather list gives them
        final int cut = payload.length / 3;
        gather.add(MemorySegment.ofArray(payload), ByteBuffer.wrap(payload), 0, cut);
        gather.add(MemorySegment.ofArray(payload), ByteBuffer.wrap(payload), cut, payload.length - cut);
        sender.seal(header, gather);
        final byte[] frame = new byte[Frame.HEADER_LENGTH + gather.totalLength()];
        MemorySegment.copy(header, ValueLayout.JAVA_BYTE, 0, frame, 0, Frame.HEADER_LENGTH);
        gather.copyTo(MemorySegment.ofArray(frame), Frame.HEADER_LENGTH);
        return frame;
    }

    private byte[] open(final byte[] frame) {
        final MemorySegment f = receiver.open(MemorySegment.ofArray(frame.clone()), frame.length);
        if (f == null) {
            return null;
        }
        final int n = frame.length - Frame.HEADER_LENGTH - FrameSeal.TRAILER_LENGTH;
        assertEquals(n, Frame.payloadLength(f));
        final byte[] payload = new byte[n];
        MemorySegment.copy(f, ValueLayout.JAVA_BYTE, Frame.HEADER_LENGTH, payload, 0, n);
        return payload;
    }

    private byte[] payload(final int n) {
        final byte[] p = new byte[n];
        random.nextBytes(p);
        return p;
    }

    @ParameterizedTest
    @EnumSource(value = Security.Mode.class, names = {"AUTH", "ENCRYPT"})
    void framesOpenInOrderWithGapsAndOutOfOrder(final Security.Mode mode) {
        keys(mode);
        final List<byte[]> plain = new ArrayList<>();
        final List<byte[]> wire = new ArrayList<>();
        for (final int n : new int[] {0, 100, 1000, 17, 3000, 0, 4096, 1, 5000, 64}) {
            final byte[] p = payload(n);
            plain.add(p);
            wire.add(seal(p));
        }
        // 0, 2 (1 lost so far), 1 (behind), 3, 6 (4 and 5 skipped), 4, 5, 7, 9, 8
        for (final int i : new int[] {0, 2, 1, 3, 6, 4, 5, 7, 9, 8}) {
            assertArrayEquals(plain.get(i), open(wire.get(i)), "frame " + i);
        }
        assertEquals(0, counters.sealBadTag);
        // Every frame again: replays.
        for (final byte[] w : wire) {
            assertNull(open(w));
        }
        assertEquals(wire.size(), counters.sealReplayed);
        if (mode == Security.Mode.ENCRYPT) {
            assertFalse(counters.sealResync == 0, "the out-of-order frames moved the stream");
            final byte[] marker = new byte[4000];
            Arrays.fill(marker, (byte) 'S');
            final byte[] sealed = seal(marker);
            assertFalse(new String(sealed, java.nio.charset.StandardCharsets.ISO_8859_1).contains("SSSSSSSS"),
                "the payload is hidden");
            assertArrayEquals(marker, open(sealed));
        }
    }

    @Test
    void aLongGapReinitialisesTheStream() {
        keys(Security.Mode.ENCRYPT);
        assertNotNull(open(seal(payload(10))));
        for (int i = 0; i < 70; i++) {
            seal(payload(4000)); // 70 * 250 blocks never arrive: more than the receiver skips
        }
        final byte[] p = payload(333);
        assertArrayEquals(p, open(seal(p)));
        assertEquals(1, counters.sealResync);
    }

    @ParameterizedTest
    @EnumSource(value = Security.Mode.class, names = {"AUTH", "ENCRYPT"})
    void anyFlippedBitFailsTheTag(final Security.Mode mode) {
        keys(mode);
        final byte[] p = payload(300);
        final byte[] frame = seal(p);
        for (int bit = 0; bit < frame.length * 8; bit += 7) {
            if (bit / 8 >= Frame.CRC_OFFSET && bit / 8 < Frame.CRC_OFFSET + 4) {
                continue; // the CRC field is taken as 0 (the link checks the CRC itself)
            }
            final byte[] f = frame.clone();
            f[bit / 8] ^= (byte) (1 << bit % 8);
            final long before = counters.sealBadTag + counters.sealReplayed;
            assertNull(open(f), "bit " + bit);
            assertEquals(before + 1, counters.sealBadTag + counters.sealReplayed, "bit " + bit);
        }
        assertArrayEquals(p, open(frame), "the untouched frame still opens");
    }
}
