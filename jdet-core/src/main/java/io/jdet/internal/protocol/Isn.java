package io.jdet.internal.protocol;

import java.security.SecureRandom;

/**
 * Unguessable starting points of a connection: initial sequence numbers, connection manager ids, and the message
 * id a stream's sends start at. All come from one {@link SecureRandom} (RFC 6528's goal: an off-path attacker
 * cannot predict them, and a new incarnation of a connection does not accept frames of an old one).
 *
 * <p>Control paths only (connect, accept, reset); never on the data path.
 */
public final class Isn {
    private static final SecureRandom RANDOM = new SecureRandom();
    /** An odd constant (the 32-bit golden ratio): multiplying by it permutes the 32-bit integers. */
    private static final int MIX = 0x9E37_79B9;

    private Isn() {
    }

    /**
     * A random 32-bit value other than 0.
     *
     * @return the value
     */
    public static int next() {
        int v;
        do {
            v = RANDOM.nextInt();
        } while (v == 0);
        return v;
    }

    /**
     * A queue pair's start sequence numbers: request stream in the low half, response stream in the high half
     * (the layout of the connection manager's ISN field, {@code CmWire.pack}).
     *
     * @return the pair
     */
    public static long pair() {
        return pack(next(), next());
    }

    /**
     * The first message id of a request stream, derived from its initial sequence number, so that both ends agree
     * on it without another field on the wire and it is as unpredictable as the sequence number. A bijection;
     * a stream started at 1 (a test's fixed sequence numbers) starts its message ids at 0, DET's.
     *
     * @param requestIsn the stream's first request sequence number
     * @return the message id of its first send or write with immediate
     */
    public static int firstMessageId(final int requestIsn) {
        return (requestIsn - 1) * MIX;
    }

    /**
     * Packs a queue pair's two start sequence numbers into one value (request low, response high), the layout of
     * the connection manager's ISN field and of {@code QueuePair.query}'s start sequence numbers.
     *
     * @param low  the request stream's number
     * @param high the response stream's number
     * @return both in one long
     */
    public static long pack(final int low, final int high) {
        return (low & 0xFFFF_FFFFL) | (long) high << 32;
    }

    /**
     * @param packed two numbers packed by {@link #pack}
     * @return the request stream's (low) number
     */
    public static int low(final long packed) {
        return (int) packed;
    }

    /**
     * @param packed two numbers packed by {@link #pack}
     * @return the response stream's (high) number
     */
    public static int high(final long packed) {
        return (int) (packed >>> 32);
    }
}
