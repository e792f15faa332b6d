package io.jdet.internal.protocol;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Poly1305 (RFC 8439 section 2.5), the one-time authenticator of Poly1305-AES and ChaCha20-Poly1305, over
 * byte arrays in three limbs of 44, 44 and 42 bits (poly1305-donna-64's radix, its 128-bit products taken as
 * {@code a * b} for the low 44 bits and {@code Math.multiplyHigh} of both factors shifted by 10 for the rest),
 * allocation free ({@link MemorySegment}s, heap or native, go through a staging array: one access site that sees
 * both kinds of segment runs several times slower than a copy). The key's {@code r} half is set once
 * ({@link #Poly1305(byte[], int)}); each message brings its own {@code s} half ({@link #finish}), which must
 * never repeat for one {@code r}: {@link FrameSeal} takes it from AES under a unique counter block, as
 * Poly1305-AES does. Not thread safe: one instance per direction, used under the engine lock.
 */
public final class Poly1305 {
    /** Bytes of a tag and of the {@code s} half of a key. */
    public static final int TAG_LENGTH = 16;
    private static final VarHandle LE_LONG = MethodHandles.byteArrayViewVarHandle(long[].class,
        ByteOrder.LITTLE_ENDIAN);
    private static final int STAGE = 4096;
    private static final long M44 = (1L << 44) - 1;
    private static final long M42 = (1L << 42) - 1;
    /** 2^128 in limb 2 (whose bit 0 is 2^88). */
    private static final long HIBIT = 1L << 40;

    private final long r0;
    private final long r1;
    private final long r2;
    /** r1 and r2 times 20: a product at 2^132 or beyond wraps to 2^132 - 2^130 * 4 ≡ 5 * 4. */
    private final long s1;
    private final long s2;
    /** The same, shifted left by 10: {@code multiplyHigh(a << 10, b << 10)} is {@code (a * b) >> 44}. */
    private final long r0x;
    private final long r1x;
    private final long r2x;
    private final long s1x;
    private final long s2x;
    private long h0;
    private long h1;
    private long h2;
    /** An incomplete block carried between {@link #update} calls. */
    private final byte[] partial = new byte[TAG_LENGTH];
    private int partialLength;
    /** Segment bytes on their way in. */
    private final byte[] stage = new byte[STAGE];
    private final MemorySegment stageSegment = MemorySegment.ofArray(stage);

    /**
     * An authenticator with a fixed {@code r}.
     *
     * @param key    holds {@code r} (16 bytes, little-endian; clamped here as RFC 8439 says)
     * @param offset where {@code r} starts in {@code key}
     */
    public Poly1305(final byte[] key, final int offset) {
        final long t0 = (long) LE_LONG.get(key, offset);
        final long t1 = (long) LE_LONG.get(key, offset + 8);
        r0 = t0 & 0xffc0fffffffL;
        r1 = (t0 >>> 44 | t1 << 20) & 0xfffffc0ffffL;
        r2 = t1 >>> 24 & 0x00ffffffc0fL;
        s1 = r1 * 20;
        s2 = r2 * 20;
        r0x = r0 << 10;
        r1x = r1 << 10;
        r2x = r2 << 10;
        s1x = s1 << 10;
        s2x = s2 << 10;
    }

    /** Starts a message. */
    public void reset() {
        h0 = h1 = h2 = 0;
        partialLength = 0;
    }

    /**
     * Adds message bytes from memory.
     *
     * @param m      the memory
     * @param offset the first byte's offset in it
     * @param length the byte count
     * @throws IllegalStateException if the memory was closed (the message is then unusable: {@link #reset})
     */
    public void update(final MemorySegment m, final long offset, final long length) {
        long at = offset;
        long left = length;
        while (left > 0) {
            final int piece = (int) Math.min(left, STAGE);
            MemorySegment.copy(m, at, stageSegment, 0, piece);
            update(stage, 0, piece);
            at += piece;
            left -= piece;
        }
    }

    /**
     * Adds message bytes.
     *
     * @param m      the bytes
     * @param offset the first one's index
     * @param length the byte count
     */
    public void update(final byte[] m, final int offset, final int length) {
        int at = offset;
        int left = length;
        if (partialLength > 0) {
            final int take = Math.min(left, TAG_LENGTH - partialLength);
            System.arraycopy(m, at, partial, partialLength, take);
            partialLength += take;
            at += take;
            left -= take;
            if (partialLength < TAG_LENGTH) {
                return;
            }
            blocks(partial, 0, TAG_LENGTH, HIBIT);
            partialLength = 0;
        }
        final int whole = left & ~(TAG_LENGTH - 1);
        if (whole > 0) {
            blocks(m, at, whole, HIBIT);
        }
        final int rest = left - whole;
        if (rest > 0) {
            System.arraycopy(m, at + whole, partial, 0, rest);
            partialLength = rest;
        }
    }

    /**
     * Ends the message: tag = (Poly1305_r(message) + s) mod 2^128.
     *
     * @param s         the message's {@code s} (16 bytes, little-endian)
     * @param sOffset   where it starts
     * @param tag       receives the tag
     * @param tagOffset where to write it
     */
    public void finish(final byte[] s, final int sOffset, final byte[] tag, final int tagOffset) {
        if (partialLength > 0) {
            partial[partialLength] = 1;
            for (int i = partialLength + 1; i < TAG_LENGTH; i++) {
                partial[i] = 0;
            }
            blocks(partial, 0, TAG_LENGTH, 0);
            partialLength = 0;
        }
        // Carry fully (twice round: the first pass may leave h1 or h0 one carry over)
        long c;
        for (int pass = 0; pass < 2; pass++) {
            c = h1 >>> 44;
            h1 &= M44;
            h2 += c;
            c = h2 >>> 42;
            h2 &= M42;
            h0 += c * 5;
            c = h0 >>> 44;
            h0 &= M44;
            h1 += c;
        }
        // h - p, selected in constant time when h >= p
        long g0 = h0 + 5;
        c = g0 >>> 44;
        g0 &= M44;
        long g1 = h1 + c;
        c = g1 >>> 44;
        g1 &= M44;
        final long g2 = h2 + c - (1L << 42);
        final long useG = (g2 >>> 63) - 1; // all ones when g2 >= 0, that is h >= p
        final long f0 = h0 & ~useG | g0 & useG;
        final long f1 = h1 & ~useG | g1 & useG;
        final long f2 = h2 & ~useG | g2 & M42 & useG;
        final long w0 = f0 | f1 << 44;
        final long w1 = f1 >>> 20 | f2 << 24;
        final long lo = w0 + (long) LE_LONG.get(s, sOffset);
        final long carry = Long.compareUnsigned(lo, w0) < 0 ? 1 : 0;
        LE_LONG.set(tag, tagOffset, lo);
        LE_LONG.set(tag, tagOffset + 8, w1 + (long) LE_LONG.get(s, sOffset + 8) + carry);
    }

    /** Absorbs whole 16-byte blocks; {@code hibit} is 2^128 in limb 2 (0 for the padded last block). */
    private void blocks(final byte[] m, final int offset, final int length, final long hibit) {
        long a0 = h0;
        long a1 = h1;
        long a2 = h2;
        final int end = offset + length;
        for (int at = offset; at < end; at += TAG_LENGTH) {
            final long t0 = (long) LE_LONG.get(m, at);
            final long t1 = (long) LE_LONG.get(m, at + 8);
            a0 += t0 & M44;
            a1 += (t0 >>> 44 | t1 << 20) & M44;
            a2 += t1 >>> 24 | hibit;
            // d_i = sum of products, each split into its low 44 bits (l) and the rest (u, in units of 2^44)
            final long x0 = a0 << 10;
            final long x1 = a1 << 10;
            final long x2 = a2 << 10;
            final long l0 = (a0 * r0 & M44) + (a1 * s2 & M44) + (a2 * s1 & M44);
            final long u0 = Math.multiplyHigh(x0, r0x) + Math.multiplyHigh(x1, s2x) + Math.multiplyHigh(x2, s1x);
            final long l1 = (a0 * r1 & M44) + (a1 * r0 & M44) + (a2 * s2 & M44);
            final long u1 = Math.multiplyHigh(x0, r1x) + Math.multiplyHigh(x1, r0x) + Math.multiplyHigh(x2, s2x);
            final long l2 = (a0 * r2 & M44) + (a1 * r1 & M44) + (a2 * r0 & M44);
            final long u2 = Math.multiplyHigh(x0, r2x) + Math.multiplyHigh(x1, r1x) + Math.multiplyHigh(x2, r0x);
            a0 = l0 & M44;
            final long d1 = l1 + u0 + (l0 >>> 44);
            a1 = d1 & M44;
            final long d2 = l2 + u1 + (d1 >>> 44);
            a2 = d2 & M42;
            a0 += ((u2 << 2) + (d2 >>> 42)) * 5; // limb 2 holds 42 bits: what is above is in units of 2^130
            final long c = a0 >>> 44;
            a0 &= M44;
            a1 += c;
        }
        h0 = a0;
        h1 = a1;
        h2 = a2;
    }
}
