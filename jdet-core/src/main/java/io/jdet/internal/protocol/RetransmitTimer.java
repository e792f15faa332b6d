package io.jdet.internal.protocol;

/**
 * The request stream's retransmission timeout, as RFC 6298 computes it: a smoothed round-trip time and its mean
 * deviation from samples (α = 1/8, β = 1/4, RTO = SRTT + 4·RTTVAR), clamped to the NIC's bounds, doubled on every
 * timeout until the next sample. Not thread safe: the engine owns it.
 */
final class RetransmitTimer {
    private final long minNs;
    private final long maxNs;
    private long rtoNs;
    private long srttNs;
    private long rttvarNs;

    /**
     * @param minNs the smallest timeout, also the first one
     * @param maxNs the largest timeout, at least {@code minNs}
     */
    RetransmitTimer(final long minNs, final long maxNs) {
        this.minNs = minNs;
        this.maxNs = maxNs;
        reset();
    }

    /** Forgets every sample: the timeout is the smallest again. */
    void reset() {
        rtoNs = minNs;
        srttNs = 0;
        rttvarNs = 0;
    }

    /**
     * Takes a round-trip time measured on a request that was not retransmitted (Karn's rule is the caller's).
     *
     * @param sampleNs the round trip, in nanoseconds
     */
    void sample(final long sampleNs) {
        if (srttNs == 0) {
            srttNs = sampleNs;
            rttvarNs = sampleNs / 2;
        } else {
            final long delta = Math.abs(srttNs - sampleNs);
            rttvarNs = (3 * rttvarNs + delta) / 4;
            srttNs = (7 * srttNs + sampleNs) / 8;
        }
        rtoNs = Math.min(maxNs, Math.max(minNs, srttNs + 4 * rttvarNs));
    }

    /** A timeout expired: the next one is twice as long, up to the largest. */
    void backOff() {
        rtoNs = Math.min(rtoNs * 2, maxNs);
    }

    /** @return the current timeout, in nanoseconds */
    long rtoNs() {
        return rtoNs;
    }

    /** @return the smoothed round-trip time, 0 before the first sample */
    long srttNs() {
        return srttNs;
    }

    /** @return the round-trip time's mean deviation, 0 before the first sample */
    long rttvarNs() {
        return rttvarNs;
    }
}
