package io.jdet.internal.verbs;

import javax.crypto.Cipher;
import javax.crypto.spec.SecretKeySpec;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;

/**
 * A secret, keyed permutation of the 24-bit numbers: a ten-round balanced Feistel network over two 12-bit halves
 * whose round function is AES-128 under a key drawn from {@link SecureRandom} (the construction of NIST's FF1
 * format-preserving encryption, without its tweak). Applied to a counter it yields identifiers that never repeat
 * within 2^24 draws and that nobody without the key can predict from the ones they have seen.
 *
 * <p>Control path only: each call runs ten AES blocks (about a microsecond). Not thread-safe; its owner's lock
 * guards it.
 */
final class KeyPermutation {
    static final int BITS = 24;
    static final int MASK = (1 << BITS) - 1;
    private static final int HALF = BITS / 2;
    private static final int HALF_MASK = (1 << HALF) - 1;
    private static final int ROUNDS = 10;

    private final Cipher aes;
    private final byte[] block = new byte[16];
    private final byte[] out = new byte[16];

    /** A permutation under a fresh random key. */
    KeyPermutation(final SecureRandom random) {
        final byte[] key = new byte[16];
        random.nextBytes(key);
        try {
            aes = Cipher.getInstance("AES/ECB/NoPadding");
            aes.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"));
        } catch (final GeneralSecurityException e) {
            throw new IllegalStateException("AES is required by every Java SE platform", e);
        }
    }

    /** The image of {@code value} (its low 24 bits) under the permutation. */
    int apply(final int value) {
        int left = (value >>> HALF) & HALF_MASK;
        int right = value & HALF_MASK;
        for (int round = 0; round < ROUNDS; round++) {
            final int next = left ^ roundFunction(round, right);
            left = right;
            right = next;
        }
        return left << HALF | right;
    }

    private int roundFunction(final int round, final int half) {
        block[0] = (byte) round;
        block[1] = (byte) (half >>> 8);
        block[2] = (byte) half;
        try {
            aes.doFinal(block, 0, 16, out, 0);
        } catch (final GeneralSecurityException e) {
            throw new IllegalStateException("AES block encryption failed", e);
        }
        return ((out[0] & 0xFF) << 8 | (out[1] & 0xFF)) & HALF_MASK;
    }
}
