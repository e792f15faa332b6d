package io.jdet.internal.protocol;

import io.jdet.Security;
import io.jdet.internal.wire.Frame;
import io.jdet.internal.wire.FrameGather;

import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;

/**
 * The per-frame protection of one connection (both directions), keyed by the connection manager's handshake. A
 * protected frame has {@link Frame#FLAG_PROTECTED} set and a {@link #TRAILER_LENGTH}-byte trailer after its payload:
 * a 16-byte tag, then the 8-byte little-endian packet number; the header's payload length excludes the trailer.
 * <ul>
 * <li>{@code AUTH}: tag = HMAC-SHA256(direction key, packet number ‖ header ‖ payload), first 16 bytes; the payload
 *     travels in the clear.</li>
 * <li>{@code ENCRYPT}: AES-128-GCM with the direction key, nonce = 4-byte direction id ‖ packet number, AAD = the
 *     header; the payload is replaced by its ciphertext, the tag is GCM's.</li>
 * </ul>
 * The header is taken with its CRC field as 0 (the CRC is filled in after sealing and covers the whole frame).
 * Each direction has its own key and counts its packet numbers from 0, one per frame sent, retransmissions
 * included, so a nonce is never used twice with a key; the receiver keeps a {@link ReplayWindow}.
 *
 * <p>Engine lock held. The HMAC and the copies allocate nothing; the JDK's AES-GCM allocates a few small objects
 * per frame inside {@code Cipher.init} (a new nonce needs a new init), see {@code docs/SECURITY.md}.
 */
public final class FrameSeal {
    /** Bytes of the tag. */
    public static final int TAG_LENGTH = 16;
    /** Bytes of the packet number. */
    public static final int PN_LENGTH = 8;
    /** Bytes a protected frame carries after its payload. */
    public static final int TRAILER_LENGTH = Frame.PROTECTED_TRAILER_LENGTH; // TAG_LENGTH + PN_LENGTH
    /** Direction id in the nonce of frames the connecting side sends. */
    public static final int CLIENT_TO_SERVER = 0x63327300;
    /** Direction id in the nonce of frames the accepting side sends. */
    public static final int SERVER_TO_CLIENT = 0x73326300;

    private static final ValueLayout.OfLong LE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt BE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private final boolean encrypt;
    private final SealBuffers buffers;
    private final Counters counters;
    /** AUTH: HMAC-SHA256 computed on a reused digest (the JDK's {@code Mac.doFinal} allocates its result). */
    private final MessageDigest txDigest;
    private final MessageDigest rxDigest;
    private final byte[][] txPads;
    private final byte[][] rxPads;
    private final Cipher txCipher;
    private final Cipher rxCipher;
    private final SecretKeySpec txKey;
    private final SecretKeySpec rxKey;
    private final byte[] txNonce = new byte[12];
    private final byte[] rxNonce = new byte[12];
    private final MemorySegment txNonceSegment = MemorySegment.ofArray(txNonce);
    private final MemorySegment rxNonceSegment = MemorySegment.ofArray(rxNonce);
    private final ReplayWindow replay = new ReplayWindow();
    /** Authenticates the connection manager's frames about this connection (its disconnect). */
    private final byte[] controlKey;
    private long txNext;

    /**
     * Protection for one connection.
     *
     * @param mode     AUTH or ENCRYPT
     * @param txKey    the key of the frames this side sends (16 bytes for ENCRYPT, 32 for AUTH)
     * @param rxKey    the key of the frames the peer sends
     * @param client   whether this side connected (chooses the direction ids)
     * @param controlKey the key of {@link #controlMac} (32 bytes)
     * @param buffers  the NIC's scratch memory
     * @param counters the NIC's counters
     * @throws IllegalStateException if the JDK lacks the algorithm (it never does: both are required ones)
     */
    public FrameSeal(final Security.Mode mode, final byte[] txKey, final byte[] rxKey, final boolean client,
                     final byte[] controlKey, final SealBuffers buffers, final Counters counters) {
        if (mode == Security.Mode.NONE) {
            throw new IllegalArgumentException("mode NONE needs no seal");
        }
        this.encrypt = mode == Security.Mode.ENCRYPT;
        this.controlKey = controlKey.clone();
        this.buffers = buffers;
        this.counters = counters;
        txNonceSegment.set(BE_INT, 0, client ? CLIENT_TO_SERVER : SERVER_TO_CLIENT);
        rxNonceSegment.set(BE_INT, 0, client ? SERVER_TO_CLIENT : CLIENT_TO_SERVER);
        try {
            if (encrypt) {
                this.txKey = new SecretKeySpec(txKey, "AES");
                this.rxKey = new SecretKeySpec(rxKey, "AES");
                this.txCipher = Cipher.getInstance("AES/GCM/NoPadding");
                this.rxCipher = Cipher.getInstance("AES/GCM/NoPadding");
                this.txDigest = null;
                this.rxDigest = null;
                this.txPads = null;
                this.rxPads = null;
            } else {
                this.txKey = null;
                this.rxKey = null;
                this.txCipher = null;
                this.rxCipher = null;
                this.txDigest = MessageDigest.getInstance("SHA-256");
                this.rxDigest = MessageDigest.getInstance("SHA-256");
                this.txPads = pads(txKey);
                this.rxPads = pads(rxKey);
            }
        } catch (final GeneralSecurityException e) {
            throw new IllegalStateException("the JDK lacks a required algorithm", e);
        }
    }

    /**
     * Seals a frame about to be sent: sets the protected flag, and turns the payload pieces into what goes after
     * the header (AUTH: the pieces plus a trailer piece; ENCRYPT: one piece of ciphertext and trailer).
     *
     * @param header  the frame's header, its payload length the plain payload's; its CRC field is set to 0
     * @param payload the payload pieces, replaced by what is to be sent; at least one free slot
     * @throws IllegalStateException if a piece's memory was closed (nothing is changed then)
     */
    public void seal(final MemorySegment header, final FrameGather payload) {
        header.set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), Frame.FLAGS_OFFSET,
            (short) (Frame.flags(header) | Frame.FLAG_PROTECTED));
        header.set(ValueLayout.JAVA_INT_UNALIGNED, Frame.CRC_OFFSET, 0);
        final SealBuffers b = buffers;
        MemorySegment.copy(header, ValueLayout.JAVA_BYTE, 0, b.header, 0, Frame.HEADER_LENGTH);
        final int n = payload.totalLength();
        final long pn = txNext++;
        try {
            if (encrypt) {
                payload.copyTo(b.txPlainSegment, 0);
                txNonceSegment.set(LE_LONG, 4, pn);
                txCipher.init(Cipher.ENCRYPT_MODE, txKey, new GCMParameterSpec(TAG_LENGTH * 8, txNonce));
                txCipher.updateAAD(b.header, 0, Frame.HEADER_LENGTH);
                txCipher.doFinal(b.txPlain, 0, n, b.txSealed, 0);
                b.txSealedSegment.set(LE_LONG, n + TAG_LENGTH, pn);
                payload.clear();
                payload.add(b.txSealedSegment, b.txSealedView, 0, n + TRAILER_LENGTH);
            } else {
                b.numberSegment.set(LE_LONG, 0, pn);
                txDigest.update(txPads[0]);
                txDigest.update(b.number, 0, PN_LENGTH);
                txDigest.update(b.header, 0, Frame.HEADER_LENGTH);
                for (int i = 0; i < payload.count(); i++) {
                    final int length = payload.length(i);
                    MemorySegment.copy(payload.segment(i), ValueLayout.JAVA_BYTE, payload.offset(i), b.txPlain, 0,
                        length);
                    txDigest.update(b.txPlain, 0, length);
                }
                finishHmac(txDigest, txPads[1], b.tag);
                System.arraycopy(b.tag, 0, b.txSealed, 0, TAG_LENGTH);
                b.txSealedSegment.set(LE_LONG, TAG_LENGTH, pn);
                payload.add(b.txSealedSegment, b.txSealedView, 0, TRAILER_LENGTH);
            }
        } catch (final GeneralSecurityException e) {
            throw new IllegalStateException("sealing failed", e); // a fault of the engine's own, never the peer's
        }
    }

    /**
     * Opens a received protected frame: checks its packet number against the replay window and its tag, and for
     * ENCRYPT decrypts its payload. A frame that fails is counted and dropped.
     *
     * @param f      the frame, header checked, its CRC field 0
     * @param length its length, trailer included
     * @return the frame to process, without its trailer ({@code f} itself for AUTH, scratch memory for ENCRYPT,
     *         valid until the next frame), or null if it was dropped
     */
    public MemorySegment open(final MemorySegment f, final int length) {
        final int n = length - Frame.HEADER_LENGTH - TRAILER_LENGTH;
        final long pn = f.get(LE_LONG, length - PN_LENGTH);
        if (!replay.fresh(pn)) {
            counters.sealReplayed++;
            return null;
        }
        final SealBuffers b = buffers;
        MemorySegment.copy(f, ValueLayout.JAVA_BYTE, 0, b.header, 0, Frame.HEADER_LENGTH);
        b.header[Frame.CRC_OFFSET] = b.header[Frame.CRC_OFFSET + 1] = 0;
        b.header[Frame.CRC_OFFSET + 2] = b.header[Frame.CRC_OFFSET + 3] = 0;
        final MemorySegment out;
        try {
            if (encrypt) {
                MemorySegment.copy(f, ValueLayout.JAVA_BYTE, Frame.HEADER_LENGTH, b.rxIn, 0, n + TAG_LENGTH);
                rxNonceSegment.set(LE_LONG, 4, pn);
                rxCipher.init(Cipher.DECRYPT_MODE, rxKey, new GCMParameterSpec(TAG_LENGTH * 8, rxNonce));
                rxCipher.updateAAD(b.header, 0, Frame.HEADER_LENGTH);
                rxCipher.doFinal(b.rxIn, 0, n + TAG_LENGTH, b.rxPlain, Frame.HEADER_LENGTH);
                System.arraycopy(b.header, 0, b.rxPlain, 0, Frame.HEADER_LENGTH);
                out = b.rxPlainSegment;
            } else {
                b.numberSegment.set(LE_LONG, 0, pn);
                rxDigest.update(rxPads[0]);
                rxDigest.update(b.number, 0, PN_LENGTH);
                rxDigest.update(b.header, 0, Frame.HEADER_LENGTH);
                MemorySegment.copy(f, ValueLayout.JAVA_BYTE, Frame.HEADER_LENGTH, b.rxIn, 0, n + TAG_LENGTH);
                rxDigest.update(b.rxIn, 0, n);
                finishHmac(rxDigest, rxPads[1], b.tag);
                if (!sameTag(b.tag, b.rxIn, n)) {
                    counters.sealBadTag++;
                    return null;
                }
                out = f;
            }
        } catch (final AEADBadTagException e) {
            counters.sealBadTag++;
            return null;
        } catch (final GeneralSecurityException e) {
            counters.sealBadTag++;
            return null;
        }
        replay.commit(pn);
        return out;
    }

    /** HMAC's key pads (RFC 2104): the key, zero-padded to SHA-256's 64-byte block, XOR 0x36 and XOR 0x5c. */
    private static byte[][] pads(final byte[] key) {
        final byte[] inner = new byte[64];
        final byte[] outer = new byte[64];
        for (int i = 0; i < 64; i++) {
            final byte k = i < key.length ? key[i] : 0;
            inner[i] = (byte) (k ^ 0x36);
            outer[i] = (byte) (k ^ 0x5c);
        }
        return new byte[][] {inner, outer};
    }

    /** Ends an HMAC whose inner hash has all its input: tag = H(outer pad ‖ H(inner pad ‖ input)). */
    private static void finishHmac(final MessageDigest digest, final byte[] outerPad, final byte[] tag)
        throws GeneralSecurityException {
        digest.digest(tag, 0, 32);
        digest.update(outerPad);
        digest.update(tag, 0, 32);
        digest.digest(tag, 0, 32);
    }

    /** Compares a computed tag with a received one in time independent of where they differ. */
    private static boolean sameTag(final byte[] computed, final byte[] received, final int at) {
        int diff = 0;
        for (int i = 0; i < TAG_LENGTH; i++) {
            diff |= computed[i] ^ received[at + i];
        }
        return diff == 0;
    }

    /**
     * The MAC a connection manager frame about this connection carries (a CM_DISCONNECT), so that an on-path
     * attacker cannot end the connection with one. Control path: allocates.
     *
     * @param message the frame's fields that must not change
     * @return HMAC-SHA256 of them under the connection's control key
     */
    public byte[] controlMac(final byte[] message) {
        try {
            final javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(controlKey, "HmacSHA256"));
            return mac.doFinal(message);
        } catch (final GeneralSecurityException e) {
            throw new IllegalStateException("the JDK lacks HmacSHA256", e);
        }
    }

    /** @return the packet number the next frame sent will carry */
    public long nextPacketNumber() {
        return txNext;
    }
}
