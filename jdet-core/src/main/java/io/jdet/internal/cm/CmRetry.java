package io.jdet.internal.cm;

/**
 * A connection manager message's retransmission schedule: first after the NIC's smallest retransmission timeout,
 * then doubling up to {@link #MAX_INTERVAL_NS}; and how long an answered exchange lingers to answer duplicates.
 */
final class CmRetry {
    /** The longest gap between two retransmissions. */
    static final long MAX_INTERVAL_NS = 100_000_000L;
    /** How long a finished exchange is remembered, to answer late duplicates the same way. */
    static final long LINGER_NS = 30_000_000_000L;

    private long nextNs;
    private long intervalNs;
    /** When the record may be forgotten, once finished. */
    long lingerUntilNs = Long.MAX_VALUE;

    CmRetry(final long firstIntervalNs, final long now) {
        intervalNs = Math.max(firstIntervalNs, 1_000_000L);
        nextNs = now + intervalNs;
    }

    /** Whether a retransmission is due now; if so, schedules the next one. */
    boolean due(final long now) {
        if (now - nextNs < 0) {
            return false;
        }
        intervalNs = Math.min(intervalNs * 2, MAX_INTERVAL_NS);
        nextNs = now + intervalNs;
        return true;
    }

    /** @return when the next retransmission is due (whether or not one will be sent) */
    long nextNs() {
        return nextNs;
    }

    void finish(final long now) {
        lingerUntilNs = now + LINGER_NS;
    }

    boolean expired(final long now) {
        return lingerUntilNs != Long.MAX_VALUE && now - lingerUntilNs >= 0;
    }
}
