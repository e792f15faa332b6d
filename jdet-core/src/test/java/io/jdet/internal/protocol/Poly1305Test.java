package io.jdet.internal.protocol;

import org.junit.jupiter.api.Test;

import javax.crypto.Cipher;
import javax.crypto.spec.ChaCha20ParameterSpec;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

/**
 * Poly1305 against RFC 8439's vector and, for many lengths and chunkings, against the JDK's ChaCha20-Poly1305
 * (whose tag is Poly1305 under a one-time key taken from ChaCha20's first block).
 */
class Poly1305Test {
    private static final HexFormat HEX = HexFormat.of();

    @Test
    void rfc8439Vector() {
        final byte[] key = HEX.parseHex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b");
        final byte[] msg = "Cryptographic Forum Research Group".getBytes(StandardCharsets.US_ASCII);
        assertArrayEquals(HEX.parseHex("a8061dc1305136c6c22b8baf0c0127a9"), tag(key, msg, msg.length));
    }

    @Test
    void allOnesKeyAndMessageWrapModuloTwoTo128() {
        // r = 0 after clamping of zeros: the tag is s, whatever the message (RFC 8439 A.3 test vector #1 and #2 form)
        final byte[] key = new byte[32];
        Arrays.fill(key, 16, 32, (byte) 0xff);
        final byte[] msg = new byte[64];
        Arrays.fill(msg, (byte) 0xff);
        final byte[] ones = new byte[16];
        Arrays.fill(ones, (byte) 0xff);
        assertArrayEquals(ones, tag(key, msg, 64));
        // RFC 8439 A.3 vector #5: r = 2, s = 0, message = 2^128 - 1 in two blocks' worth: tag 03 00..00
        final byte[] k5 = new byte[32];
        k5[0] = 2;
        final byte[] m5 = new byte[16];
        Arrays.fill(m5, (byte) 0xff);
        assertArrayEquals(HEX.parseHex("03000000000000000000000000000000"), tag(k5, m5, 16));
        // A.3 vector #6: r = 2, s = ff..ff, message 02 00..00: tag 03 00..00
        final byte[] k6 = new byte[32];
        k6[0] = 2;
        Arrays.fill(k6, 16, 32, (byte) 0xff);
        final byte[] m6 = new byte[16];
        m6[0] = 2;
        assertArrayEquals(HEX.parseHex("03000000000000000000000000000000"), tag(k6, m6, 16));
    }

    @Test
    void matchesTheJdksChaCha20Poly1305ForManyLengthsAndChunkings() throws Exception {
        final Random random = new Random(8);
        final Cipher aead = Cipher.getInstance("ChaCha20-Poly1305");
        final Cipher stream = Cipher.getInstance("ChaCha20");
        for (int n = 0; n < 300; n++) {
            final byte[] key = new byte[32];
            final byte[] nonce = new byte[12];
            random.nextBytes(key);
            random.nextBytes(nonce);
            final byte[] plain = new byte[n < 200 ? n : random.nextInt(5000)];
            random.nextBytes(plain);
            final SecretKeySpec k = new SecretKeySpec(key, "ChaCha20");
            aead.init(Cipher.ENCRYPT_MODE, k, new IvParameterSpec(nonce));
            final byte[] sealed = aead.doFinal(plain);
            stream.init(Cipher.ENCRYPT_MODE, k, new ChaCha20ParameterSpec(nonce, 0));
            final byte[] oneTime = stream.update(new byte[32]);
            // RFC 8439 2.8: mac data = ciphertext, zero-padded to 16, then le64(aad length = 0), le64(ct length)
            final int ct = plain.length;
            final int padded = ct + 15 & ~15;
            final byte[] macData = new byte[padded + 16];
            System.arraycopy(sealed, 0, macData, 0, ct);
            ByteBuffer.wrap(macData).order(ByteOrder.LITTLE_ENDIAN).putLong(padded + 8, ct);
            final byte[] expected = Arrays.copyOfRange(sealed, ct, ct + 16);
            assertArrayEquals(expected, tag(oneTime, macData, macData.length), "length " + ct);
            assertArrayEquals(expected, chunked(oneTime, macData, random), "length " + ct + ", in pieces");
        }
    }

    private static byte[] tag(final byte[] key, final byte[] msg, final int length) {
        final Poly1305 p = new Poly1305(key, 0);
        p.reset();
        p.update(MemorySegment.ofArray(msg), 0, length);
        final byte[] t = new byte[16];
        p.finish(key, 16, t, 0);
        return t;
    }

    /** The same message in random pieces, from native memory. */
    private static byte[] chunked(final byte[] key, final byte[] msg, final Random random) {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment m = arena.allocate(msg.length + 1);
            MemorySegment.copy(MemorySegment.ofArray(msg), 0, m, 1, msg.length);
            final Poly1305 p = new Poly1305(key, 0);
            p.update(m, 1, 5); // state from an earlier message must not leak
            p.reset();
            int at = 0;
            while (at < msg.length) {
                final int piece = Math.min(msg.length - at, random.nextInt(40));
                p.update(m, 1 + at, piece);
                at += piece;
            }
            final byte[] t = new byte[16];
            p.finish(key, 16, t, 0);
            return t;
        }
    }
}
