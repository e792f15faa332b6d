package io.jdet.internal.protocol;

/**
 * A token bucket: at most {@code ratePerSecond} events per second on average, in bursts of at most
 * {@code burst}. Bounds what a NIC sends in answer to traffic it cannot attribute (frames for unknown queue pairs,
 * challenge ACKs): a flood of spoofed frames then buys a fixed trickle of replies, never one reply per frame.
 * A rate of 0 allows nothing. Allocation free; engine lock held.
 */
public final class TokenBucket {
    private static final long NANOS_PER_SECOND = 1_000_000_000L;

    private final long ratePerSecond;
    private final long burst;
    /** Tokens held, in units of 1/{@code ratePerSecond} seconds scaled to nanoseconds: tokens * 1e9. */
    private long credit;
    private long lastNs;
    private boolean started;

    /**
     * @param ratePerSecond tokens added per second (0: none ever)
     * @param burst         the most tokens held (at least 1 when the rate is positive)
     */
    public TokenBucket(final long ratePerSecond, final long burst) {
        this.ratePerSecond = Math.max(0, ratePerSecond);
        this.burst = Math.max(ratePerSecond > 0 ? 1 : 0, burst);
    }

    /**
     * Takes one token if there is one.
     *
     * @param now the current time, {@link System#nanoTime()}
     * @return whether the event may happen
     */
    public boolean tryTake(final long now) {
        if (ratePerSecond == 0) {
            return false;
        }
        final long cap = burst * NANOS_PER_SECOND;
        if (!started) {
            started = true;
            credit = cap;
        } else {
            final long elapsed = Math.max(0, now - lastNs);
            // elapsed * rate, saturating: a bucket left alone for long is simply full.
            final long added = elapsed > cap / ratePerSecond ? cap : elapsed * ratePerSecond;
            credit = Math.min(cap, credit + added);
        }
        lastNs = now;
        if (credit < NANOS_PER_SECOND) {
            return false;
        }
        credit -= NANOS_PER_SECOND;
        return true;
    }
}
