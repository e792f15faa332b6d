package io.jdet.internal.cm;

import java.util.HashMap;
import java.util.Map;

/**
 * How many validated connection requests each source address has pending or remembered at a NIC, so that one
 * host (whatever ports it uses) cannot fill a listener's backlog or the NIC's memory
 * ({@code Configuration.cmPendingPerSource}). On UDP the source is the IPv4 address (the link handle without its
 * port); on other links, the link handle. Control path; engine lock held.
 */
final class CmSources {
    private final Map<Long, Integer> counts = new HashMap<>();
    private final boolean udp;
    private final int limit;

    CmSources(final boolean udp, final int limit) {
        this.udp = udp;
        this.limit = limit;
    }

    private long source(final long peer) {
        return udp ? peer >>> 16 : peer;
    }

    /** Whether the peer's source is below its limit. */
    boolean allows(final long peer) {
        return counts.getOrDefault(source(peer), 0) < limit;
    }

    void add(final long peer) {
        counts.merge(source(peer), 1, Integer::sum);
    }

    void remove(final long peer) {
        counts.computeIfPresent(source(peer), (k, v) -> v <= 1 ? null : v - 1);
    }
}
