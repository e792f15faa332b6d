package io.jdet.internal.protocol;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Poly1305 (RFC 8439 section 2.5), the one-time authenticator of Poly1305-AES and ChaCha20-Poly1305, over
 * byte arrays in 26-bit limbs, allocation free ({@link MemorySegment}s, heap or native, go through a staging
 * array: one access site that sees both kinds of segment runs several times slower than a copy). The key's {@code r} half is set
 * once ({@link #Poly1305(byte[], int)}); each message brings its own {@code s} half ({@link #finish}), which must
 * never repeat for one {@code r}: {@link FrameSeal} takes it from AES under a unique counter block, as
 * Poly1305-AES does. Not thread safe: one instance per direction, used under the engine lock.
 */
public final class Poly1305 {
    /** Bytes of a tag and of the {@code s} half of a key. */
    public static final int TAG_LENGTH = 16;
    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LE_INT_ARRAY = MethodHandles.byteArrayViewVarHandle(int[].class,
        ByteOrder.LITTLE_ENDIAN);
    private static final int STAGE = 4096;
    private static final long M26 = 0x3ffffff;
    private static final long HIBIT = 1L << 24;

    private final long r0;
    private final long r1;
    private final long r2;
    private final long r3;
    private final long r4;
    private final long s1;
    private final long s2;
    private final long s3;
    private final long s4;
    /** r^2 mod p, and its limbs times 5: two blocks per step, the second multiplied by r, the first by r^2. */
    private final long q0;
    private final long q1;
    private final long q2;
    private final long q3;
    private final long q4;
    private final long t1;
    private final long t2;
    private final long t3;
    private final long t4;
    private long h0;
    private long h1;
    private long h2;
    private long h3;
    private long h4;
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
        final MemorySegment k = MemorySegment.ofArray(key);
        r0 = k.get(LE_INT, offset) & 0x3ffffff;
        r1 = (k.get(LE_INT, offset + 3) & 0xffffffffL) >>> 2 & 0x3ffff03;
        r2 = (k.get(LE_INT, offset + 6) & 0xffffffffL) >>> 4 & 0x3ffc0ff;
        r3 = (k.get(LE_INT, offset + 9) & 0xffffffffL) >>> 6 & 0x3f03fff;
        r4 = (k.get(LE_INT, offset + 12) & 0xffffffffL) >>> 8 & 0x00fffff;
        s1 = r1 * 5;
        s2 = r2 * 5;
        s3 = r3 * 5;
        s4 = r4 * 5;
        final long d0 = r0 * r0 + r1 * s4 + r2 * s3 + r3 * s2 + r4 * s1;
        long d1 = r0 * r1 + r1 * r0 + r2 * s4 + r3 * s3 + r4 * s2;
        long d2 = r0 * r2 + r1 * r1 + r2 * r0 + r3 * s4 + r4 * s3;
        long d3 = r0 * r3 + r1 * r2 + r2 * r1 + r3 * r0 + r4 * s4;
        long d4 = r0 * r4 + r1 * r3 + r2 * r2 + r3 * r1 + r4 * r0;
        long c = d0 >>> 26;
        long e0 = d0 & M26;
        d1 += c;
        c = d1 >>> 26;
        long e1 = d1 & M26;
        d2 += c;
        c = d2 >>> 26;
        q2 = d2 & M26;
        d3 += c;
        c = d3 >>> 26;
        q3 = d3 & M26;
        d4 += c;
        c = d4 >>> 26;
        q4 = d4 & M26;
        e0 += c * 5;
        c = e0 >>> 26;
        q0 = e0 & M26;
        q1 = e1 + c;
        t1 = q1 * 5;
        t2 = q2 * 5;
        t3 = q3 * 5;
        t4 = q4 * 5;
    }

    /** Starts a message. */
    public void reset() {
        h0 = h1 = h2 = h3 = h4 = 0;
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
        long c = h1 >>> 26;
        h1 &= M26;
        h2 += c;
        c = h2 >>> 26;
        h2 &= M26;
        h3 += c;
        c = h3 >>> 26;
        h3 &= M26;
        h4 += c;
        c = h4 >>> 26;
        h4 &= M26;
        h0 += c * 5;
        c = h0 >>> 26;
        h0 &= M26;
        h1 += c;
        // h - p, selected in constant time when h >= p
        long g0 = h0 + 5;
        c = g0 >>> 26;
        g0 &= M26;
        long g1 = h1 + c;
        c = g1 >>> 26;
        g1 &= M26;
        long g2 = h2 + c;
        c = g2 >>> 26;
        g2 &= M26;
        long g3 = h3 + c;
        c = g3 >>> 26;
        g3 &= M26;
        final long g4 = h4 + c - (1L << 26);
        final long useG = (g4 >>> 63) - 1; // all ones when g4 >= 0, that is h >= p
        final long f0 = h0 & ~useG | g0 & useG;
        final long f1 = h1 & ~useG | g1 & useG;
        final long f2 = h2 & ~useG | g2 & useG;
        final long f3 = h3 & ~useG | g3 & useG;
        final long f4 = h4 & ~useG | g4 & M26 & useG;
        final long w0 = (f0 | f1 << 26) & 0xffffffffL;
        final long w1 = (f1 >>> 6 | f2 << 20) & 0xffffffffL;
        final long w2 = (f2 >>> 12 | f3 << 14) & 0xffffffffL;
        final long w3 = (f3 >>> 18 | f4 << 8) & 0xffffffffL;
        long sum = w0 + le32(s, sOffset);
        LE_INT_ARRAY.set(tag, tagOffset, (int) sum);
        sum = w1 + le32(s, sOffset + 4) + (sum >>> 32);
        LE_INT_ARRAY.set(tag, tagOffset + 4, (int) sum);
        sum = w2 + le32(s, sOffset + 8) + (sum >>> 32);
        LE_INT_ARRAY.set(tag, tagOffset + 8, (int) sum);
        sum = w3 + le32(s, sOffset + 12) + (sum >>> 32);
        LE_INT_ARRAY.set(tag, tagOffset + 12, (int) sum);
    }

    /** Absorbs whole 16-byte blocks; {@code hibit} is 2^128 in limb 4 (0 for the padded last block). */
    private void blocks(final byte[] m, final int offset, final int length, final long hibit) {
        long a0 = h0;
        long a1 = h1;
        long a2 = h2;
        long a3 = h3;
        long a4 = h4;
        final int end = offset + length;
        int at = offset;
        for (; at + 2 * TAG_LENGTH <= end; at += 2 * TAG_LENGTH) {
            a0 += le32(m, at) & M26;
            a1 += le32(m, at + 3) >>> 2 & M26;
            a2 += le32(m, at + 6) >>> 4 & M26;
            a3 += le32(m, at + 9) >>> 6 & M26;
            a4 += le32(m, at + 12) >>> 8 | hibit;
            final long b0 = le32(m, at + 16) & M26;
            final long b1 = le32(m, at + 19) >>> 2 & M26;
            final long b2 = le32(m, at + 22) >>> 4 & M26;
            final long b3 = le32(m, at + 25) >>> 6 & M26;
            final long b4 = le32(m, at + 28) >>> 8 | hibit;
            final long d0 = a0 * q0 + a1 * t4 + a2 * t3 + a3 * t2 + a4 * t1
                + b0 * r0 + b1 * s4 + b2 * s3 + b3 * s2 + b4 * s1;
            long d1 = a0 * q1 + a1 * q0 + a2 * t4 + a3 * t3 + a4 * t2
                + b0 * r1 + b1 * r0 + b2 * s4 + b3 * s3 + b4 * s2;
            long d2 = a0 * q2 + a1 * q1 + a2 * q0 + a3 * t4 + a4 * t3
                + b0 * r2 + b1 * r1 + b2 * r0 + b3 * s4 + b4 * s3;
            long d3 = a0 * q3 + a1 * q2 + a2 * q1 + a3 * q0 + a4 * t4
                + b0 * r3 + b1 * r2 + b2 * r1 + b3 * r0 + b4 * s4;
            long d4 = a0 * q4 + a1 * q3 + a2 * q2 + a3 * q1 + a4 * q0
                + b0 * r4 + b1 * r3 + b2 * r2 + b3 * r1 + b4 * r0;
            long c = d0 >>> 26;
            a0 = d0 & M26;
            d1 += c;
            c = d1 >>> 26;
            a1 = d1 & M26;
            d2 += c;
            c = d2 >>> 26;
            a2 = d2 & M26;
            d3 += c;
            c = d3 >>> 26;
            a3 = d3 & M26;
            d4 += c;
            c = d4 >>> 26;
            a4 = d4 & M26;
            a0 += c * 5;
            c = a0 >>> 26;
            a0 &= M26;
            a1 += c;
        }
        for (; at < end; at += TAG_LENGTH) {
            a0 += le32(m, at) & M26;
            a1 += le32(m, at + 3) >>> 2 & M26;
            a2 += le32(m, at + 6) >>> 4 & M26;
            a3 += le32(m, at + 9) >>> 6 & M26;
            a4 += le32(m, at + 12) >>> 8 | hibit;
            final long d0 = a0 * r0 + a1 * s4 + a2 * s3 + a3 * s2 + a4 * s1;
            long d1 = a0 * r1 + a1 * r0 + a2 * s4 + a3 * s3 + a4 * s2;
            long d2 = a0 * r2 + a1 * r1 + a2 * r0 + a3 * s4 + a4 * s3;
            long d3 = a0 * r3 + a1 * r2 + a2 * r1 + a3 * r0 + a4 * s4;
            long d4 = a0 * r4 + a1 * r3 + a2 * r2 + a3 * r1 + a4 * r0;
            long c = d0 >>> 26;
            a0 = d0 & M26;
            d1 += c;
            c = d1 >>> 26;
            a1 = d1 & M26;
            d2 += c;
            c = d2 >>> 26;
            a2 = d2 & M26;
            d3 += c;
            c = d3 >>> 26;
            a3 = d3 & M26;
            d4 += c;
            c = d4 >>> 26;
            a4 = d4 & M26;
            a0 += c * 5;
            c = a0 >>> 26;
            a0 &= M26;
            a1 += c;
        }
        h0 = a0;
        h1 = a1;
        h2 = a2;
        h3 = a3;
        h4 = a4;
    }

    private static long le32(final byte[] b, final int at) {
        return (int) LE_INT_ARRAY.get(b, at) & 0xffffffffL;
    }
}
