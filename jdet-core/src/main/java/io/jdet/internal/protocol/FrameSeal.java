package io.jdet.internal.protocol;

import io.jdet.Security;
import io.jdet.internal.wire.Frame;
import io.jdet.internal.wire.FrameGather;

import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.security.GeneralSecurityException;

/**
 * The per-frame protection of one connection (both directions), keyed by the connection manager's handshake. A
 * protected frame has {@link Frame#FLAG_PROTECTED} set and a {@link #TRAILER_LENGTH}-byte trailer after its payload:
 * a 16-byte tag, the 8-byte little-endian packet number, then the 8-byte little-endian stream block (ENCRYPT with
 * Poly1305-AES: the index of the keystream block its payload starts at; otherwise 0). The header's payload length
 * excludes the trailer. Each direction's {@value #KEY_LENGTH}-byte key is an AES-128 key {@code k} (bytes 0-15), a
 * Poly1305 {@code r} (bytes 16-31) and an AES-128 key {@code g} for AES-GCM (bytes 32-47).
 * <ul>
 * <li>tag = Poly1305-AES (Bernstein 2005): Poly1305_r(packet number ‖ stream block ‖ header ‖ payload as sent) +
 *     AES_k(direction id ‖ 1 ‖ packet number) mod 2^128;</li>
 * <li>{@code ENCRYPT} also replaces the payload by its AES-128-CTR encryption under {@code k}, counter block =
 *     direction id ‖ 0 ‖ stream block (big-endian); each payload takes the next whole blocks of the direction's
 *     one keystream, so the two counter spaces never meet;</li>
 * <li>except that an {@code ENCRYPT} frame whose payload has at least {@link #GCM_MIN_PAYLOAD} bytes is sealed
 *     with AES-128-GCM under {@code g} instead: nonce = direction id ‖ packet number (big-endian), additional
 *     data = packet number ‖ stream block (0) ‖ header, tag = GCM's; it takes no keystream blocks.</li>
 * </ul>
 * The header is taken with its CRC field as 0 (the CRC is filled in after sealing and covers the whole frame).
 * Packet numbers count from 0 per direction, one per frame sent, retransmissions included, so no Poly1305 pad, no
 * keystream block and no GCM nonce is ever used twice; the receiver keeps a {@link ReplayWindow}. Which
 * construction a frame uses follows from its authenticated payload length alone.
 *
 * <p>Why Poly1305-AES below the threshold, not AES-GCM or ChaCha20-Poly1305 from the JDK: each needs a
 * {@code Cipher.init} per frame (a new nonce), which allocates 1-2 KB of provider state. Here the JDK ciphers are
 * initialised once per connection: AES/ECB (one block per frame: the Poly1305 pad) and AES/CTR, whose keystream
 * runs on from frame to frame; a receiver whose stream position differs from a frame's stream block (a frame
 * reordered) re-initialises its CTR cipher at that block, the only step that allocates, or, when the frame is
 * ahead by at most {@link #MAX_SKIP_BLOCKS} (frames lost, or sealed but never sent because the link was busy),
 * generates the keystream in between and discards it. Why AES-GCM above it: Poly1305 in plain Java runs at about
 * 1.1 GB/s per core, the JDK's GCM (AES and GHASH as VAES/PCLMUL intrinsics) at 2.5-3 GB/s per direction; the
 * init's ~1.1 KB per frame is then under 70 bytes per KiB of payload. Engine lock held; allocation free in steady
 * state for frames below the threshold.
 */
public final class FrameSeal {
    /** Bytes of the tag. */
    public static final int TAG_LENGTH = Poly1305.TAG_LENGTH;
    /** Bytes of the packet number. */
    public static final int PN_LENGTH = 8;
    /** Bytes of the stream block. */
    public static final int STREAM_LENGTH = 8;
    /** Bytes a protected frame carries after its payload. */
    public static final int TRAILER_LENGTH = Frame.PROTECTED_TRAILER_LENGTH; // TAG + PN + STREAM
    /** Bytes of each direction's key: AES-128 key, Poly1305 r, AES-128-GCM key. */
    public static final int KEY_LENGTH = 48;
    /** The smallest payload an ENCRYPT frame seals with AES-GCM rather than Poly1305-AES and AES-CTR. */
    public static final int GCM_MIN_PAYLOAD = 16_384;
    /** Direction id in the counter blocks of frames the connecting side sends. */
    public static final int CLIENT_TO_SERVER = 0x63327300;
    /** Direction id in the counter blocks of frames the accepting side sends. */
    public static final int SERVER_TO_CLIENT = 0x73326300;

    /** Layouts are made once: {@code withOrder} builds a new layout and var handle on every call (allocates). */
    private static final ValueLayout.OfShort LE_SHORT =
        ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong BE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt BE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final int BLOCK = 16;
    /** Bits of an AES-GCM tag. */
    private static final int GCM_TAG_BITS = 128;
    /** Bytes of an AES-GCM nonce: direction id, packet number. */
    private static final int NONCE_LENGTH = 12;
    /** The most keystream a receiver generates to catch up (a few lost frames); beyond, or backwards, it re-inits. */
    private static final long MAX_SKIP_BLOCKS = 16_384;

    private final boolean encrypt;
    private final SealBuffers buffers;
    private final Counters counters;
    private final Direction tx;
    private final Direction rx;
    private final ReplayWindow replay = new ReplayWindow();
    /** Authenticates the connection manager's frames about this connection (its disconnect). */
    private final byte[] controlKey;
    private long txNext;

    /** One direction's keys, ciphers and scratch. */
    private static final class Direction {
        final SecretKeySpec aes;
        final Poly1305 mac;
        final Cipher pads;
        final Cipher stream;
        /** AES-GCM for large ENCRYPT frames (null for AUTH), and its key. */
        final Cipher gcm;
        final SecretKeySpec gcmKey;
        /** Direction id ‖ packet number, the GCM nonce. */
        final byte[] nonce = new byte[NONCE_LENGTH];
        final MemorySegment nonceSegment = MemorySegment.ofArray(nonce);
        /** The counter block of the next pad, or of a stream (re)start. */
        final byte[] counter = new byte[BLOCK];
        final MemorySegment counterSegment = MemorySegment.ofArray(counter);
        final byte[] pad = new byte[BLOCK];
        final byte[] tag = new byte[BLOCK];
        /** The packet number and stream block, as they enter the MAC. */
        final byte[] prefix = new byte[PN_LENGTH + STREAM_LENGTH];
        final MemorySegment prefixSegment = MemorySegment.ofArray(prefix);
        final int id;
        /** The keystream block the stream cipher is at. */
        long streamBlock;

        Direction(final byte[] key, final int id, final boolean encrypt) throws GeneralSecurityException {
            if (key.length != KEY_LENGTH) {
                throw new IllegalArgumentException("a direction key has " + KEY_LENGTH + " bytes");
            }
            this.id = id;
            this.aes = new SecretKeySpec(key, 0, 16, "AES");
            this.mac = new Poly1305(key, 16);
            this.pads = Cipher.getInstance("AES/ECB/NoPadding");
            pads.init(Cipher.ENCRYPT_MODE, aes);
            counterSegment.set(BE_INT, 0, id);
            nonceSegment.set(BE_INT, 0, id);
            if (encrypt) {
                this.stream = Cipher.getInstance("AES/CTR/NoPadding");
                restart(0);
                this.gcmKey = new SecretKeySpec(key, 32, 16, "AES");
                this.gcm = Cipher.getInstance("AES/GCM/NoPadding");
            } else {
                this.stream = null;
                this.gcmKey = null;
                this.gcm = null;
            }
        }

        /**
         * Starts AES-GCM for one frame: nonce id ‖ pn, additional data pn ‖ 0 ‖ header (allocates: the JDK's init).
         *
         * @param mode   {@link Cipher#ENCRYPT_MODE} or {@link Cipher#DECRYPT_MODE}
         * @param pn     the frame's packet number
         * @param header the header, CRC field 0
         */
        void gcmStart(final int mode, final long pn, final byte[] header) throws GeneralSecurityException {
            nonceSegment.set(BE_LONG, 4, pn);
            gcm.init(mode, gcmKey, new GCMParameterSpec(GCM_TAG_BITS, nonce));
            prefixSegment.set(LE_LONG, 0, pn);
            prefixSegment.set(LE_LONG, PN_LENGTH, 0L);
            gcm.updateAAD(prefix, 0, prefix.length);
            gcm.updateAAD(header, 0, Frame.HEADER_LENGTH);
        }

        /** The Poly1305 pad of a packet number: AES_k(id ‖ 1 ‖ pn). */
        void pad(final long pn) throws GeneralSecurityException {
            counterSegment.set(BE_INT, 4, 1);
            counterSegment.set(BE_LONG, 8, pn);
            pads.update(counter, 0, BLOCK, pad, 0);
        }

        /** Moves the stream cipher to a keystream block (allocates: the JDK's init). */
        void restart(final long block) throws GeneralSecurityException {
            counterSegment.set(BE_INT, 4, 0);
            counterSegment.set(BE_LONG, 8, block);
            stream.init(Cipher.ENCRYPT_MODE, aes, new IvParameterSpec(counter));
            streamBlock = block;
        }

        /** En- or decrypts the next payload with the stream and skips to the next whole block. */
        void crypt(final byte[] in, final int inOffset, final int length, final byte[] out, final int outOffset,
                   final byte[] skip) throws GeneralSecurityException {
            stream.update(in, inOffset, length, out, outOffset);
            final int rest = length & BLOCK - 1;
            if (rest != 0) {
                stream.update(skip, 0, BLOCK - rest, skip, SealBuffers.SKIP_CHUNK);
            }
            streamBlock += blocks(length);
        }

        /**
         * Moves the stream forward by whole blocks without a new init: the keystream of frames that never came
         * (lost, or sealed but not sent because the link was busy) is generated and thrown away.
         */
        void skip(final long blocks, final byte[] skip) throws GeneralSecurityException {
            long left = blocks * BLOCK;
            while (left > 0) {
                final int piece = (int) Math.min(left, SealBuffers.SKIP_CHUNK);
                stream.update(skip, 0, piece, skip, SealBuffers.SKIP_CHUNK);
                left -= piece;
            }
            streamBlock += blocks;
        }
    }

    /**
     * Protection for one connection.
     *
     * @param mode     AUTH or ENCRYPT
     * @param txKey    the key of the frames this side sends ({@link #KEY_LENGTH} bytes)
     * @param rxKey    the key of the frames the peer sends
     * @param client   whether this side connected (chooses the direction ids)
     * @param controlKey the key of {@link #controlMac} (32 bytes)
     * @param buffers  the NIC's scratch memory
     * @param counters the NIC's counters
     * @throws IllegalArgumentException if the mode is NONE or a key has the wrong length
     * @throws IllegalStateException if the JDK lacks AES (it never does: a required algorithm)
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
        try {
            this.tx = new Direction(txKey, client ? CLIENT_TO_SERVER : SERVER_TO_CLIENT, encrypt);
            this.rx = new Direction(rxKey, client ? SERVER_TO_CLIENT : CLIENT_TO_SERVER, encrypt);
        } catch (final GeneralSecurityException e) {
            throw new IllegalStateException("the JDK lacks a required algorithm", e);
        }
    }

    /** Keystream blocks a payload takes. */
    private static long blocks(final int length) {
        return (length + BLOCK - 1) / BLOCK;
    }

    /**
     * Seals a frame about to be sent: sets the protected flag, and turns the payload pieces into what goes after
     * the header (AUTH: the pieces plus a trailer piece; ENCRYPT: one piece of ciphertext and trailer).
     *
     * @param header  the frame's header, its payload length the plain payload's; its CRC field is set to 0
     * @param payload the payload pieces, replaced by what is to be sent; at least one free slot
     * @throws IllegalStateException if a piece's memory was closed (no keystream is used then)
     */
    public void seal(final MemorySegment header, final FrameGather payload) {
        header.set(LE_SHORT, Frame.FLAGS_OFFSET,
            (short) (Frame.flags(header) | Frame.FLAG_PROTECTED));
        header.set(ValueLayout.JAVA_INT_UNALIGNED, Frame.CRC_OFFSET, 0);
        final SealBuffers b = buffers;
        final Direction d = tx;
        MemorySegment.copy(header, ValueLayout.JAVA_BYTE, 0, b.header, 0, Frame.HEADER_LENGTH);
        final int n = payload.totalLength();
        final long pn = txNext++;
        try {
            final Poly1305 mac = d.mac;
            mac.reset();
            if (encrypt && n >= GCM_MIN_PAYLOAD) {
                sealGcm(d, b, pn, payload, n);
            } else if (encrypt) {
                payload.copyTo(b.txPlainSegment, 0); // first: a closed arena throws before any keystream is used
                d.prefixSegment.set(LE_LONG, 0, pn);
                d.prefixSegment.set(LE_LONG, PN_LENGTH, d.streamBlock);
                mac.update(d.prefix, 0, d.prefix.length);
                mac.update(b.header, 0, Frame.HEADER_LENGTH);
                d.crypt(b.txPlain, 0, n, b.txSealed, 0, b.skip);
                mac.update(b.txSealed, 0, n);
                d.pad(pn);
                mac.finish(d.pad, 0, b.txSealed, n);
                System.arraycopy(d.prefix, 0, b.txSealed, n + TAG_LENGTH, d.prefix.length);
                payload.clear();
                payload.add(b.txSealedSegment, b.txSealedView, 0, n + TRAILER_LENGTH);
            } else {
                d.prefixSegment.set(LE_LONG, 0, pn);
                d.prefixSegment.set(LE_LONG, PN_LENGTH, 0L);
                mac.update(d.prefix, 0, d.prefix.length);
                mac.update(b.header, 0, Frame.HEADER_LENGTH);
                for (int i = 0; i < payload.count(); i++) {
                    mac.update(payload.segment(i), payload.offset(i), payload.length(i));
                }
                d.pad(pn);
                mac.finish(d.pad, 0, b.txSealed, 0);
                System.arraycopy(d.prefix, 0, b.txSealed, TAG_LENGTH, d.prefix.length);
                payload.add(b.txSealedSegment, b.txSealedView, 0, TRAILER_LENGTH);
            }
        } catch (final GeneralSecurityException e) {
            throw new IllegalStateException("sealing failed", e); // a fault of the engine's own, never the peer's
        }
    }

    /** Seals a large ENCRYPT frame with AES-GCM (a method of its own: keeps {@link #seal} small for the JIT). */
    private static void sealGcm(final Direction d, final SealBuffers b, final long pn, final FrameGather payload,
                                final int n) throws GeneralSecurityException {
        payload.copyTo(b.txPlainSegment, 0); // first: a closed arena throws before the cipher starts
        d.gcmStart(Cipher.ENCRYPT_MODE, pn, b.header);
        d.gcm.doFinal(b.txPlain, 0, n, b.txSealed, 0); // ciphertext, then the tag where the trailer starts
        System.arraycopy(d.prefix, 0, b.txSealed, n + TAG_LENGTH, d.prefix.length);
        payload.clear();
        payload.add(b.txSealedSegment, b.txSealedView, 0, n + TRAILER_LENGTH);
    }

    /**
     * Opens a received protected frame: checks its packet number against the replay window and its tag, and for
     * ENCRYPT decrypts its payload. A frame that fails is counted and dropped, as is one longer than the NIC's
     * MTU ({@code rx.bad_header}).
     *
     * @param f      the frame, header checked, its CRC field 0
     * @param length its length, trailer included
     * @return the frame to process, without its trailer ({@code f} itself for AUTH, the NIC's native scratch
     *         memory for ENCRYPT, valid until the next frame), or null if it was dropped
     */
    public MemorySegment open(final MemorySegment f, final int length) {
        final int n = length - Frame.HEADER_LENGTH - TRAILER_LENGTH;
        if (Frame.HEADER_LENGTH + n > buffers.rxFrame.byteSize()) {
            // Longer than any frame this NIC sends or takes (its MTU; a datagram may hold more): no sender
            // made it, and it would not fit the scratch memory it is opened in.
            counters.badHeader++;
            return null;
        }
        final int prefixAt = length - PN_LENGTH - STREAM_LENGTH;
        final long pn = f.get(LE_LONG, prefixAt);
        final long block = f.get(LE_LONG, prefixAt + PN_LENGTH);
        if (!replay.fresh(pn)) {
            counters.sealReplayed++;
            return null;
        }
        final SealBuffers b = buffers;
        final Direction d = rx;
        MemorySegment.copy(f, ValueLayout.JAVA_BYTE, 0, b.header, 0, Frame.HEADER_LENGTH);
        b.header[Frame.CRC_OFFSET] = b.header[Frame.CRC_OFFSET + 1] = 0;
        b.header[Frame.CRC_OFFSET + 2] = b.header[Frame.CRC_OFFSET + 3] = 0;
        final Poly1305 mac = d.mac;
        try {
            MemorySegment.copy(f, ValueLayout.JAVA_BYTE, Frame.HEADER_LENGTH, b.rxIn, 0, n + TRAILER_LENGTH);
            if (encrypt && n >= GCM_MIN_PAYLOAD) {
                return openGcm(d, b, pn, block, n);
            }
            mac.reset();
            mac.update(b.rxIn, n + TAG_LENGTH, PN_LENGTH + STREAM_LENGTH);
            mac.update(b.header, 0, Frame.HEADER_LENGTH);
            mac.update(b.rxIn, 0, n);
            d.pad(pn);
            mac.finish(d.pad, 0, d.tag, 0);
            if (!sameTag(d.tag, b.rxIn, n)) {
                counters.sealBadTag++;
                return null;
            }
            final MemorySegment out;
            if (encrypt) {
                if (n > 0) {
                    if (block < 0 || block > Long.MAX_VALUE / 2) {
                        counters.sealBadTag++; // authenticated, so a peer's fault; never a wrapped counter
                        return null;
                    }
                    if (block != d.streamBlock) {
                        counters.sealResync++; // a frame lost, unsent or reordered before this one
                        if (block > d.streamBlock && block - d.streamBlock <= MAX_SKIP_BLOCKS) {
                            d.skip(block - d.streamBlock, b.skip);
                        } else {
                            d.restart(block);
                        }
                    }
                    d.crypt(b.rxIn, 0, n, b.rxPlain, Frame.HEADER_LENGTH, b.skip);
                }
                MemorySegment.copy(b.header, 0, b.rxFrame, ValueLayout.JAVA_BYTE, 0, Frame.HEADER_LENGTH);
                MemorySegment.copy(b.rxPlain, Frame.HEADER_LENGTH, b.rxFrame, ValueLayout.JAVA_BYTE,
                    Frame.HEADER_LENGTH, n);
                out = b.rxFrame;
            } else if (block != 0) {
                counters.sealBadTag++;
                return null;
            } else {
                out = f;
            }
            replay.commit(pn);
            return out;
        } catch (final GeneralSecurityException e) {
            counters.sealBadTag++;
            return null;
        }
    }

    /**
     * Opens a frame sealed with AES-GCM, its bytes after the header in {@code b.rxIn}: checks the tag (the JDK
     * releases no plaintext before) and decrypts.
     *
     * @return the frame to process (the NIC's native scratch memory), or null if it was dropped
     * @throws GeneralSecurityException if the tag is wrong ({@code AEADBadTagException}): the caller drops it
     */
    private MemorySegment openGcm(final Direction d, final SealBuffers b, final long pn, final long block,
                                  final int n) throws GeneralSecurityException {
        if (block != 0) {
            counters.sealBadTag++;
            return null;
        }
        d.gcmStart(Cipher.DECRYPT_MODE, pn, b.header);
        d.gcm.doFinal(b.rxIn, 0, n + TAG_LENGTH, b.rxPlain, Frame.HEADER_LENGTH); // a wrong tag throws (caller)
        MemorySegment.copy(b.header, 0, b.rxFrame, ValueLayout.JAVA_BYTE, 0, Frame.HEADER_LENGTH);
        MemorySegment.copy(b.rxPlain, Frame.HEADER_LENGTH, b.rxFrame, ValueLayout.JAVA_BYTE, Frame.HEADER_LENGTH, n);
        replay.commit(pn);
        return b.rxFrame;
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
