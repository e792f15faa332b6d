package io.jdet.internal.verbs;

import org.junit.jupiter.api.Test;

import javax.crypto.Cipher;
import javax.crypto.spec.SecretKeySpec;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.BitSet;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The keyed permutation of handles, checked against its documented construction (a ten-round balanced Feistel
 * network over two 12-bit halves; round function: AES-128 of the block {round, half's high byte, half's low byte,
 * 13 zero bytes}, first two output bytes, 12 bits), and as a permutation: the reference network run backwards
 * undoes it, and distinct values keep distinct images.
 */
class KeyPermutationTest {

    /** A random source that hands out a chosen key, so that the permutation can be recomputed from outside. */
    private static final class FixedKey extends SecureRandom {
        private final byte[] key;

        FixedKey(final byte[] key) {
            this.key = key.clone();
        }

        @Override
        public void nextBytes(final byte[] bytes) {
            System.arraycopy(key, 0, bytes, 0, bytes.length);
        }
    }

    /** The construction as its javadoc states it, with its inverse. */
    private static final class Reference {
        private final Cipher aes;

        Reference(final byte[] key) throws GeneralSecurityException {
            aes = Cipher.getInstance("AES/ECB/NoPadding");
            aes.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"));
        }

        int f(final int round, final int half) throws GeneralSecurityException {
            final byte[] block = new byte[16];
            block[0] = (byte) round;
            block[1] = (byte) (half >> 8);
            block[2] = (byte) half;
            final byte[] out = aes.doFinal(block);
            return ((out[0] & 0xFF) << 8 | out[1] & 0xFF) & 0xFFF;
        }

        int forward(final int value) throws GeneralSecurityException {
            int left = value >> 12 & 0xFFF;
            int right = value & 0xFFF;
            for (int round = 0; round < 10; round++) {
                final int next = left ^ f(round, right);
                left = right;
                right = next;
            }
            return left << 12 | right;
        }

        int backward(final int image) throws GeneralSecurityException {
            int left = image >> 12 & 0xFFF;
            int right = image & 0xFFF;
            for (int round = 9; round >= 0; round--) {
                final int previous = right ^ f(round, left);
                right = left;
                left = previous;
            }
            return left << 12 | right;
        }
    }

    private static byte[] key(final long seed) {
        final byte[] key = new byte[16];
        final SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < key.length; i++) {
            key[i] = (byte) random.nextInt(256);
        }
        return key;
    }

    @Test
    void shouldMatchTheDocumentedFeistelNetworkAndBeUndoneByItsInverse() throws GeneralSecurityException {
        for (long seed = 1; seed <= 3; seed++) {
            final byte[] key = key(seed);
            final KeyPermutation permutation = new KeyPermutation(new FixedKey(key));
            final Reference reference = new Reference(key);
            final SplittableRandom values = new SplittableRandom(seed * 31);
            for (int i = 0; i < 2000; i++) {
                final int value = i < 4 ? new int[] {0, 1, 0xFFF, KeyPermutation.MASK}[i]
                    : values.nextInt(KeyPermutation.MASK + 1);
                final int image = permutation.apply(value);
                assertEquals(reference.forward(value), image, "image of 0x" + Integer.toHexString(value));
                assertEquals(value, reference.backward(image), "the inverse of 0x" + Integer.toHexString(value));
            }
        }
    }

    @Test
    void shouldIgnoreTheBitsAbove24AndStayWithin24Bits() {
        final KeyPermutation permutation = new KeyPermutation(new FixedKey(key(9)));
        final SplittableRandom values = new SplittableRandom(5);
        for (int i = 0; i < 1000; i++) {
            final int value = values.nextInt(KeyPermutation.MASK + 1);
            final int image = permutation.apply(value);
            assertEquals(image, image & KeyPermutation.MASK);
            assertEquals(image, permutation.apply(value | values.nextInt(1, 256) << 24));
        }
    }

    @Test
    void shouldMixBothHalvesIntoBothHalves() {
        final KeyPermutation permutation = new KeyPermutation(new FixedKey(key(11)));
        int highUnchanged = 0;
        int lowUnchanged = 0;
        for (int value = 0; value < 4096; value++) {
            final int a = permutation.apply(value);
            final int b = permutation.apply(value ^ 1);          // one bit of the low half
            final int c = permutation.apply(value ^ 1 << 23);    // one bit of the high half
            highUnchanged += (a >>> 12) == (b >>> 12) ? 1 : 0;
            lowUnchanged += (a & 0xFFF) == (c & 0xFFF) ? 1 : 0;
        }
        // A random function leaves a 12-bit half unchanged about once in 4096 tries.
        assertTrue(highUnchanged < 8, highUnchanged + " of 4096 low-bit flips left the high half alone");
        assertTrue(lowUnchanged < 8, lowUnchanged + " of 4096 high-bit flips left the low half alone");
    }

    @Test
    void shouldKeepDistinctImagesOverAWholeHalfAndDependOnTheKey() {
        final KeyPermutation first = new KeyPermutation(new FixedKey(key(1)));
        final KeyPermutation second = new KeyPermutation(new FixedKey(key(2)));
        final KeyPermutation again = new KeyPermutation(new FixedKey(key(1)));
        final BitSet seen = new BitSet(1 << 24);
        int same = 0;
        // Values that differ only in the high half: a network that dropped the high half would collide at once.
        for (int high = 0; high < 4096; high++) {
            final int value = high << 12 | 0x5A5;
            final int image = first.apply(value);
            assertTrue(!seen.get(image), "two values map to 0x" + Integer.toHexString(image));
            seen.set(image);
            assertEquals(image, again.apply(value), "the same key gives the same permutation");
            same += image == second.apply(value) ? 1 : 0;
        }
        assertTrue(same < 4, same + " of 4096 images equal under another key");
        assertNotEquals(Arrays.toString(key(1)), Arrays.toString(key(2)));
    }
}
