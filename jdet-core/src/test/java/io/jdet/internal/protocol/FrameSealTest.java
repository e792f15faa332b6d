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
 * order (it re-initialises), small (Poly1305-AES) and large (AES-GCM) frames mixed; a bit flipped anywhere fails
 * the tag; a large frame is exactly the AES-GCM of PROTOCOL.md 14.2; a frame moved across the size threshold
 * (so that the receiver tries the other construction) fails.
 */
class FrameSealTest {
    private static final int MTU = 65_536;

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
        for (final int n : new int[] {0, 100, 1000, 17, 3000, 0, 4096, 1, 5000, 64,
            FrameSeal.GCM_MIN_PAYLOAD, 60_000, 17, FrameSeal.GCM_MIN_PAYLOAD - 1, 20_001, 333}) {
            final byte[] p = payload(n);
            plain.add(p);
            wire.add(seal(p));
        }
        // 0, 2 (1 lost so far), 1 (behind), 3, 6 (4 and 5 skipped), 4, 5, 7, 9, 8; then large and small frames
        // mixed: the large ones take no keystream, so 12 follows 10's predecessors' stream, in and out of order
        for (final int i : new int[] {0, 2, 1, 3, 6, 4, 5, 7, 9, 8, 11, 10, 12, 14, 15, 13}) {
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
        flippedBitsFail(mode, 300);
    }

    @Test
    void anyFlippedBitFailsTheTagOfAnAesGcmFrame() {
        flippedBitsFail(Security.Mode.ENCRYPT, FrameSeal.GCM_MIN_PAYLOAD);
    }

    @Test
    void aLargeEncryptedFrameIsTheAesGcmOfTheSpecification() throws Exception {
        final byte[] c2s = new byte[FrameSeal.KEY_LENGTH];
        random.nextBytes(c2s);
        sender = new FrameSeal(Security.Mode.ENCRYPT, c2s, c2s.clone(), true, new byte[32], new SealBuffers(MTU),
            counters);
        seal(payload(10)); // packet number 0
        final byte[] p = payload(40_000);
        final byte[] frame = seal(p); // packet number 1
        final byte[] again = seal(p); // packet number 2: a retransmission is sealed afresh
        final int n = p.length;
        // nonce = direction id ‖ pn (big-endian); aad = pn ‖ stream block 0 (little-endian) ‖ header, CRC field 0
        final ByteBuffer nonce = ByteBuffer.allocate(12).putInt(FrameSeal.CLIENT_TO_SERVER).putLong(1);
        final ByteBuffer aad = ByteBuffer.allocate(16 + Frame.HEADER_LENGTH).order(java.nio.ByteOrder.LITTLE_ENDIAN)
            .putLong(1).putLong(0).put(frame, 0, Frame.HEADER_LENGTH);
        final javax.crypto.Cipher gcm = javax.crypto.Cipher.getInstance("AES/GCM/NoPadding");
        gcm.init(javax.crypto.Cipher.ENCRYPT_MODE, new javax.crypto.spec.SecretKeySpec(c2s, 32, 16, "AES"),
            new javax.crypto.spec.GCMParameterSpec(128, nonce.array()));
        gcm.updateAAD(aad.array());
        final byte[] expected = gcm.doFinal(p);
        assertArrayEquals(expected, Arrays.copyOfRange(frame, Frame.HEADER_LENGTH, Frame.HEADER_LENGTH + n + 16));
        final ByteBuffer trailer = ByteBuffer.wrap(frame, Frame.HEADER_LENGTH + n + 16, 16)
            .order(java.nio.ByteOrder.LITTLE_ENDIAN);
        assertEquals(1, trailer.getLong());
        assertEquals(0, trailer.getLong());
        assertFalse(Arrays.equals(Arrays.copyOfRange(frame, Frame.HEADER_LENGTH, frame.length),
            Arrays.copyOfRange(again, Frame.HEADER_LENGTH, again.length)), "a new nonce per frame");
    }

    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(ints = {FrameSeal.GCM_MIN_PAYLOAD - 1, FrameSeal.GCM_MIN_PAYLOAD})
    void aFrameMovedAcrossTheThresholdOpensWithNeitherConstruction(final int n) {
        keys(Security.Mode.ENCRYPT);
        final byte[] frame = seal(payload(n));
        // One byte more (a large frame's rules) or one less (a small frame's), the header's length made to match:
        // the receiver tries the other construction, and its tag fails.
        final int other = n == FrameSeal.GCM_MIN_PAYLOAD ? n - 1 : n + 1;
        final byte[] moved = new byte[Frame.HEADER_LENGTH + other + FrameSeal.TRAILER_LENGTH];
        System.arraycopy(frame, 0, moved, 0, Frame.HEADER_LENGTH + Math.min(n, other));
        System.arraycopy(frame, frame.length - FrameSeal.TRAILER_LENGTH, moved,
            moved.length - FrameSeal.TRAILER_LENGTH, FrameSeal.TRAILER_LENGTH);
        Frame.writeBase(MemorySegment.ofArray(moved), Frame.OP_WRITE, Frame.FLAG_PROTECTED, other, 7, 9,
            Frame.seq(MemorySegment.ofArray(frame)), 0, 0, 0);
        assertNull(open(moved));
        assertEquals(1, counters.sealBadTag);
        assertNotNull(open(frame), "the frame as sealed still opens");
    }

    private void flippedBitsFail(final Security.Mode mode, final int n) {
        keys(mode);
        final byte[] p = payload(n);
        final byte[] frame = seal(p);
        // Every 7th bit of header and trailer; of a large payload, every 7th bit of its first and last block and
        // one bit in 1009 between (each open of a large frame is a fresh GCM init: keep the test fast)
        final int payloadStart = (Frame.HEADER_LENGTH + 16) * 8;
        final int payloadEnd = (frame.length - FrameSeal.TRAILER_LENGTH - 16) * 8;
        for (int bit = 0; bit < frame.length * 8; bit += bit >= payloadStart && bit < payloadEnd && n > 1000 ? 1009 : 7) {
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
