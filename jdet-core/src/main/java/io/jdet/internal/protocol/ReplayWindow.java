package io.jdet.internal.protocol;

/**
 * The anti-replay window of one protected direction (RFC 6479, as WireGuard keeps it): the highest packet number
 * authenticated so far and a bitmap of the {@link #WINDOW} numbers below it. A number seen before, or older than the
 * window, is refused. {@link #fresh} is asked before the tag is checked (cheap refusal), {@link #commit} only once
 * the tag was right, so a forged frame cannot move the window. Allocation free.
 */
public final class ReplayWindow {
    private static final int WORDS = 16;
    private static final int MASK = WORDS - 1;
    /** Packet numbers accepted below the highest one: the bitmap's size minus one word of slack. */
    public static final long WINDOW = (WORDS - 1) * 64L;

    private final long[] bits = new long[WORDS];
    private long highest = -1;

    /**
     * Whether a packet number may still be accepted.
     *
     * @param pn a packet number from a frame
     * @return false if it was accepted before or is older than the window
     */
    public boolean fresh(final long pn) {
        if (pn < 0) {
            return false;
        }
        if (pn > highest) {
            return true;
        }
        if (highest - pn >= WINDOW) {
            return false;
        }
        return (bits[(int) (pn >>> 6) & MASK] & 1L << (pn & 63)) == 0;
    }

    /**
     * Records an authenticated packet number ({@link #fresh} said yes).
     *
     * @param pn the packet number
     */
    public void commit(final long pn) {
        if (pn > highest) {
            final long newWord = pn >>> 6;
            final long oldWord = highest < 0 ? newWord - WORDS : highest >>> 6;
            final long clear = Math.min(WORDS, newWord - oldWord);
            for (long i = 1; i <= clear; i++) {
                bits[(int) (oldWord + i) & MASK] = 0;
            }
            highest = pn;
        }
        bits[(int) (pn >>> 6) & MASK] |= 1L << (pn & 63);
    }
}
