package io.jdet.internal.protocol;

import io.jdet.Security;
import io.jdet.internal.wire.Frame;
import io.jdet.internal.wire.FrameGather;
import org.junit.jupiter.api.Test;

import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One connection's frame protection, checked against the JDK's own HMAC-SHA256 and AES-GCM as the wire format
 * (docs/SECURITY.md) defines it, so that both ends running the same wrong code would still be caught.
 */
class FrameSealTest {
    private static final int MTU = 1500;
    private static final ValueLayout.OfLong LE_LONG =
        ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private static byte[] key(final int length, final int seed) {
        final byte[] k = new byte[length];
        for (int i = 0; i < length; i++) {
            k[i] = (byte) (seed * 31 + i * 7);
        }
        return k;
    }

    /** Both ends of one connection. */
    private record Pair(FrameSeal client, FrameSeal server, Counters clientCounters, Counters serverCounters,
                        byte[] clientToServer) {
        static Pair of(final Security.Mode mode) {
            final int length = mode == Security.Mode.ENCRYPT ? 16 : 32;
            final byte[] c2s = key(length, 1);
            final byte[] s2c = key(length, 2);
            final byte[] control = key(32, 3);
            final Counters cc = new Counters();
            final Counters sc = new Counters();
            return new Pair(new FrameSeal(mode, c2s, s2c, true, control, new SealBuffers(MTU), cc),
                new FrameSeal(mode, s2c, c2s, false, control, new SealBuffers(MTU), sc), cc, sc, c2s);
        }
    }

    private static byte[] payload(final int length, final int seed) {
        final byte[] p = new byte[length];
        for (int i = 0; i < length; i++) {
            p[i] = (byte) (seed + i);
        }
        return p;
    }

    /** Seals a SEND of {@code payload} (given in two pieces) and returns the frame as it goes on the wire. */
    private static byte[] seal(final FrameSeal seal, final byte[] payload) {
        final MemorySegment header = MemorySegment.ofArray(new byte[Frame.HEADER_LENGTH]);
        Frame.writeBase(header, Frame.OP_SEND, Frame.FLAG_LAST, payload.length, 0x1234, 0x5678, 42, 7, 9, 3);
        header.set(ValueLayout.JAVA_INT_UNALIGNED, Frame.CRC_OFFSET, 0xDEADBEEF);
        final FrameGather gather = new FrameGather(4);
        final int half = payload.length / 2;
        final byte[] first = Arrays.copyOfRange(payload, 0, half);
        final byte[] second = Arrays.copyOfRange(payload, half, payload.length);
        gather.add(MemorySegment.ofArray(first), ByteBuffer.wrap(first), 0, first.length);
        gather.add(MemorySegment.ofArray(second), ByteBuffer.wrap(second), 0, second.length);
        seal.seal(header, gather);
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(header.toArray(ValueLayout.JAVA_BYTE));
        for (int i = 0; i < gather.count(); i++) {
            final byte[] piece = new byte[gather.length(i)];
            MemorySegment.copy(gather.segment(i), ValueLayout.JAVA_BYTE, gather.offset(i), piece, 0, piece.length);
            out.writeBytes(piece);
        }
        return out.toByteArray();
    }

    private static MemorySegment open(final FrameSeal seal, final byte[] wire) {
        return seal.open(MemorySegment.ofArray(wire.clone()), wire.length);
    }

    private static byte[] body(final MemorySegment opened, final int length) {
        return opened.asSlice(Frame.HEADER_LENGTH, length).toArray(ValueLayout.JAVA_BYTE);
    }

    @Test
    void authenticatedFramesCarryTheHmacOfNumberHeaderAndPayloadInTheClear() throws Exception {
        final Pair p = Pair.of(Security.Mode.AUTH);
        final byte[] data = payload(101, 5);
        for (int pn = 0; pn < 3; pn++) {
            assertEquals(pn, p.client.nextPacketNumber());
            final byte[] wire = seal(p.client, data);
            assertEquals(Frame.HEADER_LENGTH + data.length + FrameSeal.TRAILER_LENGTH, wire.length);
            final MemorySegment w = MemorySegment.ofArray(wire);
            assertTrue((Frame.flags(w) & Frame.FLAG_PROTECTED) != 0, "the protected flag is set");
            assertEquals(Frame.FLAG_LAST, Frame.flags(w) & ~Frame.FLAG_PROTECTED, "the other flags are kept");
            assertEquals(data.length, Frame.payloadLength(w), "the header's length excludes the trailer");
            assertEquals(0, w.get(ValueLayout.JAVA_INT_UNALIGNED, Frame.CRC_OFFSET), "sealed with the CRC as 0");
            assertArrayEquals(data, Arrays.copyOfRange(wire, Frame.HEADER_LENGTH, Frame.HEADER_LENGTH + data.length));
            final int trailer = Frame.HEADER_LENGTH + data.length;
            assertEquals(pn, w.get(LE_LONG, trailer + FrameSeal.TAG_LENGTH), "the packet number, little-endian");
            final Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(p.clientToServer, "HmacSHA256"));
            mac.update(Arrays.copyOfRange(wire, trailer + FrameSeal.TAG_LENGTH, wire.length));
            mac.update(wire, 0, trailer);
            assertArrayEquals(Arrays.copyOf(mac.doFinal(), FrameSeal.TAG_LENGTH),
                Arrays.copyOfRange(wire, trailer, trailer + FrameSeal.TAG_LENGTH), "tag = HMAC, first 16 bytes");
            final MemorySegment opened = open(p.server, wire);
            assertNotNull(opened, "frame " + pn);
            assertArrayEquals(data, body(opened, data.length));
        }
        assertEquals(0, p.serverCounters.sealBadTag + p.serverCounters.sealReplayed);
    }

    @Test
    void encryptedFramesAreAesGcmWithTheDirectionAndNumberAsNonceAndTheHeaderAsAad() throws Exception {
        final Pair p = Pair.of(Security.Mode.ENCRYPT);
        final byte[] data = payload(77, 9);
        for (int pn = 0; pn < 3; pn++) {
            final byte[] wire = seal(p.client, data);
            assertEquals(Frame.HEADER_LENGTH + data.length + FrameSeal.TRAILER_LENGTH, wire.length);
            final int trailer = Frame.HEADER_LENGTH + data.length;
            assertFalse(Arrays.equals(data, Arrays.copyOfRange(wire, Frame.HEADER_LENGTH, trailer)),
                "the payload does not travel in the clear");
            assertEquals(pn, MemorySegment.ofArray(wire).get(LE_LONG, trailer + FrameSeal.TAG_LENGTH));
            final byte[] nonce = new byte[12];
            final ByteBuffer nb = ByteBuffer.wrap(nonce);
            nb.order(ByteOrder.BIG_ENDIAN).putInt(FrameSeal.CLIENT_TO_SERVER);
            nb.order(ByteOrder.LITTLE_ENDIAN).putLong(pn);
            final Cipher gcm = Cipher.getInstance("AES/GCM/NoPadding");
            gcm.init(Cipher.DECRYPT_MODE, new SecretKeySpec(p.clientToServer, "AES"), new GCMParameterSpec(128, nonce));
            gcm.updateAAD(wire, 0, Frame.HEADER_LENGTH);
            assertArrayEquals(data, gcm.doFinal(wire, Frame.HEADER_LENGTH, data.length + FrameSeal.TAG_LENGTH));
            final MemorySegment opened = open(p.server, wire);
            assertNotNull(opened, "frame " + pn);
            assertArrayEquals(Arrays.copyOf(wire, Frame.HEADER_LENGTH),
                opened.asSlice(0, Frame.HEADER_LENGTH).toArray(ValueLayout.JAVA_BYTE), "the header comes back");
            assertArrayEquals(data, body(opened, data.length));
        }
        final byte[] back = seal(p.server, data);
        assertArrayEquals(data, body(open(p.client, back), data.length), "the other direction");
        assertEquals(0, p.serverCounters.sealBadTag + p.serverCounters.sealReplayed);
    }

    @Test
    void anyChangedByteIsRefusedAndDoesNotBurnItsNumber() {
        for (final Security.Mode mode : new Security.Mode[] {Security.Mode.AUTH, Security.Mode.ENCRYPT}) {
            final Pair p = Pair.of(mode);
            final byte[] data = payload(40, 1);
            final byte[] wire = seal(p.client, data);
            long refused = 0;
            for (int i = 0; i < wire.length; i++) {
                if (i >= Frame.CRC_OFFSET && i < Frame.CRC_OFFSET + 4) {
                    continue; // the CRC field is checked by the link, and taken as 0 here
                }
                final byte[] bad = wire.clone();
                bad[i] ^= 0x01;
                assertNull(open(p.server, bad), mode + ": byte " + i + " changed");
                refused++;
            }
            assertEquals(refused, p.serverCounters.sealBadTag, mode.name());
            assertEquals(0, p.serverCounters.sealReplayed, mode.name());
            assertNotNull(open(p.server, wire), mode + ": the genuine frame still opens");
        }
    }

    @Test
    void aFrameIsOpenedOnceAndOnlyInItsOwnDirection() {
        for (final Security.Mode mode : new Security.Mode[] {Security.Mode.AUTH, Security.Mode.ENCRYPT}) {
            final Pair p = Pair.of(mode);
            final byte[] data = payload(20, 3);
            final byte[] wire = seal(p.client, data);
            assertNull(open(p.client, wire), mode + ": the sender cannot open its own frame");
            assertEquals(1, p.clientCounters.sealBadTag);
            assertNotNull(open(p.server, wire));
            assertNull(open(p.server, wire), mode + ": a replay is refused");
            assertEquals(1, p.serverCounters.sealReplayed, mode.name());
            assertEquals(0, p.serverCounters.sealBadTag, mode.name());
        }
    }

    @Test
    void bothDirectionsUseTheirOwnNonceEvenWithOneKey() {
        final byte[] k = key(16, 4);
        final Counters counters = new Counters();
        final FrameSeal client = new FrameSeal(Security.Mode.ENCRYPT, k, k, true, key(32, 1), new SealBuffers(MTU),
            counters);
        final FrameSeal otherClient = new FrameSeal(Security.Mode.ENCRYPT, k, k, true, key(32, 1),
            new SealBuffers(MTU), counters);
        final FrameSeal server = new FrameSeal(Security.Mode.ENCRYPT, k, k, false, key(32, 1), new SealBuffers(MTU),
            counters);
        final byte[] wire = seal(client, payload(10, 0));
        assertNull(open(otherClient, wire), "a client's frame is not for a client");
        assertNotNull(open(server, wire));
    }

    @Test
    void theControlMacIsHmacSha256UnderTheControlKey() throws Exception {
        final Pair p = Pair.of(Security.Mode.AUTH);
        final byte[] message = payload(30, 8);
        final Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key(32, 3), "HmacSHA256"));
        assertArrayEquals(mac.doFinal(message), p.client.controlMac(message));
        assertArrayEquals(p.client.controlMac(message), p.server.controlMac(message), "both ends agree");
    }

    @Test
    void modeNoneHasNoSeal() {
        assertThrows(IllegalArgumentException.class, () -> new FrameSeal(Security.Mode.NONE, key(32, 1), key(32, 2),
            true, key(32, 3), new SealBuffers(MTU), new Counters()));
    }

    @Test
    void aFrameWhosePayloadMemoryIsGoneIsRefusedBeforeAnythingIsSent() {
        final Pair p = Pair.of(Security.Mode.AUTH);
        final FrameGather gather = new FrameGather(2);
        final MemorySegment header = MemorySegment.ofArray(new byte[Frame.HEADER_LENGTH]);
        Frame.writeBase(header, Frame.OP_SEND, Frame.FLAG_LAST, 4, 1, 2, 3, 4, 5, 6);
        final MemorySegment gone;
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            gone = arena.allocate(4);
        }
        gather.add(gone, null, 0, 4);
        assertThrows(IllegalStateException.class, () -> p.client.seal(header, gather));
        assertSame(gone, gather.segment(0));
    }
}
